import {
  isJournalEntry,
  isStartEntry,
  JOURNAL_FORMAT_VERSION,
  type JournalEntry,
} from '../journal-entry.js';
import { JournalError } from '../journal-error.js';
import { assertValidRunId } from './run-id.js';

/**
 * Checks an entry about to be appended to `runId` and returns it as one line of JSON (no
 * newline). Both stores keep this text, never the caller's object, which is what makes an
 * append a copy, and what makes the memory store refuse exactly what a file could not hold.
 */
export function entryLine(runId: string, entry: JournalEntry): string {
  assertValidRunId(runId);
  if (!isJournalEntry(entry)) {
    throw new JournalError(
      'invalid-entry',
      `Cannot append to run "${runId}": an entry is an object with a string "type"`,
      { runId },
    );
  }
  if (entry.type === 'start') assertStartsThisRun(runId, entry);
  let line: string;
  try {
    line = JSON.stringify(entry);
  } catch (cause) {
    throw new JournalError(
      'invalid-entry',
      `Cannot append a "${entry.type}" entry to run "${runId}": it is not JSON (${String(cause)})`,
      { runId, cause },
    );
  }
  return line;
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
