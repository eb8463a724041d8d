/**
 * What Gemini needs echoed back about a function call that our provider-neutral ToolCall
 * cannot carry: whether the id came from Gemini (ids we generated are never sent, so Gemini
 * only sees ids it issued) and the call's `thoughtSignature`, which Gemini 3 models require
 * on the replayed call part of the current turn (a 400 otherwise).
 */
export interface CallMemo {
  readonly providerId: boolean;
  readonly thoughtSignature?: string;
}

/**
 * Memos of recent calls, by tool call id. Bounded, oldest forgotten first, because one model
 * instance serves many runs for the life of a process. Forgetting is safe: a call without a
 * memo is replayed without an id and with the documented "skip the validator" signature (see
 * request.ts), which is also what a transcript restored in another process gets.
 */
export class CallMemory {
  readonly #limit: number;
  readonly #memos = new Map<string, CallMemo>();

  constructor(limit = 4096) {
    this.#limit = limit;
  }

  remember(memos: Iterable<readonly [string, CallMemo]>): void {
    for (const [id, memo] of memos) {
      // A call with nothing to echo needs no memo: its absence means the same.
      if (!memo.providerId && memo.thoughtSignature === undefined) continue;
      this.#memos.delete(id);
      this.#memos.set(id, memo);
      if (this.#memos.size > this.#limit) {
        const oldest = this.#memos.keys().next().value;
        if (oldest !== undefined) this.#memos.delete(oldest);
      }
    }
  }

  /** The memo of a call, if it is still remembered. Bound, so it can be passed as a function. */
  readonly recall = (toolCallId: string): CallMemo | undefined => this.#memos.get(toolCallId);

  get size(): number {
    return this.#memos.size;
  }
}
