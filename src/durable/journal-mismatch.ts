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
}

/**
 * Replaying a journal made a request that differs from the one the journal recorded: the code,
 * the options or the tools changed since the run was journaled. Continuing would feed the
 * machine answers to questions it no longer asks, so the replay stops here instead of
 * diverging silently.
 */
export class JournalMismatchError extends StatecraftError {
  static override readonly code: string = 'JOURNAL_MISMATCH';
  readonly entry: number;
  readonly expectedHash: string;
  readonly actualHash: string;
  readonly request: string | undefined;

  constructor(mismatch: JournalMismatch, options?: StatecraftErrorOptions) {
    const what = mismatch.request ?? 'request';
    super(
      `Journal entry ${mismatch.entry}: the replayed ${what} differs from the journaled one ` +
        `(hash ${short(mismatch.actualHash)}, journaled ${short(mismatch.expectedHash)}). ` +
        'The run was journaled by different code, options or tools; resume it with the ones ' +
        'that started it, or start a new run.',
      options,
    );
    this.entry = mismatch.entry;
    this.expectedHash = mismatch.expectedHash;
    this.actualHash = mismatch.actualHash;
    this.request = mismatch.request;
  }
}

function short(hash: string): string {
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash;
}
