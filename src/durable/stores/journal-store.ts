import type { JournalEntry, RunKind, RunStatus } from '../journal-entry.js';
import { isStartEntry, runStatusOf } from '../journal-entry.js';

/** One run as `list()` reports it, taken from its first and last entries. */
export interface RunListing {
  readonly runId: string;
  readonly kind: RunKind;
  readonly status: RunStatus;
  readonly startedAt: number;
}

/**
 * A run `list()` found but cannot read: its journal has a corrupt line, or was written by a
 * newer statecraft. Listed, so that one bad journal neither hides nor breaks the others.
 */
export interface UnreadableRun {
  readonly runId: string;
  readonly status: 'unreadable';
  readonly reason: 'corrupt' | 'newer-version';
  /** What is wrong and where: the file and line. */
  readonly problem: string;
  /** From the run's start entry, when that much could be read. */
  readonly kind?: RunKind;
  readonly startedAt?: number;
}

/**
 * Where durable runs keep their journals: one ordered, append-only list of entries per run.
 *
 * Every store follows the same rules (test/durable/stores/journal-store-contract.ts):
 * - run ids are checked (see `assertValidRunId`); a bad one is a `JournalError`;
 * - a run's first entry is its `start` entry, whose `runId` is the run's id; appending
 *   anything else to an unknown run fails with reason `unknown-run`, and a second `start`
 *   fails with reason `run-exists`, so one id can never be started twice;
 * - entries go in as JSON and come back as fresh copies: what a caller does to an object
 *   after appending it, or to what `read` returned, never changes the journal;
 * - appends to one run complete in the order they were called, even when not awaited;
 * - when `append` resolves the entry is kept (for `fileStore`: on disk, fsynced).
 */
export interface JournalStore {
  append(runId: string, entry: JournalEntry): Promise<void>;
  /** The run's entries in order, or `undefined` when there is no such run. */
  read(runId: string): Promise<readonly JournalEntry[] | undefined>;
  /**
   * Every run, oldest first (by start time, then id). A run whose journal cannot be read is
   * listed as `unreadable` (after the others when its start time is unknown); files that are
   * not journals of this store are skipped.
   */
  list(): Promise<readonly (RunListing | UnreadableRun)[]>;
  /** Forgets the run. Deleting a run that does not exist does nothing. */
  delete(runId: string): Promise<void>;
  /**
   * Optional: claims the right to write the run's journal, for one process at a time (a run
   * host calls it before it starts or resumes a run, and calls what it resolves with when the
   * run ends). Rejects with a JournalError `run-busy` while another live process holds it.
   * `fileStore` implements it with a lock file; a store one process owns need not.
   */
  acquire?(runId: string): Promise<() => Promise<void>>;
  /**
   * Optional: `true` when a failed append fails every append of the run issued after it (as
   * `restateStore`'s batches do: one request at a time, the lines behind a refused one
   * refused with it). The run host then issues appends without waiting for the one before, so
   * the store can send several in one request. Without it each append starts once the one
   * before succeeded, so a refused entry never leaves a later one in the journal after a hole.
   */
  readonly orderedAppends?: boolean;
  /**
   * Optional (approvals need it, SPEC H2): leaves a message for the run, from any process,
   * beside its journal rather than in it: the journal has one writer, the run's host, which
   * reads its messages (`posted`) and journals what it takes from them. Fails with
   * `unknown-run` for a run the store does not hold. Kept until the run is deleted.
   */
  post?(runId: string, message: JournalEntry): Promise<void>;
  /** The messages left for the run, oldest first; none: an empty array. */
  posted?(runId: string): Promise<readonly JournalEntry[]>;
  /**
   * Optional: milliseconds the run host waits for any one operation of this store before the
   * run fails with a JournalError `timed-out` (the run stays resumable). Default 30,000.
   */
  readonly timeoutMs?: number;
}

/** The listing of a run whose entries were already checked to open with a `start` entry. */
export function runListingOf(entries: readonly JournalEntry[]): RunListing {
  const start = entries[0];
  if (start === undefined || !isStartEntry(start)) {
    throw new TypeError('runListingOf: the entries do not open with a start entry');
  }
  return {
    runId: start.runId,
    kind: start.kind,
    status: runStatusOf(entries),
    startedAt: start.startedAt,
  };
}

/**
 * Oldest first, ties broken by id, so that two stores holding the same runs list them alike;
 * runs whose start time is unknown (unreadable) last.
 */
export function compareListings(
  a: RunListing | UnreadableRun,
  b: RunListing | UnreadableRun,
): number {
  const at = a.startedAt ?? Number.POSITIVE_INFINITY;
  const bt = b.startedAt ?? Number.POSITIVE_INFINITY;
  if (at !== bt) return at < bt ? -1 : 1;
  return a.runId < b.runId ? -1 : a.runId > b.runId ? 1 : 0;
}

/** True for a listing of a run whose journal could be read. */
export function isReadable(listing: RunListing | UnreadableRun): listing is RunListing {
  return listing.status !== 'unreadable';
}
