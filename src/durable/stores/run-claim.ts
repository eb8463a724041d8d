import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

// One writer per run, decided inside the run's own journal file (fileStore).
//
// A process that takes a run over appends a claim line, `{"type":"$claim","over":N,…}`,
// saying which claim it takes the run from (N: the number of the last claim it read; 0 for
// none), then reads the file back. Every process walks the claim lines in file order the
// same way (journal-file-parser.ts): a claim counts only if it names the claim that held the
// run at that point (`over` equals the number of the last claim that counted); it then holds
// the run, numbered `over + 1`. Appends with O_APPEND land whole and in one order, so when two
// processes take over the same dead holder at once, both claims name the same `over`, and
// only the first in the file counts: exactly one of them reads itself back as the holder,
// under any interleaving of any number of processes. No lock file, no temporary file: a
// kill at any moment leaves at most a torn last line, which the next claim line ends.
//
// Each entry its holder appends carries the claim's number (`"$claim":N`); an entry whose
// number is not the holder's at that point in the file was written by a writer that had been
// superseded, and is refused on read; the writer itself finds the newer claim at its next
// append (the file grew behind its back) and is refused with `run-busy`. A holder gives the
// run up with a release line (`{"type":"$release","n":N}`), or with the run's `end` entry.

/** A claim on a run: who made it, and its number in the run's sequence of claims. */
export interface Claim {
  readonly n: number;
  readonly pid: number;
  readonly host: string;
  /** Random, per claim: tells two claims of one process apart. */
  readonly id: string;
}

export interface ClaimLine {
  readonly type: '$claim';
  /** The number of the claim this one takes the run from; 0: the run had none. */
  readonly over: number;
  readonly pid: number;
  readonly host: string;
  readonly id: string;
}

export interface ReleaseLine {
  readonly type: '$release';
  readonly n: number;
}

/** The holder fields a claim and a claim line share: which process, on which host, which claim. */
function namesItsHolder(value: { pid?: unknown; host?: unknown; id?: unknown }): boolean {
  return (
    typeof value.pid === 'number' && typeof value.host === 'string' && typeof value.id === 'string'
  );
}

export function isClaim(value: unknown): value is Claim {
  const claim = value as Partial<Claim> | null;
  return (
    typeof claim === 'object' &&
    claim !== null &&
    Number.isInteger(claim.n) &&
    namesItsHolder(claim)
  );
}

export function isClaimLine(value: unknown): value is ClaimLine {
  const line = value as Partial<ClaimLine> | null;
  return (
    typeof line === 'object' &&
    line !== null &&
    line.type === '$claim' &&
    Number.isInteger(line.over) &&
    namesItsHolder(line)
  );
}

export function isReleaseLine(value: unknown): value is ReleaseLine {
  const line = value as Partial<ReleaseLine> | null;
  return (
    typeof line === 'object' &&
    line !== null &&
    line.type === '$release' &&
    Number.isInteger(line.n)
  );
}

/** A new claim of this process, numbered `n`. */
export function newClaim(n: number): Claim {
  return { n, pid: process.pid, host: hostname(), id: randomBytes(6).toString('hex') };
}

/**
 * The line that claims a run over claim number `over`. It starts with a newline: a line the
 * previous holder tore by dying mid-write ends there, instead of swallowing the claim.
 */
export function claimLineText(claim: Claim): string {
  const line: ClaimLine = {
    type: '$claim',
    over: claim.n - 1,
    pid: claim.pid,
    host: claim.host,
    id: claim.id,
  };
  return `\n${JSON.stringify(line)}\n`;
}

export function releaseLineText(n: number): string {
  const line: ReleaseLine = { type: '$release', n };
  return `\n${JSON.stringify(line)}\n`;
}

// Claims held by a live run in this process (any store of any folder): a claim of this
// process that is not here is left over from a run that ended without letting it go (its
// release could not be written), and may be taken over.
const liveClaims = new Set<string>();

export function holdingLive(claim: Claim): void {
  liveClaims.add(claim.id);
}

export function letGo(claim: Claim): void {
  liveClaims.delete(claim.id);
}

/** Why `holder` keeps the run from this process, or undefined when it may be taken over. */
export function keptBy(holder: Claim): 'this-process' | 'live' | 'other-host' | undefined {
  if (holder.host !== hostname()) return 'other-host';
  if (holder.pid === process.pid) return liveClaims.has(holder.id) ? 'this-process' : undefined;
  return isRunning(holder.pid) ? 'live' : undefined;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as { code?: unknown }).code === 'EPERM';
  }
}
