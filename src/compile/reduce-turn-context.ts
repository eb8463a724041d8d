import { TranscriptError } from '../errors.js';
import {
  assistantMessage,
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
} from './mutations.js';
import { checkAppend, pendingToolCalls } from './tool-linkage.js';

/** The transcript after this turn's mutations, with the self-reference snapshot it implies. */
export interface ReducedTurnContext {
  readonly transcript: Transcript;
  readonly snapshot: SelfRefSnapshot | undefined;
}

/**
 * Stage 1 of compiling a turn: applies `mutations` in order and returns a new transcript;
 * the input is never touched (messages are shared, not cloned: they are frozen).
 *
 * Experience mutations are batched and flushed before the next mutation of another kind
 * (and at the end), forgets first; the snapshot is refreshed only when a batch or a summary
 * with `remember` items was applied, otherwise the given one is returned as it is.
 * Tool linkage is checked on every append; a violation throws a TranscriptError naming the
 * mutation and the transcript index.
 */
export function reduceTurnContext(
  transcript: Iterable<Message>,
  mutations: readonly ContextMutation[],
  snapshot?: SelfRefSnapshot,
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
      return checkedAppend(transcript, assistantMessage(mutation.content, [], { truncated: true }));
    case 'toolResult':
      return checkedAppend(transcript, toolResultMessage(mutation.result));
    case 'toolCancelled': {
      const call = pendingToolCalls(transcript).calls.find((c) => c.id === mutation.toolCallId);
      const name = call?.name ?? 'unknown';
      const error = `Tool '${name}' was cancelled${mutation.reason ? `: ${mutation.reason}` : ''}.`;
      return checkedAppend(
        transcript,
        toolResultMessage({
          toolCallId: mutation.toolCallId,
          name,
          output: null,
          success: false,
          error,
        }),
      );
    }
    case 'userMessage':
      return transcript.append(userMessage(mutation.content));
    case 'systemNote':
      return transcript.append(systemMessage(mutation.content));
    case 'contextReplace':
      return validatedTranscript(mutation.messages);
    case 'contextSummary': {
      const first = transcript.first;
      const summary = userMessage(
        `<conversation_summary>\n${mutation.summary}\n</conversation_summary>`,
      );
      return first?.role === 'system'
        ? Transcript.from([first, summary])
        : Transcript.from([summary]);
    }
  }
}

function checkedAppend(transcript: Transcript, message: Message): Transcript {
  checkAppend(transcript, message, transcript.length);
  return transcript.append(message);
}

/** A transcript of `messages`, checked message by message for tool linkage. */
export function validatedTranscript(messages: Iterable<Message>): Transcript {
  let transcript = Transcript.empty;
  for (const message of messages) transcript = checkedAppend(transcript, message);
  return transcript;
}
