import type { FileHandle } from 'node:fs/promises';
import { runStatusOf } from '../journal-entry.js';
import { JournalError } from '../journal-error.js';
import { unknownRunError } from './entry-line.js';
import { parseJournalFile } from './journal-file-parser.js';
import { appendDurably, type JournalFiles } from './journal-files.js';
import {
  type Claim,
  claimLineText,
  holdingLive,
  keptBy,
  letGo,
  newClaim,
  releaseLineText,
} from './run-claim.js';

/** A claim this store holds on a run, and the journal's length as this store last wrote it. */
interface Held {
  readonly claim: Claim;
  /** Bytes of the journal up to this store's last confirmed line. */
  size: number;
  /** Its `end` entry is written: that let the run go, no release line is needed. */
  ended: boolean;
}

/** Runs a store instance may have started without acquiring them (raw `append` users). */
const CREATED_KEPT = 1_024;
/** Journals appended to without a claim whose length this store remembers. */
const CHECKED_KEPT = 256;

/**
 * How one fileStore writes its journals under the one-writer rule (run-claim.ts): the runs it
 * holds, the lines it appends (stamped with its claim, after cutting a line its own failed
 * write tore, or refused once another writer took the run), and claiming and letting go.
 * Memory is kept only for runs held now, plus two small bounded maps.
 */
export class RunClaims {
  readonly #files: JournalFiles;
  /** Runs this store holds (acquired). */
  readonly #held = new Map<string, Held>();
  /** Runs this store started, whose creator's claim an `acquire` right after takes up. */
  readonly #created = new Map<string, Held>();
  /** Journals appended to without a claim: their length after this store's last line. */
  readonly #checked = new Map<string, number>();

  constructor(files: JournalFiles) {
    this.#files = files;
  }

  /** Starts a run with its start line, which carries its creator's claim. */
  async create(runId: string, line: string): Promise<void> {
    const claim = newClaim(1);
    const text = `${line.slice(0, -1)},"$claim":${JSON.stringify(claim)}}\n`;
    const handle = await this.#files.create(runId);
    try {
      await appendDurably(handle, text);
    } finally {
      await handle.close();
    }
    this.forget(runId);
    remember(this.#created, CREATED_KEPT, runId, {
      claim,
      size: Buffer.byteLength(text),
      ended: false,
    });
  }

  /** Appends one entry's line: stamped with this store's claim when it holds the run. */
  async append(runId: string, line: string, ends: boolean): Promise<void> {
    const handle = await this.#files.openToAppend(runId, typeOf(line));
    try {
      const held = this.#held.get(runId) ?? this.#created.get(runId);
      if (!held) return await this.#appendUnclaimed(runId, handle, line);
      const size = (await handle.stat()).size;
      if (size !== held.size) await this.#reconcile(runId, handle, held, size);
      const text = `${line.slice(0, -1)},"$claim":${held.claim.n}}\n`;
      await appendDurably(handle, text);
      held.size += Buffer.byteLength(text);
      if (ends) held.ended = true;
    } finally {
      await handle.close();
    }
  }

  /**
   * Claims the run for this store (JournalStore.acquire). Resolves with what lets it go. A
   * run that does not exist or has ended needs no claim: nothing will be written to it.
   */
  async acquire(runId: string): Promise<() => Promise<void>> {
    const created = this.#created.get(runId);
    if (created) {
      this.#created.delete(runId);
      return this.#hold(runId, created);
    }
    const already = this.#held.get(runId);
    if (already) throw busy(runId, this.#files.journal(runId), already.claim, 'this-process');
    const file = this.#files.journal(runId);
    for (let attempt = 0; attempt < 5; attempt++) {
      const bytes = await this.#files.read(runId);
      if (bytes === undefined) return nothingToRelease;
      const before = parseJournalFile(bytes, file, runId);
      if (before.entries.length === 0 || runStatusOf(before.entries) !== 'running') {
        return nothingToRelease;
      }
      this.#refuseKept(runId, before.holder);
      const claim = newClaim(before.lastClaim + 1);
      // Live from the moment another store may read it: a store of this process that finds
      // it must be refused as another process would be (its pid runs), not take it as one
      // left over, while this one reads it back.
      holdingLive(claim);
      let after: ReturnType<typeof parseJournalFile>;
      try {
        const handle = await this.#files.openToAppend(runId, '$claim');
        try {
          await appendDurably(handle, claimLineText(claim));
        } finally {
          await handle.close();
        }
        // Read back: the claim counts only if it came first among those over the same holder.
        after = parseJournalFile((await this.#files.read(runId)) ?? Buffer.alloc(0), file, runId);
      } catch (error) {
        letGo(claim);
        throw error;
      }
      if (after.holder?.id === claim.id) {
        return this.#hold(runId, { claim, size: after.validLength, ended: false });
      }
      letGo(claim);
      this.#refuseKept(runId, after.holder);
      // The winner let the run go (or died) already: claim again.
    }
    throw new JournalError(
      'run-busy',
      `Run '${runId}': other processes kept taking it over; try again once they are done`,
      { runId, file },
    );
  }

  /**
   * Lets go of a run whose holder is gone but cannot be seen to be (on another machine).
   * Never a holder alive on this machine.
   */
  async clearHolder(runId: string): Promise<boolean> {
    const file = this.#files.journal(runId);
    const bytes = await this.#files.read(runId);
    if (bytes === undefined) throw unknownRunError(runId, '$release');
    const { holder } = parseJournalFile(bytes, file, runId);
    if (!holder) return false;
    const why = keptBy(holder);
    if (why === 'live' || why === 'this-process') throw busy(runId, file, holder, why);
    const handle = await this.#files.openToAppend(runId, '$release');
    try {
      await appendDurably(handle, releaseLineText(holder.n));
    } finally {
      await handle.close();
    }
    return true;
  }

  /** Forgets what this store knew of a run (deleted, or started anew). */
  forget(runId: string): void {
    const held = this.#held.get(runId);
    if (held) letGo(held.claim);
    this.#held.delete(runId);
    this.#created.delete(runId);
    this.#checked.delete(runId);
  }

  #hold(runId: string, held: Held): () => Promise<void> {
    this.#held.set(runId, held);
    holdingLive(held.claim);
    return () => this.#release(runId, held.claim);
  }

  /**
   * Lets the run go: a release line, unless its end entry did it. Best effort, and never
   * rejects: a release that cannot be written (a full disk) leaves the claim to this process,
   * which this process may take up again at once, and another once this one has exited.
   */
  async #release(runId: string, claim: Claim): Promise<void> {
    const held = this.#held.get(runId);
    if (held?.claim.id !== claim.id) return;
    this.#held.delete(runId);
    letGo(claim);
    if (held.ended) return;
    try {
      const handle = await this.#files.openToAppend(runId, '$release');
      try {
        const size = (await handle.stat()).size;
        if (size !== held.size) await this.#reconcile(runId, handle, held, size);
        await appendDurably(handle, releaseLineText(claim.n));
      } finally {
        await handle.close();
      }
    } catch {
      // Deleted, superseded, or the disk refused: see above.
    }
  }

  /**
   * The journal is not as this store left it. Bytes with no line end after its last line are
   * its own write that failed half way: cut off. Anything else is read: a claim of another
   * writer that took the run over refuses this one (`run-busy`); otherwise a torn last line
   * is cut and the store goes on from there.
   */
  async #reconcile(runId: string, handle: FileHandle, held: Held, size: number): Promise<void> {
    const bytes = await handle.readFile();
    if (size > held.size && bytes.indexOf(0x0a, held.size) === -1) {
      await handle.truncate(held.size);
      return;
    }
    const file = this.#files.journal(runId);
    const parsed = parseJournalFile(bytes, file, runId);
    if (parsed.holder?.id !== held.claim.id) {
      this.forget(runId);
      throw superseded(runId, file, parsed.holder);
    }
    if (parsed.validLength < bytes.length) await handle.truncate(parsed.validLength);
    held.size = parsed.validLength;
  }

  /**
   * A raw append, by a store that holds no claim on the run: the journal is checked (a run,
   * no corrupt line) and a torn last line cut the first time, and again whenever it changed
   * behind this store's back.
   */
  async #appendUnclaimed(runId: string, handle: FileHandle, line: string): Promise<void> {
    const size = (await handle.stat()).size;
    let length = size;
    if (this.#checked.get(runId) !== size) {
      const bytes = await handle.readFile();
      const parsed = parseJournalFile(bytes, this.#files.journal(runId), runId);
      if (parsed.entries.length === 0) throw unknownRunError(runId, typeOf(line));
      // A run someone is writing now is theirs: no line of ours between theirs.
      this.#refuseKept(runId, parsed.holder);
      if (parsed.validLength < bytes.length) await handle.truncate(parsed.validLength);
      length = parsed.validLength;
    }
    this.#checked.delete(runId);
    const text = `${line}\n`;
    await appendDurably(handle, text);
    remember(this.#checked, CHECKED_KEPT, runId, length + Buffer.byteLength(text));
  }

  #refuseKept(runId: string, holder: Claim | undefined): void {
    if (!holder) return;
    const why = keptBy(holder);
    if (why) throw busy(runId, this.#files.journal(runId), holder, why);
  }
}

const nothingToRelease = async (): Promise<void> => {};

/** Keeps `value` under `key` as the newest, dropping the oldest past the map's bound. */
function remember<V>(map: Map<string, V>, bound: number, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > bound) map.delete(map.keys().next().value as string);
}

/** An entry line's type, for messages (the line is JSON made by entryLine). */
function typeOf(line: string): string {
  const match = /^\{"type":"((?:[^"\\]|\\.){0,64})"/.exec(line);
  return match?.[1] ?? 'entry';
}

function busy(
  runId: string,
  file: string,
  holder: Claim,
  why: 'this-process' | 'live' | 'other-host',
): JournalError {
  const message =
    why === 'this-process'
      ? `Run '${runId}' is being run by this process already, through another store of the same folder: one writer per run. Attach to it with the same store, or wait for it to end`
      : why === 'live'
        ? `Run '${runId}' is being run by process ${holder.pid}: one process at a time writes a run's journal. Wait for it to end, or stop it: a holder that died is taken over when the run is resumed`
        : `Run '${runId}' is held by process ${holder.pid} on ${holder.host}, which this machine cannot see. If that process is gone, clear its claim with fileStore(dir).clearHolder('${runId}'), then resume the run`;
  return new JournalError('run-busy', message, { runId, file });
}

function superseded(runId: string, file: string, holder: Claim | undefined): JournalError {
  const by = holder ? `process ${holder.pid} on ${holder.host}` : 'someone who let it go since';
  return new JournalError(
    'run-busy',
    `Run '${runId}' was taken over by ${by}: this writer no longer holds it and writes nothing more to it`,
    { runId, file },
  );
}
