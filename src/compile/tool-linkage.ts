import { TranscriptError } from '../errors.js';
import type { Message, ToolCall } from '../messages.js';
import type { Transcript } from '../transcript.js';

// The linkage rules every provider enforces in some form (SPEC P2): a tool result answers a
// call that is still pending; no call is left unanswered when the next assistant turn starts;
// nothing but results comes between an assistant's calls and their results (OpenAI wants the
// `tool` messages right after the assistant message, Anthropic the `tool_result` blocks first
// in the next user turn, Gemini the function responses in the turn after the calls). Checked
// here, with the offending index named, so a broken transcript fails in our code instead of as
// a provider's 400. A note that comes after all of a step's results (the chain's tool-response
// instructions, stream batches, corrections, warnings) is in its place.

export interface PendingCalls {
  /** Index of the assistant message that made the calls; -1 when there is none. */
  readonly assistantIndex: number;
  readonly calls: readonly ToolCall[];
}

const NONE: PendingCalls = { assistantIndex: -1, calls: [] };

/** The current step, as the messages since the latest assistant message tell it. */
interface Step extends PendingCalls {
  /** Every call of that assistant message, answered or not. */
  readonly made: readonly ToolCall[];
  /**
   * Index of the first user or system message that sits between the calls and a result (one
   * follows it, or calls are still pending, so one must); -1 when there is none.
   */
  readonly misplaced: number;
}

/**
 * The step of each transcript version appended through `appendChecked`, derived from its
 * parent's in O(size of the step): scanning back on every append would make a run of user
 * messages (or a long history without assistant turns) quadratic to compile.
 */
const steps = new WeakMap<Transcript, Step>();

function currentStep(transcript: Transcript): Step {
  let step = steps.get(transcript);
  if (!step) {
    step = scanStep(transcript);
    steps.set(transcript, step);
  }
  return step;
}

/** The step of a transcript given as it is: a scan back to its latest assistant message. */
function scanStep(transcript: Transcript): Step {
  const answered = new Set<string>();
  // Seen from the end: a note is before a result when a result was seen already.
  let beforeResult = -1;
  let anyNote = -1;
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript.at(i) as Message;
    if (message.role === 'tool') answered.add(message.toolCallId);
    else if (message.role === 'assistant') {
      const calls = message.toolCalls.filter((call) => !answered.has(call.id));
      return {
        assistantIndex: calls.length ? i : -1,
        calls,
        made: message.toolCalls,
        misplaced: message.toolCalls.length === 0 ? -1 : calls.length ? anyNote : beforeResult,
      };
    } else {
      anyNote = i;
      if (answered.size) beforeResult = i;
    }
  }
  return { ...NONE, made: [], misplaced: -1 };
}

/**
 * The step once `message` is appended at `index`: what scanStep would find, without the scan.
 * Only for appends checkAppend allowed, which never misplace a note: a note while calls are
 * pending, and a result or assistant turn after a misplaced note, are refused.
 */
function stepAfter(step: Step, message: Message, index: number): Step {
  if (message.role === 'assistant') {
    const calls = message.toolCalls;
    return { assistantIndex: calls.length ? index : -1, calls, made: calls, misplaced: -1 };
  }
  if (message.role === 'tool') {
    const calls = step.calls.filter((call) => call.id !== message.toolCallId);
    return { ...step, assistantIndex: calls.length ? step.assistantIndex : -1, calls };
  }
  return step;
}

/** `transcript` with `message` appended, after checking it may be (see checkAppend). */
export function appendChecked(transcript: Transcript, message: Message): Transcript {
  const index = transcript.length;
  checkAppend(transcript, message, index);
  const next = transcript.append(message);
  steps.set(next, stepAfter(currentStep(transcript), message, index));
  return next;
}

/** The calls of the latest assistant message not yet answered. */
export function pendingToolCalls(transcript: Transcript): PendingCalls {
  const step = currentStep(transcript);
  return step.calls.length ? { assistantIndex: step.assistantIndex, calls: step.calls } : NONE;
}

/** The call `id` of the latest assistant message, answered or not; undefined when it made none. */
export function latestCall(transcript: Transcript, id: string): ToolCall | undefined {
  return currentStep(transcript).made.find((call) => call.id === id);
}

/**
 * Index of the assistant message that made call `id`, anywhere in the transcript; -1 when
 * none did. A full scan: only for the rare question of whether a call was ever made.
 */
export function indexOfCall(transcript: Transcript, id: string): number {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript.at(i) as Message;
    if (message.role === 'assistant' && message.toolCalls.some((call) => call.id === id)) return i;
  }
  return -1;
}

/** Throws unless `message` may be appended at `index` (= transcript.length) of `transcript`. */
export function checkAppend(transcript: Transcript, message: Message, index: number): void {
  const step = currentStep(transcript);
  if (message.role === 'tool') {
    if (!step.calls.some((call) => call.id === message.toolCallId)) {
      throw new TranscriptError(
        index,
        `transcript[${index}]: tool result for call '${message.toolCallId}' (${message.name}) answers no pending call; ` +
          (step.calls.length
            ? `pending: ${describeCalls(step.calls)}`
            : 'no tool call is pending (already answered, or never made)'),
      );
    }
    // Only a transcript given as it is (never checked on append) can hold such a message.
    checkNothingMisplaced(transcript, step);
  } else if (message.role === 'assistant') {
    if (step.calls.length) {
      throw new TranscriptError(
        index,
        `transcript[${index}]: assistant message while calls of transcript[${step.assistantIndex}] are unanswered: ` +
          `${describeCalls(step.calls)}; answer each with a toolResult or toolCancelled mutation first`,
      );
    }
    checkNothingMisplaced(transcript, step);
    checkCallIds(message.toolCalls, index);
  } else if (step.calls.length) {
    throw new TranscriptError(
      index,
      `transcript[${index}]: ${message.role} message between the tool calls of transcript[${step.assistantIndex}] and their results ` +
        `(unanswered: ${describeCalls(step.calls)}); providers reject it: answer each call first, then add the ${message.role} message`,
    );
  }
}

/** Throws unless the transcript is ready for a model call: every tool call answered, in order. */
export function checkReadyForModel(transcript: Transcript): void {
  const step = currentStep(transcript);
  if (step.calls.length) {
    throw new TranscriptError(
      step.assistantIndex,
      `transcript[${step.assistantIndex}]: the model cannot be called while its tool calls are unanswered: ` +
        describeCalls(step.calls),
    );
  }
  checkNothingMisplaced(transcript, step);
}

function checkNothingMisplaced(transcript: Transcript, step: Step): void {
  if (step.misplaced < 0) return;
  const role = (transcript.at(step.misplaced) as Message).role;
  throw new TranscriptError(
    step.misplaced,
    `transcript[${step.misplaced}]: ${role} message between an assistant's tool calls and their results; ` +
      'providers reject it: move it after the last result',
  );
}

function checkCallIds(calls: readonly ToolCall[], index: number): void {
  const seen = new Set<string>();
  for (const call of calls) {
    if (!call.id)
      throw new TranscriptError(index, `transcript[${index}]: tool call '${call.name}' has no id`);
    if (seen.has(call.id)) {
      throw new TranscriptError(
        index,
        `transcript[${index}]: tool call id '${call.id}' is used twice in one message`,
      );
    }
    seen.add(call.id);
  }
}

function describeCalls(calls: readonly ToolCall[]): string {
  return calls.map((call) => `'${call.id}' (${call.name})`).join(', ');
}
