/**
 * A push-to-pull bridge: producers `push` events as they happen, one consumer iterates them.
 * `end(error?)` finishes the iteration, rethrowing `error` after the queued events. A consumer
 * that stops early (`break`) calls `onReturn`, so the producer can stop too. One reader per
 * queue: a second concurrent `next()` replaces the first one's wait.
 */
export class EventQueue<T> implements AsyncIterable<T> {
  readonly #onReturn: (() => void) | undefined;

  constructor(onReturn?: () => void) {
    this.#onReturn = onReturn;
  }

  readonly #items: T[] = [];
  #waiting: ((result: IteratorResult<T>) => void) | undefined;
  #failWaiting: ((error: unknown) => void) | undefined;
  #ended = false;
  #error: unknown;

  push(item: T): void {
    if (this.#ended) return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      resolve({ value: item, done: false });
    } else this.#items.push(item);
  }

  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    if (this.#waiting) {
      const resolve = this.#waiting;
      const reject = this.#failWaiting;
      this.#waiting = undefined;
      if (error !== undefined) reject?.(error);
      else resolve({ value: undefined, done: true });
    }
  }

  /**
   * Ends the iteration with a run's outcome: `final` (the run's last event), then the error
   * `errorOf` finds in a failed output, or the run's own rejection; `cleanup` runs either way.
   * Whatever throws here ends the iteration with that error: a stream always ends, and no
   * rejection is left unhandled.
   */
  endWith<O>(
    run: Promise<O>,
    final: (output: O) => T,
    errorOf: (output: O) => unknown,
    cleanup: () => void,
  ): void {
    const finish = (outcome: () => void) => {
      try {
        outcome();
      } catch (error) {
        this.end(error);
      } finally {
        cleanup();
      }
    };
    run.then(
      (output) =>
        finish(() => {
          const last = final(output);
          const error = errorOf(output);
          this.push(last);
          this.end(error);
        }),
      (error: unknown) => finish(() => this.end(error)),
    );
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.#items.length > 0)
          return Promise.resolve({ value: this.#items.shift() as T, done: false });
        if (this.#ended) {
          if (this.#error !== undefined) {
            const error = this.#error;
            this.#error = undefined;
            return Promise.reject(error);
          }
          return Promise.resolve({ value: undefined, done: true });
        }
        return new Promise((resolve, reject) => {
          this.#waiting = resolve;
          this.#failWaiting = reject;
        });
      },
      return: () => {
        if (!this.#ended) this.#onReturn?.();
        this.#ended = true;
        // A reader that raced next() against something else and gave up must not hang.
        const waiting = this.#waiting;
        this.#waiting = undefined;
        this.#failWaiting = undefined;
        waiting?.({ value: undefined, done: true });
        this.#items.length = 0;
        this.#error = undefined;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
