import { appendFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { fileStore, JournalError, type JournalErrorReason, type JournalStore } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import type { Fault } from '../durable/faulty-store.js';
import { describe, type Fail } from './invariants.js';

// Crash mode's fault dimension (crash.ts): besides a plain crash, a case may have its store
// fail, its resumer find a line torn by a process killed while taking the run over, or its
// crashed run resumed by several processes at once. Those cases run on a real fileStore in a
// folder of their own, so the real claim, tear and index code is what is exercised.

/** What a store does at one append (test/durable/faulty-store.ts), as a fuzz case names it. */
export type StoreFaultKind = 'ENOSPC' | 'EACCES' | 'throw' | 'stall';

export type CrashFault =
  /**
   * The run's store fails at one append (`at`, in thousandths of the uncrashed journal's
   * length, like `crash`) and every one after it until the fault is cleared; ENOSPC and
   * EACCES may first write half the line into the journal file (`tear`). The fault takes
   * the place of the crash: the run that ends with it is the one resumed.
   */
  | {
      readonly kind: 'store';
      readonly error: StoreFaultKind;
      readonly at: number;
      readonly tear: boolean;
    }
  /**
   * A process died while it wrote the line after the crash: a claim taking the run over, or
   * the run's next entry. `cut`: how much of the line it wrote, in thousandths.
   */
  | { readonly kind: 'takeover'; readonly torn: 'claim' | 'entry'; readonly cut: number }
  /** 2–4 processes resume the crashed run at once, each through its own fileStore. */
  | { readonly kind: 'race'; readonly racers: number };

const thousandths = fc.integer({ min: 0, max: 1000 });

/** Mostly none, so most cases stay the plain crashes they were (and shrink to one). */
export const faultArb: fc.Arbitrary<CrashFault | undefined> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('store' as const),
      error: fc.constantFrom<StoreFaultKind>('ENOSPC', 'EACCES', 'throw', 'stall'),
      at: thousandths,
      tear: fc.boolean(),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('takeover' as const),
      torn: fc.constantFrom<'claim' | 'entry'>('claim', 'entry'),
      cut: thousandths,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('race' as const),
      racers: fc.integer({ min: 2, max: 4 }),
    }),
  },
);

/**
 * The store's own timeoutMs in a stalled case: a stall then ends the run well within the fuzz
 * bound, and a healthy append (an fsync on a loaded machine) still fits in it.
 */
export const STALL_TIMEOUT_MS = 500;

/** The append (1-based) a store fault strikes: 1 (the start entry) to the journal's last. */
export function faultAt(at: number, length: number): number {
  return Math.min(Math.max(length, 1), 1 + Math.floor((at / 1000) * length));
}

/** The JournalError reason a store fault must end its run with. */
export function reasonOf(error: StoreFaultKind): JournalErrorReason {
  switch (error) {
    case 'ENOSPC':
      return 'no-space';
    case 'EACCES':
      return 'no-permission';
    case 'stall':
      return 'timed-out';
    default:
      return 'store-failed';
  }
}

/** The fault as faultyStore injects it; a tear goes into the run's journal file. */
export function injected(fault: Extract<CrashFault, { kind: 'store' }>, file: string): Fault {
  if (fault.error === 'ENOSPC' || fault.error === 'EACCES') {
    return { kind: fault.error, ...(fault.tear && { tear: file }) };
  }
  return { kind: fault.error };
}

export function describeFault(fault: CrashFault): string {
  switch (fault.kind) {
    case 'store':
      return `${fault.error}${fault.tear && fault.error !== 'stall' && fault.error !== 'throw' ? ' tearing a line' : ''}`;
    case 'takeover':
      return `a torn ${fault.torn} line`;
    default:
      return `${fault.racers} racing resumers`;
  }
}

export function isRunBusy(error: unknown): boolean {
  return JournalError.isInstance(error) && error.reason === 'run-busy';
}

/** A folder of its own for one case's journals. */
export function caseFolder(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'statecraft-fuzz-'));
}

export async function removeFolder(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

/** The journal file of `runId` in `dir`. */
export function journalFile(dir: string, runId: string): string {
  return path.join(dir, `${runId}.jsonl`);
}

/**
 * What a process that died after writing `prefix` left in `dir` (written through a fileStore,
 * as that process did: its start entry holds the run for it, and it never let go), and, for a
 * kill during a takeover, part of the line it or another process was writing when it died.
 * Returns what that torn line was, for the outcome summary.
 */
export async function crashedFolder(
  dir: string,
  runId: string,
  prefix: readonly JournalEntry[],
  next: JournalEntry | undefined,
  fault: CrashFault | undefined,
): Promise<string | undefined> {
  const writer = fileStore(dir);
  for (const entry of prefix) await writer.append(runId, entry);
  if (fault?.kind !== 'takeover') return undefined;
  // An ended run is never claimed, and nothing follows its end entry: nothing to tear.
  if (prefix.at(-1)?.type === 'end') return undefined;
  let line: string;
  let whole: number;
  if (fault.torn === 'claim') {
    // A second process claiming the run over its creator (claim 1), as run-claim.ts writes
    // it. Its pid is this process's, with a claim no live run here holds: a dead holder.
    const claim = { type: '$claim', over: 1, pid: process.pid, host: hostname(), id: 'died' };
    line = `\n${JSON.stringify(claim)}\n`;
    // Up to all but its last newline: the next line written completes a claim cut there.
    whole = line.length - 1;
  } else {
    if (!next) return undefined;
    // The run's next entry, stamped with its writer's claim. Never whole (at most all but its
    // closing brace): an entry completed by the next line would change what the resumed run
    // replays, which this case's scripts could not know in advance.
    line = JSON.stringify({ ...next, $claim: 1 });
    whole = line.length - 1;
  }
  const cut = Math.min(whole, 1 + Math.floor((fault.cut / 1000) * whole));
  await appendFile(journalFile(dir, runId), line.slice(0, cut));
  const what = fault.torn === 'claim' ? 'claim' : `'${next?.type}' entry`;
  return `a ${what} line torn after ${cut} of ${line.length} characters`;
}

/**
 * Invariants 8 and 9 on a case's folder: a fresh fileStore reads the run's journal and lists
 * it (not as unreadable), as running or with the status its end entry says; and the folder
 * holds nothing but the run's journal, its inbox and the index (no lock, no temporary file).
 * Returns the entries read (undefined: no such run, or unreadable).
 */
export async function checkFolder(
  dir: string,
  runId: string,
  label: string,
  fail: Fail,
): Promise<readonly JournalEntry[] | undefined> {
  const store: JournalStore = fileStore(dir);
  let entries: readonly JournalEntry[] | undefined;
  try {
    entries = await store.read(runId);
  } catch (error) {
    fail('journal-valid', `${label}a fresh fileStore cannot read the journal: ${describe(error)}`);
  }
  try {
    const listed = (await store.list()).filter((run) => run.runId === runId);
    const status =
      entries?.at(-1)?.type === 'end' ? (entries.at(-1) as { status?: string }).status : 'running';
    if (entries === undefined && listed.length > 0 && listed[0]?.status !== 'unreadable') {
      fail(
        'journal-valid',
        `${label}list() lists a run read() does not know: ${JSON.stringify(listed)}`,
      );
    } else if (entries !== undefined && listed.length !== 1) {
      fail('journal-valid', `${label}list() lists the run ${listed.length} times`);
    } else if (listed[0]?.status === 'unreadable') {
      fail(
        'journal-valid',
        `${label}list() lists the run as unreadable: ${JSON.stringify(listed[0])}`,
      );
    } else if (entries !== undefined && listed[0]?.status !== status) {
      fail('journal-valid', `${label}list() says '${listed[0]?.status}', the journal '${status}'`);
    }
  } catch (error) {
    fail('journal-valid', `${label}list() failed: ${describe(error)}`);
  }
  const allowed = new Set([`${runId}.jsonl`, `${runId}.inbox`, '.statecraft-index.jsonl']);
  const strays = (await readdir(dir)).filter((name) => !allowed.has(name));
  if (strays.length) fail('no-stray-files', `${label}the folder also holds ${strays.join(', ')}`);
  return entries;
}

/** Entries as JSON text, one per entry: what a journal promised and what it reads back. */
export function texts(entries: readonly JournalEntry[]): string[] {
  return entries.map((entry) => JSON.stringify(entry));
}
