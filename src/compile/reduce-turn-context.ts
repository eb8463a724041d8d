import { TranscriptError } from '../errors.js';
import {
  assistantMessage,
  failedToolResult,
  type Message,
  systemMessage,
  toolResultMessage,
  userMessage,
} from '../messages.js';
import { Transcript } from '../transcript.js';
import { applyExperienceBatch, type SelfRefSnapshot } from './experiences.js';
import {
  type ContextMutation,
  type ExperienceMutation,
  isExperienceMutation,
  type ToolCancelledMutation,
} from './mutations.js';
import { appendChecked, checkReadyForModel, indexOfCall, latestCall } from './tool-linkage.js';

/** The transcript after this turn's mutations, with the self-reference snapshot it implies. */
export interface ReducedTurnContext {
  readonly transcript: Transcript;
  readonly snapshot: SelfRefSnapshot | undefined;
}

export interface ReduceOptions {
  /**
   * Also report calls left unanswered at the end of the mutations, as `compileTurn` does
   * (a TranscriptError naming the assistant message). Off by default: stage 1 alone is how a
   * step in progress is read (our machines record the model's calls as soon as it answers,
   * and their results only when the tools have run; a failed run's transcript is reduced to
   * find the calls it must close), and such a transcript is open by design.
   */
  readonly requireAnswered?: boolean;
}

/**
 * Stage 1 of compiling a turn: applies `mutations` in order and returns a new transcript;
 * the input is never touched (messages are shared, not cloned: they are frozen).
 *
 * Experience mutations are batched and flushed before the next mutation of another kind
 * (and at the end), forgets first; the snapshot is refreshed only when a batch or a summary
 * with `remember` items was applied, otherwise the given one is returned as it is.
 * Tool linkage is checked on every append (a result answers a pending call; no assistant turn,
 * user message or system note while calls are pending); a violation throws a TranscriptError
 * naming the mutation and the transcript index. Calls still open at the end are reported only
 * with `requireAnswered` (see ReduceOptions).
 */
export function reduceTurnContext(
  transcript: Iterable<Message>,
  mutations: readonly ContextMutation[],
  snapshot?: SelfRefSnapshot,
  options: ReduceOptions = {},
): ReducedTurnContext {
  let current = Transcript.from(transcript);
  let currentSnapshot = snapshot;
  let batch: ExperienceMutation[] = [];

  for (const [i, mutation] of mutations.entries()) {
    if (isExperienceMutation(mutation)) {
      batch.push(mutation);
      continue;
    }
    if (batch.length) {
      currentSnapshot = applyExperienceBatch(currentSnapshot, batch, current);
      batch = [];
    }
    try {
      current = applyMutation(current, mutation);
    } catch (error) {
      if (error instanceof TranscriptError) {
        throw new TranscriptError(
          error.index,
          `mutations[${i}] (${mutation.type}): ${error.message}`,
          {
            cause: error,
          },
        );
      }
      throw error;
    }
    if (mutation.type === 'contextSummary' && mutation.remember?.length) {
      currentSnapshot = applyExperienceBatch(
        currentSnapshot,
        mutation.remember.map((text) => ({ type: 'experienceRemember', text })),
        current,
      );
    }
  }
  if (batch.length) currentSnapshot = applyExperienceBatch(currentSnapshot, batch, current);
  if (options.requireAnswered) checkReadyForModel(current);
  return { transcript: current, snapshot: currentSnapshot };
}

function applyMutation(
  transcript: Transcript,
  mutation: Exclude<ContextMutation, ExperienceMutation>,
): Transcript {
  switch (mutation.type) {
    case 'assistantMessage':
      return checkedAppend(transcript, assistantMessage(mutation.content, mutation.toolCalls));
    case 'assistantTruncated':
      // The reason stays on the message; the adapters turn it into the seed's marker.
      return checkedAppend(
        transcript,
        assistantMessage(mutation.content, [], {
          truncated: true,
          ...(mutation.reason !== undefined && { truncatedReason: mutation.reason }),
        }),
      );
    case 'toolResult':
      return checkedAppend(transcript, toolResultMessage(mutation.result));
    case 'toolCancelled':
      return appendCancellation(transcript, mutation);
    case 'userMessage':
      return checkedAppend(transcript, userMessage(mutation.content, mutation.attachments));
    case 'systemNote':
      return checkedAppend(transcript, systemMessage(mutation.content));
    case 'contextReplace':
      return validatedTranscript(mutation.messages);
    case 'contextSummary': {
      const first = transcript.first;
      const kept = first?.role === 'system';
      // A system summary with no system message before it would become the system prompt,
      // which an explicit one replaces: it is wrapped as the user summary message instead.
      const summary =
        typeof mutation.summary === 'string'
          ? summaryMessage(mutation.summary)
          : mutation.summary.role === 'system' && !kept
            ? summaryMessage(mutation.summary.content)
            : mutation.summary;
      // Checked like any append: a summary that is a tool result answers nothing.
      return checkedAppend(kept ? Transcript.from([first]) : Transcript.empty, summary);
    }
  }
}

/**
 * The failed result of a call that will not run. A call the transcript does not hold yet is
 * added first, as the seed does, so that the result answers a call; one the latest assistant
 * message made is answered where it is (twice is an error, as for any result).
 */
function appendCancellation(transcript: Transcript, mutation: ToolCancelledMutation): Transcript {
  const made = latestCall(transcript, mutation.toolCallId);
  const name = made?.name ?? mutation.toolName;
  if (!made) {
    // Adding a call an earlier step made would put one id in the transcript twice.
    const earlier = indexOfCall(transcript, mutation.toolCallId);
    if (earlier >= 0) {
      throw new TranscriptError(
        transcript.length,
        `transcript[${transcript.length}]: cannot cancel call '${mutation.toolCallId}' (${name}): ` +
          `transcript[${earlier}] made it, in an earlier step`,
      );
    }
  }
  const withCall = made
    ? transcript
    : checkedAppend(
        transcript,
        assistantMessage('', [{ id: mutation.toolCallId, name, arguments: {} }]),
      );
  const error = `Tool '${name}' was cancelled${mutation.reason ? `: ${mutation.reason}` : ''}.`;
  return checkedAppend(
    withCall,
    toolResultMessage(failedToolResult({ id: mutation.toolCallId, name }, error)),
  );
}

/** A summary as the seed words it: a user message holding a `<conversation_summary>` block. */
function summaryMessage(text: string): Message {
  return userMessage(`<conversation_summary>\n${text}\n</conversation_summary>`);
}

function checkedAppend(transcript: Transcript, message: Message): Transcript {
  return appendChecked(transcript, message);
}

/** A transcript of `messages`, checked message by message for tool linkage. */
export function validatedTranscript(messages: Iterable<Message>): Transcript {
  let transcript = Transcript.empty;
  for (const message of messages) transcript = checkedAppend(transcript, message);
  return transcript;
}
