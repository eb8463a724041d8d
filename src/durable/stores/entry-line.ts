import {
  isJournalEntry,
  isStartEntry,
  JOURNAL_FORMAT_VERSION,
  type JournalEntry,
} from '../journal-entry.js';
import { JournalError } from '../journal-error.js';
import { assertValidRunId } from './run-id.js';

/**
 * The largest entry a store keeps by default: 64 MiB of JSON. Far above any model response or
 * tool result a run should journal, and far below what a JSON line can be read back as (V8
 * strings stop at 512 MiB), so a journal stays readable.
 */
export const DEFAULT_MAX_ENTRY_BYTES = 64 * 1024 * 1024;

/**
 * Keys and types a store keeps for itself: the file store marks each line with the claim of
 * the writer that wrote it (`$claim`) and writes claim and release lines (`$claim`,
 * `$release`). An entry may not use them, so that no entry can pass for one.
 */
export const RESERVED_KEY = '$claim';

/**
 * Checks an entry about to be appended to `runId` and returns it as one line of JSON (no
 * newline). Both stores keep this text, never the caller's object, which is what makes an
 * append a copy, and what makes the memory store refuse exactly what a file could not hold.
 * An entry whose JSON is over `maxBytes` is refused (`too-large`) before anything is written.
 */
export function entryLine(
  runId: string,
  entry: JournalEntry,
  maxBytes: number = DEFAULT_MAX_ENTRY_BYTES,
): string {
  assertValidRunId(runId);
  if (!isJournalEntry(entry)) {
    throw new JournalError(
      'invalid-entry',
      `Cannot append to run "${runId}": an entry is an object with a string "type"`,
      { runId },
    );
  }
  if (entry.type.startsWith('$') || Object.hasOwn(entry, RESERVED_KEY)) {
    throw new JournalError(
      'invalid-entry',
      `Cannot append a "${entry.type}" entry to run "${runId}": entry types starting with "$" and the key "${RESERVED_KEY}" are the store's own`,
      { runId },
    );
  }
  if (entry.type === 'start') assertStartsThisRun(runId, entry);
  let line: string;
  try {
    line = JSON.stringify(entry);
  } catch (cause) {
    // V8 throws a RangeError for a string it cannot make: JSON past 512 MiB.
    if (cause instanceof RangeError && /string length/i.test(cause.message)) {
      throw tooLarge(runId, entry.type, 'more than 512 MiB', maxBytes, cause);
    }
    throw new JournalError(
      'invalid-entry',
      `Cannot append a "${entry.type}" entry to run "${runId}": it is not JSON (${String(cause)})`,
      { runId, cause },
    );
  }
  // Characters first: a line is at least as many bytes, so most lines skip the byte count.
  if (line.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(line);
    if (bytes > maxBytes) throw tooLarge(runId, entry.type, `${bytes} bytes`, maxBytes);
  }
  return line;
}

function tooLarge(
  runId: string,
  type: string,
  size: string,
  maxBytes: number,
  cause?: unknown,
): JournalError {
  return new JournalError(
    'too-large',
    `Cannot append a "${type}" entry to run "${runId}": its JSON is ${size}, over the store's maxEntryBytes (${maxBytes}). Raise maxEntryBytes, or keep large outputs out of the run (return a reference to them from the tool)`,
    { runId, ...(cause !== undefined && { cause }) },
  );
}

function assertStartsThisRun(runId: string, entry: JournalEntry): void {
  const problem = !isStartEntry(entry)
    ? 'it needs version, runId, kind ("chain" or "tool-loop") and a finite startedAt'
    : entry.runId !== runId
      ? `its runId is "${entry.runId}"`
      : entry.version !== JOURNAL_FORMAT_VERSION
        ? `its version is ${entry.version}; this statecraft writes version ${JOURNAL_FORMAT_VERSION}`
        : undefined;
  if (problem !== undefined) {
    throw new JournalError('invalid-entry', `Invalid start entry for run "${runId}": ${problem}`, {
      runId,
    });
  }
}

export function unknownRunError(runId: string, type: string): JournalError {
  return new JournalError(
    'unknown-run',
    `Cannot append a "${type}" entry to run "${runId}": no such run (a run's first entry is its "start" entry)`,
    { runId },
  );
}

export function runExistsError(runId: string): JournalError {
  return new JournalError(
    'run-exists',
    `Run "${runId}" already exists: attach to it or resume it instead of starting it again`,
    { runId },
  );
}
