import { ModelError } from '../errors.js';

/**
 * Default of every adapter's `idleTimeoutMs`: a minute without a byte or event from a
 * response that has started. Long enough for a reasoning model's quiet stretches mid-stream
 * (providers send keep-alive pings well inside it), short enough that a dead connection is
 * noticed in time for a retry (SPEC Q2: every wait is bounded).
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

/**
 * The idle timeout of one model call. `touch` whenever something arrives from the provider,
 * `stop` while nothing is being waited for (the consumer holds a part, the call is over).
 * When `ms` pass with the countdown running, the watch fires: `controller` is aborted (which
 * cancels the HTTP request) and every `race` rejects with the idle ModelError, so the call
 * settles even when the SDK never notices the abort. The timer is cleared by `stop`, and
 * nothing else is left behind.
 */
export class IdleWatch {
  readonly #provider: string;
  readonly #ms: number;
  readonly #controller: AbortController;
  /** The races now waiting: each rejects when the watch fires. */
  readonly #waiting = new Set<(error: ModelError) => void>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #error: ModelError | undefined;

  constructor(provider: string, ms: number, controller: AbortController) {
    this.#provider = provider;
    this.#ms = ms;
    this.#controller = controller;
  }

  /** The idle error once the watch has fired, else undefined. */
  get error(): ModelError | undefined {
    return this.#error;
  }

  /** (Re)starts the countdown. */
  touch(): void {
    if (this.#error) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#fire(), this.#ms);
  }

  /** Stops the countdown until the next `touch`. */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** `work`, or a rejection with the idle error as soon as the watch fires. */
  race<T>(work: Promise<T>): Promise<T> {
    if (this.#error) {
      work.catch(() => {});
      return Promise.reject(this.#error);
    }
    // One waiter per race, dropped when the work settles: a race against one long-lived
    // promise would keep every event a long stream read alive until the call ended.
    return new Promise<T>((resolve, reject) => {
      const onIdle = (error: ModelError) => {
        work.catch(() => {}); // aborted with its request: nobody listens any more
        reject(error);
      };
      this.#waiting.add(onIdle);
      work.then(resolve, reject).finally(() => this.#waiting.delete(onIdle));
    });
  }

  #fire(): void {
    this.#timer = undefined;
    const error = new ModelError(
      `The ${this.#provider} response was idle for ${this.#ms} ms (idleTimeoutMs): nothing ` +
        'more arrived after it started, so the call was aborted',
      { retryable: true },
    );
    this.#error = error;
    for (const onIdle of this.#waiting) onIdle(error);
    this.#waiting.clear();
    this.#controller.abort(error);
  }
}
