import { StatecraftError, type StatecraftErrorOptions } from '../errors.js';

export interface JournalMismatch {
  /** Index of the journal entry whose request the replay did not reproduce. */
  readonly entry: number;
  /** requestHash of the request the journal holds. */
  readonly expectedHash: string;
  /** requestHash of the request the replayed run made instead. */
  readonly actualHash: string;
  /** What the request was, for the message, e.g. `model call` or `tool call 'add' (call_1)`. */
  readonly request?: string;
  /**
   * The options or input keys that differ from the journal's, when the journal kept enough to
   * tell (journals written before it did only have hashes).
   */
  readonly changes?: readonly JournalChange[];
  /** What to do instead, when it is not the usual "resume it with what started it". */
  readonly advice?: string;
}

/** One option or input key a resumed run has that differs from its journal's. */
export interface JournalChange {
  /** As a user writes it: `maxIterations`, `systemPrompt`, `tools`, `messages[0]`. */
  readonly option: string;
  /** `5 → 8`: the journal's value, then the run's, each cut short; absent for long values. */
  readonly values?: string;
}

const ADVICE =
  'The run was journaled by different code, options or tools; resume it with the ones ' +
  'that started it, or start a new run.';

/**
 * Replaying a journal made a request that differs from the one the journal recorded: the code,
 * the options or the tools changed since the run was journaled. Continuing would feed the
 * machine answers to questions it no longer asks, so the replay stops here instead of
 * diverging silently. `changes` names what changed when the journal could tell.
 */
export class JournalMismatchError extends StatecraftError {
  static override readonly code: string = 'JOURNAL_MISMATCH';
  readonly entry: number;
  readonly expectedHash: string;
  readonly actualHash: string;
  readonly request: string | undefined;
  readonly changes: readonly JournalChange[];
  readonly advice: string | undefined;

  constructor(mismatch: JournalMismatch, options?: StatecraftErrorOptions) {
    const what = mismatch.request ?? 'request';
    const changes = mismatch.changes ?? [];
    const head = `Journal entry ${mismatch.entry}: the replayed ${what} differs from the journaled one`;
    super(
      changes.length > 0
        ? `${head}: the journal was started with ${describeChanges(changes)}. ${
            mismatch.advice ?? 'Resume it with the ones that started it, or start a new run.'
          }`
        : `${head} (hash ${short(mismatch.actualHash)}, journaled ${short(mismatch.expectedHash)}). ${
            mismatch.advice ?? ADVICE
          }`,
      options,
    );
    this.entry = mismatch.entry;
    this.expectedHash = mismatch.expectedHash;
    this.actualHash = mismatch.actualHash;
    this.request = mismatch.request;
    this.changes = changes;
    this.advice = mismatch.advice;
  }
}

/** `a different \`maxIterations\` (5 → 8) and \`systemPrompt\``: the words after "with". */
export function describeChanges(changes: readonly JournalChange[]): string {
  const parts = changes.map(
    ({ option, values }) => `\`${option}\`${values === undefined ? '' : ` (${values})`}`,
  );
  const listed =
    parts.length <= 1 ? parts.join('') : `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
  return `a different ${listed}`;
}

function short(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash;
}
