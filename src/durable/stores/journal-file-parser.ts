import {
  isJournalEntry,
  isStartEntry,
  JOURNAL_FORMAT_VERSION,
  type JournalEntry,
} from '../journal-entry.js';
import { JournalError } from '../journal-error.js';

const NEWLINE = 0x0a;

export interface ParsedJournal {
  readonly entries: JournalEntry[];
  /**
   * Bytes of the file that hold `entries`. Less than the file's size when its last line was
   * torn by a crash mid-write; the next append cuts the file back to this length first, so
   * that the torn line does not become a corrupt line in the middle.
   */
  readonly validLength: number;
}

/**
 * Parses the bytes of one run's JSONL journal file.
 *
 * An append writes `<json>\n` and fsyncs before it is confirmed, so a crash can leave only
 * the last line incomplete: a last line with no newline, or one that is not JSON, was never
 * confirmed and is left out. Any other bad line cannot come from a crash; it is an error
 * naming the file and line, because replaying around a hole would silently diverge.
 */
export function parseJournalFile(bytes: Buffer, file: string, runId: string): ParsedJournal {
  const entries: JournalEntry[] = [];
  let validLength = 0;
  let lineNumber = 0;
  while (validLength < bytes.length) {
    lineNumber++;
    const end = bytes.indexOf(NEWLINE, validLength);
    if (end === -1) break; // torn: the crash came before the newline
    const text = bytes.toString('utf8', validLength, end);
    const isLastLine = end === bytes.length - 1;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      if (isLastLine) break; // torn, on a file system that showed the newline before the rest
      throw corrupt(file, runId, lineNumber, 'it is not JSON');
    }
    entries.push(checkedEntry(value, entries.length === 0, file, runId, lineNumber));
    validLength = end + 1;
  }
  return { entries, validLength };
}

function checkedEntry(
  value: unknown,
  isFirst: boolean,
  file: string,
  runId: string,
  lineNumber: number,
): JournalEntry {
  if (!isJournalEntry(value)) {
    throw corrupt(file, runId, lineNumber, 'it is not an object with a string "type"');
  }
  if (!isFirst) {
    if (value.type === 'start') throw corrupt(file, runId, lineNumber, 'a second "start" entry');
    return value;
  }
  // Checked before the rest of the start entry: a newer format may shape it differently.
  if (value.type === 'start' && typeof value.version === 'number') {
    if (value.version > JOURNAL_FORMAT_VERSION) {
      throw new JournalError(
        'newer-version',
        `${file} was written by a newer version of statecraft (journal format ${value.version}; this version reads up to ${JOURNAL_FORMAT_VERSION}): upgrade statecraft to resume run "${runId}"`,
        { runId, file, line: lineNumber },
      );
    }
  }
  if (!isStartEntry(value))
    throw corrupt(file, runId, lineNumber, 'it is not a valid "start" entry');
  if (value.runId !== runId) {
    throw corrupt(file, runId, lineNumber, `it starts run "${value.runId}", not "${runId}"`);
  }
  return value;
}

function corrupt(file: string, runId: string, lineNumber: number, problem: string): JournalError {
  return new JournalError('corrupt', `Corrupt journal ${file}, line ${lineNumber}: ${problem}`, {
    runId,
    file,
    line: lineNumber,
  });
}
