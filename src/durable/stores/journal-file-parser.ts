import {
  isEndEntry,
  isJournalEntry,
  isStartEntry,
  JOURNAL_FORMAT_VERSION,
  type JournalEntry,
} from '../journal-entry.js';
import { JournalError } from '../journal-error.js';
import { RESERVED_KEY } from './entry-line.js';
import { type Claim, isClaim, isClaimLine, isReleaseLine } from './run-claim.js';

const NEWLINE = 0x0a;

export interface ParsedJournal {
  /** The run's entries, as they were appended: claim and release lines and stamps left out. */
  readonly entries: JournalEntry[];
  /**
   * Bytes of the file up to its last complete line. Less than the file's size when its last
   * line was torn by a crash or a failed write; the next append cuts the file back to it
   * first, so that the torn line never becomes a corrupt line in the middle.
   */
  readonly validLength: number;
  /** Who holds the run now, by the journal's claim lines (see run-claim.ts); none: free. */
  readonly holder: Claim | undefined;
  /** The number of the last claim that took the run: the next claim is this plus one. */
  readonly lastClaim: number;
}

/**
 * Parses the bytes of one run's JSONL journal file.
 *
 * An append writes `<json>\n` and fsyncs before it is confirmed, so a crash (or a write that
 * failed half way, a full disk) can leave only the last line incomplete: a last line with no
 * newline, or one that is not JSON, was never confirmed and is left out. A bad line followed
 * by a claim or release line is the same thing, left by a writer that died before another
 * took the run over or cleared it (those lines start with a newline to end such a line). Any other bad line cannot come
 * from a crash; it is an error naming the file and line, because replaying around a hole
 * would silently diverge.
 *
 * The walk over claim lines (run-claim.ts) decides who holds the run, the same way in every
 * process, and which entries count: an entry stamped with a claim that is no longer the
 * holder's was written by a superseded writer and is left out.
 */
export function parseJournalFile(bytes: Buffer, file: string, runId: string): ParsedJournal {
  const entries: JournalEntry[] = [];
  let validLength = 0;
  let lineNumber = 0;
  let holder: Claim | undefined;
  let lastClaim = 0;
  /** A bad line waiting to learn whether a claim line follows it (then it was torn). */
  let torn: { readonly line: number; readonly problem: string } | undefined;
  while (validLength < bytes.length) {
    lineNumber++;
    const end = bytes.indexOf(NEWLINE, validLength);
    if (end === -1) break; // torn: the crash came before the newline
    const isLastLine = end === bytes.length - 1;
    if (end === validLength) {
      validLength = end + 1; // the empty line before a claim line
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8', validLength, end));
    } catch {
      if (isLastLine) break; // torn, on a file system that showed the newline before the rest
      if (torn) throw corrupt(file, runId, torn.line, torn.problem);
      torn = { line: lineNumber, problem: 'it is not JSON' };
      validLength = end + 1;
      continue;
    }
    if (isClaimLine(value)) {
      torn = undefined; // the bad line before it was the dead writer's last
      if (value.over === lastClaim) {
        lastClaim += 1;
        holder = { n: lastClaim, pid: value.pid, host: value.host, id: value.id };
      }
      validLength = end + 1;
      continue;
    }
    if (isReleaseLine(value)) {
      torn = undefined; // a holder cleared by hand: its torn line too
      if (holder?.n === value.n) holder = undefined;
      validLength = end + 1;
      continue;
    }
    if (torn) throw corrupt(file, runId, torn.line, torn.problem);
    const entry = checkedEntry(value, entries.length === 0, file, runId, lineNumber);
    const stamp = entry[RESERVED_KEY];
    if (stamp !== undefined) delete (entry as Record<string, unknown>)[RESERVED_KEY];
    if (entries.length === 0 && isClaim(stamp)) {
      // The creator of a run holds it from its start entry.
      lastClaim = stamp.n;
      holder = stamp;
    } else if (typeof stamp === 'number' && stamp !== holder?.n) {
      // Written under a claim another writer took over, or after it was released: refused.
      validLength = end + 1;
      continue;
    }
    entries.push(entry);
    // A run's end lets it go: nothing more is written to it.
    if (typeof stamp !== 'undefined' && isEndEntry(entry)) holder = undefined;
    validLength = end + 1;
  }
  if (torn) {
    // A bad line with only good lines after it: not torn by a crash.
    throw corrupt(file, runId, torn.line, torn.problem);
  }
  return { entries, validLength, holder, lastClaim };
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
