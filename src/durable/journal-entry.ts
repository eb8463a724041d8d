/**
 * The envelope of a durable run's journal: what every entry has, the entry that opens a run
 * and the one that may close it. Everything else a run journals (intents, effect answers,
 * aborts, timer firings) is opaque here: the stores keep it in order and never look inside,
 * so the run host can grow new entry types without touching them.
 */

/**
 * Version of the journal format this code writes. A journal whose `start` entry carries a
 * higher number was written by a newer statecraft and is refused rather than misread.
 */
export const JOURNAL_FORMAT_VERSION = 1;

export type RunKind = 'chain' | 'tool-loop';
export type RunStatus = 'running' | 'succeeded' | 'failed';

/** Any journal entry: a JSON object with a `type`. */
export interface JournalEntry {
  readonly type: string;
  readonly [key: string]: unknown;
}

/** The first entry of every run: what it is, when it started and what it was given. */
export interface StartEntry extends JournalEntry {
  readonly type: 'start';
  readonly version: number;
  readonly runId: string;
  readonly kind: RunKind;
  /** Epoch milliseconds; deadlines are computed from it, so a resumed run keeps its clock. */
  readonly startedAt: number;
  readonly input: unknown;
  /**
   * The base64 bytes of the input's attachments by sha256, which `input` (and later entries)
   * refer to with `attachment` tags; absent when the input has none.
   */
  readonly attachments?: Readonly<Record<string, string>>;
}

/** The last entry of a finished run. A run without one is still running (or crashed). */
export interface EndEntry extends JournalEntry {
  readonly type: 'end';
  readonly status: 'succeeded' | 'failed';
}

const RUN_KINDS: readonly string[] = ['chain', 'tool-loop'] satisfies RunKind[];
const END_STATUSES: readonly string[] = ['succeeded', 'failed'] satisfies EndEntry['status'][];

/** True for a value with the shape of any entry: a plain JSON object whose `type` is a string. */
export function isJournalEntry(value: unknown): value is JournalEntry {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    typeof (value as { type?: unknown }).type === 'string'
  );
}

/**
 * True for a well-formed `start` entry. The version is only required to be a positive
 * integer: whether this code can read it is a separate question (see JOURNAL_FORMAT_VERSION).
 */
export function isStartEntry(entry: JournalEntry): entry is StartEntry {
  return (
    entry.type === 'start' &&
    Number.isInteger(entry.version) &&
    (entry.version as number) > 0 &&
    typeof entry.runId === 'string' &&
    typeof entry.kind === 'string' &&
    RUN_KINDS.includes(entry.kind) &&
    typeof entry.startedAt === 'number' &&
    Number.isFinite(entry.startedAt)
  );
}

export function isEndEntry(entry: JournalEntry): entry is EndEntry {
  return (
    entry.type === 'end' && typeof entry.status === 'string' && END_STATUSES.includes(entry.status)
  );
}

/** A run's status from its entries: the `end` entry's status if it has one, else running. */
export function runStatusOf(entries: readonly JournalEntry[]): RunStatus {
  const last = entries.at(-1);
  return last !== undefined && isEndEntry(last) ? last.status : 'running';
}
