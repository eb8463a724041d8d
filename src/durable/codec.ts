import type { Message } from '../messages.js';
import { Transcript } from '../transcript.js';
import type { JsonValue } from '../viz/to-json.js';
import { JournalCodecError } from './codec-error.js';
import { errorFromPayload, errorToPayload } from './error-codec.js';

/**
 * How values cross the journal: `encode` turns what a run's inputs and context hold into JSON,
 * `decode` brings it back with its classes, so that
 * `decode(JSON.parse(JSON.stringify(encode(v))))` deep-equals `v`.
 *
 * Plain JSON (strings, finite numbers, booleans, null, arrays, plain objects) is written as it
 * is. Anything else is a *tag*: an object with a `"$sc"` key naming what it is, and its payload
 * under `"v"`:
 *
 *   undefined           {"$sc":"undefined"}           (kept in objects and arrays)
 *   NaN, ±Infinity, -0  {"$sc":"number","v":"NaN"}    ("Infinity", "-Infinity", "-0")
 *   BigInt              {"$sc":"bigint","v":"123"}
 *   Date                {"$sc":"date","v":"2024-01-01T00:00:00.000Z"}   (null: Invalid Date)
 *   Map                 {"$sc":"map","v":[[key, value], …]}
 *   Set                 {"$sc":"set","v":[item, …]}
 *   Transcript          {"$sc":"transcript","v":[message, …]}  (revived with Transcript.from)
 *   Error               {"$sc":"error","v":{name, message, …}}  (see error-codec.ts)
 *   an attachment's bytes, kept elsewhere in the journal (only when the writer asks, below)
 *                       {"$sc":"attachment","v":{mediaType, sha256, name?}}
 *   an object that has its own "$sc" key
 *                       {"$sc":"object","v":{…the object…}}
 *
 * The last one is the escape that makes tags unambiguous: every object in the encoding that has
 * a `"$sc"` key is a tag, because a user's object with that key is always wrapped, and the
 * object under an `object` tag's `"v"` is read as data, never as a tag. Payloads are encoded
 * values themselves (a Map of Dates nests tags).
 *
 * An object whose class the codec does not know is written through its `toJSON()` when it has
 * one (as JSON.stringify would: it decodes as that JSON, not as the class); without one it is
 * refused. Functions, symbols, cycles and unknown classes are refused with a JournalCodecError
 * naming the path (`$.context.steps[2].x`): never a silent loss. Symbol-keyed and
 * non-enumerable properties of plain objects are not data and are skipped, as JSON does; a
 * shared (non-cyclic) reference is written at each place, as JSON does.
 *
 * Encoding copies only what needs a tag: a plain JSON tree is walked once and returned as the
 * same object, and a tree with one Date in it copies only the path down to that Date. `decode`
 * does the same, so neither costs a deep copy in the common case.
 */
export const TAG = '$sc';

export interface EncodeOptions {
  /** Keep errors' `stack` (default true). requestHash leaves stacks out: they differ by process. */
  readonly stacks?: boolean;
  /**
   * Writes an inline attachment's bytes somewhere else and names them: given the base64 of an
   * attachment (a plain object `{ mediaType, data, name? }`, see src/attachments.ts), returns
   * the sha256 the decoder will find them under. The run journal writes each distinct payload
   * once this way and refers to it from every entry that holds it. Without it, bytes are
   * written inline like any other string.
   */
  readonly attachmentRef?: (data: string) => string;
}

export interface DecodeOptions {
  /** The base64 written under a sha256 by `attachmentRef`; undefined when the journal lacks it. */
  readonly attachmentData?: (sha256: string) => string | undefined;
}

/** `value` as JSON, with tags for what plain JSON cannot hold. Throws JournalCodecError. */
export function encode(value: unknown, options: EncodeOptions = {}): JsonValue {
  const context: Context = {
    stacks: options.stacks ?? true,
    ancestors: new Set(),
    attachmentRef: options.attachmentRef,
  };
  try {
    return encodeValue(value, context) as JsonValue;
  } catch (error) {
    throw asCodecError(error, 'Cannot journal the value at');
  }
}

/** The value `encode` wrote (after any JSON round trip). Throws JournalCodecError. */
export function decode(json: unknown, options: DecodeOptions = {}): unknown {
  const previous = attachmentData;
  attachmentData = options.attachmentData;
  try {
    return decodeValue(json);
  } catch (error) {
    throw asCodecError(error, 'Cannot decode the journaled value at');
  } finally {
    attachmentData = previous;
  }
}

// The decoder's resolver for `attachment` tags, for the one synchronous decode under way (set
// and restored around it, so the walk's many functions need not pass it down).
let attachmentData: DecodeOptions['attachmentData'];

const ATTACHMENT_KEYS: ReadonlySet<string> = new Set(['mediaType', 'data', 'name']);

/**
 * True for what `attachment()` makes with inline bytes: only `mediaType`, `data` and maybe
 * `name`, all strings. Any plain object of that shape decodes back equal (a plain object with
 * the same keys), so recognising a user's look-alike is harmless.
 */
function isInlineAttachment(record: Record<string, unknown>): boolean {
  if (typeof record.mediaType !== 'string' || typeof record.data !== 'string') return false;
  if (record.name !== undefined && typeof record.name !== 'string') return false;
  return Object.keys(record).every((key) => ATTACHMENT_KEYS.has(key));
}

interface Context {
  readonly stacks: boolean;
  /** Objects on the path from the root to here: meeting one again is a cycle. */
  readonly ancestors: Set<object>;
  readonly attachmentRef: EncodeOptions['attachmentRef'];
}

/** A failure deep in the walk; each level prepends its segment on the way out. */
class Refusal extends Error {
  readonly segments: string[] = [];
}

const UNDEFINED = Object.freeze({ [TAG]: 'undefined' });
const NUMBERS: Readonly<Record<string, number>> = {
  NaN: Number.NaN,
  Infinity: Number.POSITIVE_INFINITY,
  '-Infinity': Number.NEGATIVE_INFINITY,
  '-0': -0,
};

function tag(name: string, payload: unknown): Record<string, unknown> {
  return { [TAG]: name, v: payload };
}

function encodeValue(value: unknown, context: Context): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (Number.isFinite(value) && !Object.is(value, -0)) return value;
      return tag('number', Object.is(value, -0) ? '-0' : String(value));
    case 'bigint':
      return tag('bigint', value.toString());
    case 'undefined':
      return UNDEFINED;
    case 'function':
      throw new Refusal(
        `a function (${value.name || 'anonymous'}) has no JSON form: keep functions out of a run's inputs and context`,
      );
    case 'symbol':
      throw new Refusal(`a symbol (${String(value)}) has no JSON form`);
  }
  if (value === null) return null;
  const object = value as object;
  if (context.ancestors.has(object))
    throw new Refusal('the value contains itself (a cycle), which JSON cannot hold');
  context.ancestors.add(object);
  try {
    return encodeObject(object, context);
  } finally {
    context.ancestors.delete(object);
  }
}

function encodeObject(object: object, context: Context): unknown {
  if (Array.isArray(object)) return encodeArray(object, context);
  const proto = Object.getPrototypeOf(object);
  if (proto === Object.prototype || proto === null) {
    const record = object as Record<string, unknown>;
    if (context.attachmentRef && isInlineAttachment(record)) {
      const sha256 = context.attachmentRef(record.data as string);
      return tag('attachment', {
        mediaType: record.mediaType,
        sha256,
        ...(record.name !== undefined && { name: record.name }),
      });
    }
    return encodeRecord(record, context);
  }
  if (object instanceof Transcript)
    return tag('transcript', encodeArray(object.toArray(), context, true));
  if (object instanceof Error) {
    const child = (v: unknown, segment: string) => within(segment, () => encodeValue(v, context));
    return tag('error', errorToPayload(object, child, context.stacks));
  }
  if (object instanceof Date)
    return tag('date', Number.isNaN(object.getTime()) ? null : object.toISOString());
  if (object instanceof Map) {
    let i = 0;
    const entries: unknown[] = [];
    for (const [key, item] of object) {
      const at = `[map entry ${i++}]`;
      entries.push([
        within(`${at}.key`, () => encodeValue(key, context)),
        within(`${at}.value`, () => encodeValue(item, context)),
      ]);
    }
    return tag('map', entries);
  }
  if (object instanceof Set) return tag('set', encodeArray([...object], context, true));
  const toJSON = (object as { toJSON?: unknown }).toJSON;
  if (typeof toJSON === 'function') return encodeValue(toJSON.call(object, ''), context);
  const name = (proto as { constructor?: { name?: string } } | null)?.constructor?.name;
  throw new Refusal(
    `an instance of ${name || 'an unknown class'} has no JSON form: give it a toJSON() or use plain data`,
  );
}

/** The array itself when no item needs a tag; otherwise a copy from the first that does. */
function encodeArray(array: readonly unknown[], context: Context, fresh = false): unknown[] {
  let out: unknown[] | undefined = fresh ? [] : undefined;
  let i = 0;
  try {
    for (; i < array.length; i++) {
      const item = array[i];
      const encoded = encodeValue(item, context);
      if (out === undefined && encoded !== item) out = array.slice(0, i);
      out?.push(encoded);
    }
  } catch (error) {
    throw prefixed(error, `[${i}]`);
  }
  return out ?? (array as unknown[]);
}

/** The object itself when no value needs a tag; a user's object with a `$sc` key is escaped. */
function encodeRecord(record: Record<string, unknown>, context: Context): unknown {
  const keys = Object.keys(record);
  const escaped = Object.hasOwn(record, TAG);
  let out: Record<string, unknown> | undefined = escaped ? {} : undefined;
  let key = '';
  try {
    for (let i = 0; i < keys.length; i++) {
      key = keys[i] as string;
      const item = record[key];
      const encoded = encodeValue(item, context);
      if (out === undefined && encoded !== item) {
        out = {};
        for (let j = 0; j < i; j++) define(out, keys[j] as string, record[keys[j] as string]);
      }
      if (out !== undefined) define(out, key, encoded);
    }
  } catch (error) {
    throw prefixed(error, keySegment(key));
  }
  if (escaped) return tag('object', out);
  return out ?? record;
}

function decodeValue(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return decodeArray(value);
  const record = value as Record<string, unknown>;
  if (Object.hasOwn(record, TAG)) return decodeTag(record);
  return decodeRecord(record, false);
}

function decodeArray(array: readonly unknown[]): unknown[] {
  let out: unknown[] | undefined;
  let i = 0;
  try {
    for (; i < array.length; i++) {
      const item = array[i];
      const decoded = decodeValue(item);
      if (out === undefined && decoded !== item) out = array.slice(0, i);
      out?.push(decoded);
    }
  } catch (error) {
    throw prefixed(error, `[${i}]`);
  }
  return out ?? (array as unknown[]);
}

/** `fresh`: always a new object (the payload of an escape, whose `$sc` key is data). */
function decodeRecord(record: Record<string, unknown>, fresh: boolean): Record<string, unknown> {
  const keys = Object.keys(record);
  let out: Record<string, unknown> | undefined = fresh ? {} : undefined;
  let key = '';
  try {
    for (let i = 0; i < keys.length; i++) {
      key = keys[i] as string;
      const item = record[key];
      const decoded = decodeValue(item);
      if (out === undefined && decoded !== item) {
        out = {};
        for (let j = 0; j < i; j++) define(out, keys[j] as string, record[keys[j] as string]);
      }
      if (out !== undefined) define(out, key, decoded);
    }
  } catch (error) {
    throw prefixed(error, keySegment(key));
  }
  return out ?? record;
}

function decodeTag(record: Record<string, unknown>): unknown {
  const name = record[TAG];
  const extra = Object.keys(record).find((k) => k !== TAG && k !== 'v');
  if (extra !== undefined)
    throw new Refusal(`a "${TAG}" tag has an unexpected key "${extra}" (a corrupt journal?)`);
  const payload = record.v;
  try {
    switch (name) {
      case 'undefined':
        return undefined;
      case 'number':
        if (typeof payload === 'string' && Object.hasOwn(NUMBERS, payload)) return NUMBERS[payload];
        break;
      case 'bigint':
        if (typeof payload === 'string' && /^-?\d+$/.test(payload)) return BigInt(payload);
        break;
      case 'date':
        if (payload === null) return new Date(Number.NaN);
        if (typeof payload === 'string') return new Date(payload);
        break;
      case 'map':
        if (Array.isArray(payload))
          return new Map(
            payload.map((entry, i) => {
              if (!Array.isArray(entry) || entry.length !== 2)
                throw new Refusal(`map entry ${i} is not a [key, value] pair`);
              const at = `[map entry ${i}]`;
              return [
                within(`${at}.key`, () => decodeValue(entry[0])),
                within(`${at}.value`, () => decodeValue(entry[1])),
              ];
            }),
          );
        break;
      case 'set':
        if (Array.isArray(payload)) return new Set(decodeArray(payload));
        break;
      case 'transcript':
        if (Array.isArray(payload)) return Transcript.from(decodeArray(payload) as Message[]);
        break;
      case 'error':
        return errorFromPayload(payload, (v, segment) => within(segment, () => decodeValue(v)));
      case 'attachment':
        return decodeAttachment(payload);
      case 'object':
        if (typeof payload === 'object' && payload !== null && !Array.isArray(payload))
          return decodeRecord(payload as Record<string, unknown>, true);
        break;
      default:
        throw new Refusal(
          `unknown tag ${JSON.stringify(name)} (written by a newer statecraft, or not a statecraft journal)`,
        );
    }
  } catch (error) {
    if (error instanceof Refusal) throw error;
    throw new Refusal(`a malformed "${String(name)}" tag: ${(error as Error).message}`);
  }
  throw new Refusal(`a malformed "${String(name)}" tag: ${JSON.stringify(payload)}`);
}

function decodeAttachment(payload: unknown): Record<string, unknown> {
  const { mediaType, sha256, name } = (payload ?? {}) as Record<string, unknown>;
  if (
    typeof mediaType !== 'string' ||
    typeof sha256 !== 'string' ||
    (name !== undefined && typeof name !== 'string')
  )
    throw new Refusal(`a malformed "attachment" tag: ${JSON.stringify(payload)}`);
  const data = attachmentData?.(sha256);
  if (data === undefined)
    throw new Refusal(
      `an attachment's bytes (sha256 ${sha256.slice(0, 12)}…) are not in the journal (a truncated or edited journal?)`,
    );
  return { mediaType, data, ...(name !== undefined && { name }) };
}

/** Runs `walk` one level down, naming `segment` in any refusal. */
function within<T>(segment: string, walk: () => T): T {
  try {
    return walk();
  } catch (error) {
    throw prefixed(error, segment);
  }
}

function prefixed(error: unknown, segment: string): unknown {
  if (error instanceof Refusal) error.segments.unshift(segment);
  return error;
}

function asCodecError(error: unknown, what: string): unknown {
  if (!(error instanceof Refusal)) return error;
  const path = `$${error.segments.join('')}`;
  return new JournalCodecError(path, `${what} ${path}: ${error.message}.`);
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function keySegment(key: string): string {
  return IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

// defineProperty, not assignment: a key such as `__proto__` stays an ordinary key.
function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
