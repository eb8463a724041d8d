/**
 * Tool output as data every later step can carry (SPEC C10): the machine's context, the
 * transcript, compiled requests, adapters' request mapping, details() and any JSON.stringify
 * a user runs. Tools are user code and may return values JSON cannot hold; made safe once,
 * where a tool result is made (local registry, remote results, stream chunks as they are
 * read), nothing downstream has to guard against them.
 *
 * The representation, for a value `JSON.stringify` throws on:
 * - a BigInt becomes its decimal string (`2n ** 70n` → `"1180591620717411303424"`);
 * - an object reached again inside itself becomes `"[Circular]"` (a shared, non-circular
 *   reference is copied at each place, as JSON would write it);
 * - a `toJSON()` that throws becomes `"[toJSON failed: <message>]"`, a property whose getter
 *   throws `"[unreadable: <message>]"`;
 * - nesting deeper than MAX_DEPTH becomes `"[Too deep]"`;
 * - everything else as JSON.stringify has it: functions, symbols and undefined are dropped
 *   from objects and become null in arrays, `toJSON()` is honoured, boxed primitives unboxed.
 * The result is then a fresh tree of plain JSON values. A bare function or symbol, which JSON
 * would turn into nothing, is described: `"[function name]"`, `"Symbol(description)"`.
 *
 * Values JSON.stringify accepts are returned as they are (same object, no copy): the common
 * case costs one stringify and keeps the tool's own structure.
 */
export function jsonSafeOutput(value: unknown): unknown {
  try {
    // undefined for a bare function or symbol, which JSON would drop: described instead.
    if (JSON.stringify(value) !== undefined || value === undefined) return value;
  } catch {
    return toJsonSafe(value, '', new Set(), 0);
  }
  return typeof value === 'function' ? `[function ${value.name || 'anonymous'}]` : String(value);
}

/** `"[Circular]"`: what an object that contains itself shows at the place it loops back. */
export const CIRCULAR = '[Circular]';

// Far below any stack limit, far above any tool result a model can use.
const MAX_DEPTH = 500;

// A placeholder for "leave this out", as JSON does with functions, symbols and undefined.
const OMIT: unique symbol = Symbol('omit');

function toJsonSafe(
  input: unknown,
  key: string,
  ancestors: Set<object>,
  depth: number,
): unknown | typeof OMIT {
  let value = input;
  if (typeof value === 'object' && value !== null) {
    try {
      const toJSON = (value as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') value = toJSON.call(value, key);
    } catch (error) {
      return `[toJSON failed: ${messageOf(error)}]`;
    }
  }
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'string':
    case 'number':
    case 'boolean':
      return value;
    case 'undefined':
    case 'function':
    case 'symbol':
      return OMIT;
  }
  if (value === null) return null;
  const object = value as object;
  const boxed = unboxed(object);
  if (boxed !== OMIT) return boxed;
  if (ancestors.has(object)) return CIRCULAR;
  if (depth >= MAX_DEPTH) return '[Too deep]';
  ancestors.add(object);
  try {
    return Array.isArray(object)
      ? arrayOf(object, ancestors, depth)
      : recordOf(object, ancestors, depth);
  } catch (error) {
    // e.g. a Proxy whose ownKeys trap throws.
    return `[unreadable: ${messageOf(error)}]`;
  } finally {
    ancestors.delete(object);
  }
}

function arrayOf(array: readonly unknown[], ancestors: Set<object>, depth: number): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < array.length; i++) {
    const item = read(array, i, ancestors, depth);
    out.push(item === OMIT ? null : item);
  }
  return out;
}

function recordOf(object: object, ancestors: Set<object>, depth: number): Record<string, unknown> {
  // defineProperty, not assignment: a key such as `__proto__` stays an ordinary key.
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(object)) {
    const item = read(object, key, ancestors, depth);
    if (item !== OMIT)
      Object.defineProperty(out, key, {
        value: item,
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return out;
}

/** One property, made safe; a getter that throws is described instead. */
function read(
  object: object,
  key: string | number,
  ancestors: Set<object>,
  depth: number,
): unknown | typeof OMIT {
  let item: unknown;
  try {
    item = (object as Record<string | number, unknown>)[key];
  } catch (error) {
    return `[unreadable: ${messageOf(error)}]`;
  }
  return toJsonSafe(item, String(key), ancestors, depth + 1);
}

/** What JSON.stringify writes for `new Number(1)`, `new String('a')`, `Object(1n)`… */
function unboxed(object: object): unknown | typeof OMIT {
  if (object instanceof Number || object instanceof Boolean || object instanceof String)
    return object.valueOf();
  if (Object.prototype.toString.call(object) === '[object BigInt]')
    return (object as { valueOf(): bigint }).valueOf().toString();
  return OMIT;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  try {
    return String(error);
  } catch {
    return 'unknown error';
  }
}
