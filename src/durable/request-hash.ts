import { createHash } from '../lazy-crypto.js';
import { Transcript } from '../transcript.js';
import type { JsonValue } from '../viz/to-json.js';
import { encode, TAG } from './codec.js';

/**
 * A stable hash of a request (a compiled model request, a tool call): the sha256, in hex, of
 * its canonical JSON. Replay compares the hash of the request a resumed run makes with the one
 * journaled before the crash; a difference is a JournalMismatchError.
 *
 * What is included: the value as `encode` writes it (so `1n` and `"1"`, a Date and its ISO
 * string, a Transcript and a plain array of the same messages hash differently), every own
 * enumerable property, array order, errors' name, message, code, fields and cause.
 * What is not: the order of object keys (sorted, by UTF-16 code unit), properties whose value
 * is `undefined` (absent and undefined are the same request to a provider; `undefined` inside
 * an array still counts, it holds a place), errors' stacks (they differ by process).
 *
 * The same value hashes the same in any process and any Node version: the encoding is ours and
 * JSON's number and string forms are fixed by ECMAScript. Values the codec refuses (functions,
 * cycles) throw its JournalCodecError.
 */
export function requestHash(value: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(encode(value, { stacks: false })))
    .digest('hex');
}

/** `value` as JSON text with object keys sorted and undefined-valued properties left out. */
export function canonicalJson(value: JsonValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const record = value as Readonly<Record<string, JsonValue>>;
  const parts: string[] = [];
  for (const key of Object.keys(record).sort()) {
    const item = record[key] as JsonValue;
    if (isUndefinedTag(item)) continue;
    parts.push(`${JSON.stringify(key)}:${canonicalJson(item)}`);
  }
  return `{${parts.join(',')}}`;
}

function isUndefinedTag(value: JsonValue): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const record = value as Readonly<Record<string, JsonValue>>;
  return record[TAG] === 'undefined' && Object.keys(record).length === 1;
}

/**
 * The hashes a durable run journals for its effects' inputs (see `hash`), for one run:
 * requestHash, except that a Transcript among the input's own properties counts as a running
 * hash of its messages: the hash of the first k is sha256(hash of the first k-1, digest of
 * message k). A run's model calls see its transcript grow by a few messages each step, so
 * the hasher keeps the last transcript's messages and running hashes and only hashes what
 * follows the part they share: hashing whole transcripts made a durable run quadratic in its
 * length (at 50 steps, 282 µs for the last model call alone). The compiled system prompt is
 * a new object every turn: a text-only message counts as shared when its text is the same.
 */
export class EffectHasher {
  #messages: readonly object[] = [];
  #hashes: string[] = [];

  hash(input: unknown): string {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) {
      return requestHash(input);
    }
    let hashed: Record<string, unknown> | undefined;
    for (const [key, value] of Object.entries(input)) {
      if (!(value instanceof Transcript)) continue;
      hashed ??= { ...input };
      hashed[key] = { transcript: this.#transcriptHash(value.toArray()) };
    }
    return requestHash(hashed ?? input);
  }

  #transcriptHash(messages: readonly object[]): string {
    const previous = this.#messages;
    let shared = 0;
    while (
      shared < messages.length &&
      shared < previous.length &&
      sameMessage(messages[shared] as object, previous[shared] as object)
    ) {
      shared++;
    }
    const hashes = this.#hashes.slice(0, shared);
    let hash = hashes.at(-1) ?? '';
    for (let i = shared; i < messages.length; i++) {
      const digest = requestHash(messages[i]);
      hash = createHash('sha256').update(hash).update(digest).digest('hex');
      hashes.push(hash);
    }
    this.#messages = messages;
    this.#hashes = hashes;
    return hash;
  }
}

function sameMessage(a: object, b: object): boolean {
  if (a === b) return true;
  const x = a as { role?: unknown; content?: unknown };
  const y = b as { role?: unknown; content?: unknown };
  return (
    typeof x.content === 'string' &&
    x.role === y.role &&
    x.content === y.content &&
    Object.keys(a).length === 2 &&
    Object.keys(b).length === 2
  );
}
