// What the crash child appends, shared with the test so that the test can check every entry
// it reads back byte for byte.
import type { JournalEntry } from '../../../src/durable/journal-entry.js';
import { startEntry } from './journal-store-contract.js';

export const CRASH_RUN_ID = 'crash-run';

export function crashStartEntry(): JournalEntry {
  return startEntry(CRASH_RUN_ID, { startedAt: 42 });
}

/**
 * Entry `seq` (from 1). Sizes vary from a few bytes to ~256 KB, so that kills land in writes
 * and fsyncs of every size. (Here a SIGKILL never tore a line: Linux finished each write into
 * the page cache. Torn lines, which power loss can leave, are tested with hand-made files.)
 */
export function crashStepEntry(seq: number): JournalEntry {
  const size = seq % 3 === 0 ? 256_000 + seq : (seq * 7919) % 4_000;
  return { type: 'step', seq, payload: String.fromCharCode(97 + (seq % 26)).repeat(size) };
}
