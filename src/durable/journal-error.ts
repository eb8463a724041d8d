import { StatecraftError, type StatecraftErrorOptions } from '../errors.js';

/**
 * Why a journal could not be written or read. The run host branches on it: `run-exists` means
 * "attach to that run instead of starting it twice", `unknown-run` means "nothing to resume".
 */
export type JournalErrorReason =
  | 'invalid-run-id'
  | 'invalid-entry'
  | 'unknown-run'
  | 'run-exists'
  | 'corrupt'
  | 'newer-version'
  /** A chain's run resumed with a tool loop, or the other way round. */
  | 'wrong-kind'
  /** Another live process is running the run (see JournalStore.acquire). */
  | 'run-busy'
  /** A decision on a call the run never asked approval for (see approvals(store)). */
  | 'unknown-call'
  /** The store's disk (or quota) is full: free space, then resume the run. */
  | 'no-space'
  /** The store may not read or write its files: fix their permissions, then resume the run. */
  | 'no-permission'
  /** An entry is larger than the store keeps (its `maxEntryBytes`). */
  | 'too-large'
  /** The store did not answer in time (its `timeoutMs`, or the run's own deadline or abort). */
  | 'timed-out'
  /** Any other failure of the store's files or service (the `cause` says which). */
  | 'store-failed';

export interface JournalErrorOptions extends StatecraftErrorOptions {
  readonly runId?: string;
  /** The journal file, for stores that keep one. */
  readonly file?: string;
  /** 1-based line of the journal file the error is about. */
  readonly line?: number;
}

/** A run's journal could not be written or read; `reason` says why, the message says where. */
export class JournalError extends StatecraftError {
  static override readonly code: string = 'JOURNAL_ERROR';
  readonly reason: JournalErrorReason;
  readonly runId: string | undefined;
  readonly file: string | undefined;
  readonly line: number | undefined;

  constructor(reason: JournalErrorReason, message: string, options: JournalErrorOptions = {}) {
    super(message, options);
    this.reason = reason;
    this.runId = options.runId;
    this.file = options.file;
    this.line = options.line;
  }
}
