import { TranscriptError } from '../errors.js';
import type { Message, ToolCall } from '../messages.js';
import type { Transcript } from '../transcript.js';

// The two linkage rules every provider enforces in some form: a tool result answers a call
// that is still pending, and no call is left unanswered when the next assistant turn starts.
// Checked here, with the offending index named, so a broken transcript fails in our code
// instead of as a provider's 400.

export interface PendingCalls {
  /** Index of the assistant message that made the calls; -1 when there is none. */
  readonly assistantIndex: number;
  readonly calls: readonly ToolCall[];
}

const NONE: PendingCalls = { assistantIndex: -1, calls: [] };

/**
 * The calls of the latest assistant message not yet answered. Scans back only to that
 * message, so its cost is the size of the current turn, not of the transcript.
 */
export function pendingToolCalls(transcript: Transcript): PendingCalls {
  // An array, not a Set: a turn answers a handful of calls, and this runs on every append.
  const answered: string[] = [];
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript.at(i) as Message;
    if (message.role === 'tool') answered.push(message.toolCallId);
    else if (message.role === 'assistant') {
      if (message.toolCalls.length === 0) return NONE;
      const calls = message.toolCalls.filter((call) => !answered.includes(call.id));
      return calls.length ? { assistantIndex: i, calls } : NONE;
    }
  }
  return NONE;
}

/** Throws unless `message` may be appended at `index` (= transcript.length) of `transcript`. */
export function checkAppend(transcript: Transcript, message: Message, index: number): void {
  if (message.role === 'tool') {
    const pending = pendingToolCalls(transcript);
    if (!pending.calls.some((call) => call.id === message.toolCallId)) {
      throw new TranscriptError(
        index,
        `transcript[${index}]: tool result for call '${message.toolCallId}' (${message.name}) answers no pending call; ` +
          (pending.calls.length
            ? `pending: ${describeCalls(pending.calls)}`
            : 'no tool call is pending (already answered, or never made)'),
      );
    }
  } else if (message.role === 'assistant') {
    const pending = pendingToolCalls(transcript);
    if (pending.calls.length) {
      throw new TranscriptError(
        index,
        `transcript[${index}]: assistant message while calls of transcript[${pending.assistantIndex}] are unanswered: ` +
          `${describeCalls(pending.calls)}; answer each with a toolResult or toolCancelled mutation first`,
      );
    }
    const seen = new Set<string>();
    for (const call of message.toolCalls) {
      if (!call.id)
        throw new TranscriptError(
          index,
          `transcript[${index}]: tool call '${call.name}' has no id`,
        );
      if (seen.has(call.id)) {
        throw new TranscriptError(
          index,
          `transcript[${index}]: tool call id '${call.id}' is used twice in one message`,
        );
      }
      seen.add(call.id);
    }
  }
}

/** Throws unless the transcript is ready for a model call: every tool call answered. */
export function checkReadyForModel(transcript: Transcript): void {
  const pending = pendingToolCalls(transcript);
  if (pending.calls.length) {
    throw new TranscriptError(
      pending.assistantIndex,
      `transcript[${pending.assistantIndex}]: the model cannot be called while its tool calls are unanswered: ` +
        describeCalls(pending.calls),
    );
  }
}

function describeCalls(calls: readonly ToolCall[]): string {
  return calls.map((call) => `'${call.id}' (${call.name})`).join(', ');
}
