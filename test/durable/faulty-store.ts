import { appendFile } from 'node:fs/promises';
import type { JournalStore } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';

/**
 * What a store does at one append: fail as a full disk (ENOSPC) or a refused file (EACCES)
 * would, after writing part of the line when `tear` names the journal file (a write that
 * failed half way), or never answer (`stall`), or fail with an error that names no cause the
 * store knows (`throw`).
 */
export type Fault =
  | { readonly kind: 'ENOSPC' | 'EACCES'; readonly tear?: string }
  | { readonly kind: 'stall' }
  | { readonly kind: 'throw' };

export interface FaultyStore extends JournalStore {
  /** Appends attempted so far (the start entry is the first). */
  readonly appends: number;
  /** The entries whose append resolved, in the order they resolved: what the run was promised. */
  readonly confirmed: readonly JournalEntry[];
  /** The fault is cleared: every later operation goes through. */
  heal(): void;
}

/**
 * `inner`, failing with `fault` at its `at`-th append (1-based) and at every append after it
 * until healed, as a disk stays full until someone frees space.
 */
export function faultyStore(
  inner: JournalStore,
  at: number,
  fault: Fault,
  timeoutMs?: number,
): FaultyStore {
  let appends = 0;
  let healed = false;
  const confirmed: JournalEntry[] = [];
  let last: Promise<void> = Promise.resolve();
  async function failWith(entry: JournalEntry): Promise<void> {
    switch (fault.kind) {
      case 'stall':
        return new Promise<void>(() => {});
      case 'throw':
        throw new Error('the store broke');
      default: {
        if (fault.tear) {
          const line = JSON.stringify(entry);
          await appendFile(fault.tear, line.slice(0, Math.ceil(line.length / 2)));
        }
        throw Object.assign(new Error(`${fault.kind}: simulated`), { code: fault.kind });
      }
    }
  }
  const store: FaultyStore = {
    get appends() {
      return appends;
    },
    confirmed,
    heal() {
      healed = true;
    },
    ...(timeoutMs !== undefined && { timeoutMs }),
    append(runId: string, entry: JournalEntry) {
      appends++;
      const failing = !healed && appends >= at;
      // As it was appended: what the caller does to the object afterwards is not the journal's.
      const copy = JSON.parse(JSON.stringify(entry)) as JournalEntry;
      // Appends complete in the order they were called (the JournalStore contract), a failing
      // one too: a store fails the write it is at, after the ones before it landed.
      const done = last.then(async () => {
        if (!failing) {
          await inner.append(runId, entry);
          confirmed.push(copy);
        } else await failWith(entry);
      });
      // A stalled append holds up nothing once the store is healed.
      if (!(failing && fault.kind === 'stall')) last = done.catch(() => {});
      return done;
    },
    read: (runId) => inner.read(runId),
    list: () => inner.list(),
    delete: (runId) => inner.delete(runId),
    ...(inner.acquire && { acquire: (runId: string) => inner.acquire?.(runId) as never }),
    ...(inner.post && {
      post: (runId: string, message: JournalEntry) => inner.post?.(runId, message) as never,
    }),
    ...(inner.posted && { posted: (runId: string) => inner.posted?.(runId) as never }),
  };
  return store;
}
