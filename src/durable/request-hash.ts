import { createHash } from 'node:crypto';
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
