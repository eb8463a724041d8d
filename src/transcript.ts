import type { Message } from './messages.js';

/**
 * An immutable list of messages that appends in O(1) amortized time.
 *
 * Versions share one backing array: a version whose end is the array's end owns the tail and
 * appends by pushing; any other version copies first. Earlier versions never see later
 * messages because each knows its own end. Replacing the first message (where the system
 * prompt lives) is O(1) too, through `head`. This is why compiling a turn does not copy the
 * conversation, and why an N-turn run compiles in time linear in N.
 */
export class Transcript implements Iterable<Message> {
  static readonly empty: Transcript = new Transcript([], 0, 0, undefined);

  readonly #buffer: Message[];
  readonly #start: number;
  readonly #end: number;
  readonly #head: Message | undefined;

  private constructor(buffer: Message[], start: number, end: number, head: Message | undefined) {
    this.#buffer = buffer;
    this.#start = start;
    this.#end = end;
    this.#head = head;
  }

  /** A transcript holding `messages`; passing a Transcript returns it unchanged. */
  static from(messages: Iterable<Message>): Transcript {
    if (messages instanceof Transcript) return messages;
    const buffer = Array.from(messages, freezeMessage);
    return new Transcript(buffer, 0, buffer.length, undefined);
  }

  get length(): number {
    return this.#end - this.#start + (this.#head ? 1 : 0);
  }

  /** The message at `index`; negative indexes count from the end, as with `Array#at`. */
  at(index: number): Message | undefined {
    const i = index < 0 ? this.length + index : index;
    if (i < 0 || i >= this.length) return undefined;
    if (this.#head) return i === 0 ? this.#head : this.#buffer[this.#start + i - 1];
    return this.#buffer[this.#start + i];
  }

  get first(): Message | undefined {
    return this.at(0);
  }

  get last(): Message | undefined {
    return this.at(-1);
  }

  /** A new transcript with `messages` added at the end; this one is unchanged. */
  append(...messages: Message[]): Transcript {
    if (messages.length === 0) return this;
    const added = messages.map(freezeMessage);
    // The shared empty transcript never lends its buffer: that would pin the first run's
    // messages in a module-level array for the life of the process.
    if (this.#end === this.#buffer.length && this !== Transcript.empty) {
      this.#buffer.push(...added);
      return new Transcript(this.#buffer, this.#start, this.#buffer.length, this.#head);
    }
    // Another version already appended past our end: fork with a copy of our own range.
    const buffer = this.#buffer.slice(this.#start, this.#end);
    buffer.push(...added);
    return new Transcript(buffer, 0, buffer.length, this.#head);
  }

  /** A new transcript without its first message (O(1)). */
  dropFirst(): Transcript {
    if (this.#head) return new Transcript(this.#buffer, this.#start, this.#end, undefined);
    if (this.#start === this.#end) return this;
    return new Transcript(this.#buffer, this.#start + 1, this.#end, undefined);
  }

  /** A new transcript with `message` placed before the others (O(1)). */
  prepend(message: Message): Transcript {
    const frozen = freezeMessage(message);
    if (!this.#head) return new Transcript(this.#buffer, this.#start, this.#end, frozen);
    // Only one head slot: materialise the old head into a fresh buffer (rare: two prepends).
    return new Transcript(
      [this.#head, ...this.#buffer.slice(this.#start, this.#end)],
      0,
      this.length,
      frozen,
    );
  }

  *[Symbol.iterator](): Iterator<Message> {
    if (this.#head) yield this.#head;
    for (let i = this.#start; i < this.#end; i++) yield this.#buffer[i] as Message;
  }

  /** A plain array copy (O(n)), e.g. for a provider SDK. */
  toArray(): Message[] {
    const out = this.#buffer.slice(this.#start, this.#end);
    if (this.#head) out.unshift(this.#head);
    return out;
  }

  /** Transcripts serialise as plain message arrays, so snapshots stay plain JSON. */
  toJSON(): Message[] {
    return this.toArray();
  }
}

function freezeMessage(message: Message): Message {
  if (Object.isFrozen(message)) return message;
  if (message.role === 'assistant') {
    return Object.freeze({
      ...message,
      toolCalls: Object.freeze(message.toolCalls.map((call) => Object.freeze({ ...call }))),
    });
  }
  return Object.freeze({ ...message });
}
