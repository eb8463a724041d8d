/**
 * Runs tasks one after another per key, in the order they were queued; tasks under different
 * keys run concurrently. The file store queues a run's appends here because `fs` work runs on
 * libuv's thread pool, where two un-awaited appends could otherwise reach the disk swapped.
 */
export class PerKeyQueue {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(key) ?? Promise.resolve();
    // A failed task does not stop the ones queued behind it: each caller gets its own outcome.
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(key, tail);
    // Forget idle keys, so that a long-lived store does not keep one promise per run ever seen.
    void tail.then(() => {
      if (this.#tails.get(key) === tail) this.#tails.delete(key);
    });
    return result;
  }
}
