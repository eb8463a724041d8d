import type { Message } from '../messages.js';
import { Transcript } from '../transcript.js';
import {
  type CompiledTurnContext,
  convertToLlmRequest,
  type PromptContract,
} from './convert-to-llm-request.js';
import type { SelfRefSnapshot } from './experiences.js';
import type { ContextMutation } from './mutations.js';
import { reduceTurnContext } from './reduce-turn-context.js';

export interface CompileTurnInput {
  /** The transcript as the previous turn left it (a Transcript, or any messages to start from). */
  readonly transcript: Iterable<Message>;
  /** What happened since: this turn's mutations, applied in order. */
  readonly mutations?: readonly ContextMutation[];
  readonly snapshot?: SelfRefSnapshot | undefined;
  readonly contract?: PromptContract | undefined;
}

export interface CompiledTurn extends CompiledTurnContext {
  /** The mutations this turn applied: one entry of the run's mutation log. */
  readonly mutations: readonly ContextMutation[];
}

/**
 * The single entry point from a transcript and its pending mutations to the next provider
 * request (SPEC P4): reduce (stage 1), requiring every tool call answered (a model call
 * cannot start with one open), then convert (stage 2). Every machine calls this before every
 * model call; nothing else edits the transcript. Cost is proportional to the mutations, not
 * to the transcript's length.
 */
export function compileTurn(input: CompileTurnInput): CompiledTurn {
  const mutations = input.mutations ?? [];
  const reduced = reduceTurnContext(input.transcript, mutations, input.snapshot, {
    requireAnswered: true,
  });
  return { ...convertToLlmRequest(reduced, input.contract), mutations };
}

/** A run's mutations, one entry per compiled turn, in order. */
export type MutationLog = readonly (readonly ContextMutation[])[];

/**
 * Rebuilds a run's transcript and snapshot from where it started and its mutation log.
 * Turn boundaries matter (experience batches flush at the end of each turn), so the log is
 * replayed turn by turn, exactly as compileTurn applied it.
 */
export function replayMutationLog(
  start: Iterable<Message>,
  log: MutationLog,
  options: { readonly snapshot?: SelfRefSnapshot; readonly contract?: PromptContract } = {},
): { readonly transcript: Transcript; readonly snapshot: SelfRefSnapshot | undefined } {
  let transcript = Transcript.from(start);
  let snapshot = options.snapshot;
  for (const mutations of log) {
    ({ transcript, snapshot } = compileTurn({
      transcript,
      mutations,
      snapshot,
      contract: options.contract,
    }));
  }
  return { transcript, snapshot };
}
