import { DEFAULT_STORE_TIMEOUT_MS } from './bounded.js';
import { JournalError } from './journal-error.js';
import type { JournalStore } from './stores/journal-store.js';
import { storeFault } from './stores/store-fault.js';

/**
 * How long a store operation may still take once the run it serves was cancelled or reached
 * its time limit: long enough for a healthy store to confirm the run's last entries, short
 * enough that a stalled one does not keep a cancelled run waiting.
 */
export const STORE_GRACE_MS = 2_000;

/**
 * Bounds every operation a run host asks of its journal store (SPEC Q2, Q7): each fails with a
 * JournalError `timed-out` after the store's `timeoutMs`, and, once the run is cancelled or
 * its deadline passes (`cut`), after STORE_GRACE_MS more at most; whatever the store throws
 * becomes a typed JournalError. Works for any JournalStore, one that never answers included.
 */
export class StoreGuard {
  readonly #runId: string;
  readonly #timeoutMs: number;
  #cut: string | undefined;
  /** Operations in flight, each armed with the grace timer when the run is cut. */
  readonly #pending = new Set<() => void>();

  constructor(store: JournalStore, runId: string) {
    this.#runId = runId;
    const { timeoutMs } = store;
    this.#timeoutMs =
      typeof timeoutMs === 'number' && timeoutMs > 0 ? timeoutMs : DEFAULT_STORE_TIMEOUT_MS;
  }

  /** The run was cancelled or reached its deadline (`why`, as a message says it). */
  cut(why: string): void {
    if (this.#cut !== undefined) return;
    this.#cut = why;
    for (const arm of this.#pending) arm();
  }

  guard<T>(work: () => Promise<T>, doing: string): Promise<T> {
    const runId = this.#runId;
    return new Promise<T>((resolve, reject) => {
      let grace: ReturnType<typeof setTimeout> | undefined;
      const timer = setTimeout(() => {
        settle();
        reject(this.#timedOut(doing, `within ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      const arm = () => {
        grace ??= setTimeout(() => {
          settle();
          reject(this.#timedOut(doing, `within ${STORE_GRACE_MS} ms after ${this.#cut}`));
        }, STORE_GRACE_MS);
      };
      if (this.#cut !== undefined) arm();
      else this.#pending.add(arm);
      // Done with at the first of the work settling and a time-out: a store that never
      // answers must not keep a grace timer, armed by a later cut, pending for nothing.
      const settle = () => {
        clearTimeout(timer);
        clearTimeout(grace);
        this.#pending.delete(arm);
      };
      let started: Promise<T>;
      try {
        started = Promise.resolve(work());
      } catch (error) {
        started = Promise.reject(error);
      }
      started.then(
        (value) => {
          settle();
          resolve(value);
        },
        (error: unknown) => {
          settle();
          reject(storeFault(error, doing, { runId }));
        },
      );
    });
  }

  #timedOut(doing: string, when: string): JournalError {
    return new JournalError(
      'timed-out',
      `The journal store did not finish ${doing} ${when} (run '${this.#runId}'): it may be stalled (a hung disk or network file system, a server that does not answer). The run stops here; resume it once the store answers again`,
      { runId: this.#runId },
    );
  }
}
