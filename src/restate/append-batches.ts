/**
 * One request at a time per run: lines appended while a request is on its way wait and go
 * together in the next. A failed request fails the lines queued behind it too, so the
 * journal never holds a later entry without an earlier one.
 */
export class AppendBatches {
  readonly #send: (runId: string, lines: readonly string[]) => Promise<unknown>;
  readonly #linger: () => Promise<void>;
  readonly #queued = new Map<string, { lines: string[]; waiters: Waiter[] }>();
  readonly #inFlight = new Map<string, Promise<void>>();

  /**
   * `send` writes one request's lines; `linger` is how long a first line waits for company
   * (default: the rest of this turn of the event loop).
   */
  constructor(
    send: (runId: string, lines: readonly string[]) => Promise<unknown>,
    linger: () => Promise<void> = () => new Promise((resolve) => setImmediate(resolve)),
  ) {
    this.#send = send;
    this.#linger = linger;
  }

  add(runId: string, line: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const batch = this.#queued.get(runId) ?? { lines: [], waiters: [] };
      batch.lines.push(line);
      batch.waiters.push({ resolve, reject });
      this.#queued.set(runId, batch);
      if (this.#inFlight.has(runId)) return;
      // Sent at the end of this turn of the event loop rather than at once: an effect's
      // answer and the next effect's intent are appended one right after the other, and go
      // in one request instead of two in a row.
      this.#inFlight.set(
        runId,
        this.#linger().then(() => this.#flush(runId)),
      );
    });
  }

  /** Resolves once every line added so far was sent (whatever the outcome). */
  async settled(runId: string): Promise<void> {
    while (this.#inFlight.has(runId)) await this.#inFlight.get(runId);
  }

  #flush(runId: string): void {
    const batch = this.#queued.get(runId);
    if (batch === undefined) {
      this.#inFlight.delete(runId);
      return;
    }
    this.#queued.delete(runId);
    const sending = this.#send(runId, batch.lines).then(
      () => {
        for (const waiter of batch.waiters) waiter.resolve();
      },
      (error: unknown) => {
        for (const waiter of batch.waiters) waiter.reject(error);
        const behind = this.#queued.get(runId);
        this.#queued.delete(runId);
        for (const waiter of behind?.waiters ?? []) waiter.reject(error);
      },
    );
    this.#inFlight.set(
      runId,
      sending.then(() => this.#flush(runId)),
    );
  }
}

interface Waiter {
  resolve(): void;
  reject(error: unknown): void;
}
