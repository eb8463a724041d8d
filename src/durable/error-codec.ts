import type { PartialResult } from '../errors.js';
import {
  AbortError,
  ChainError,
  ConfigError,
  CostLimitError,
  InputError,
  ModelError,
  ProtocolError,
  StatecraftError,
  type StatecraftErrorOptions,
  TimeoutError,
  TokenLimitError,
  TranscriptError,
} from '../errors.js';
import { ToolHookError } from '../tools/hooks.js';
import { InvalidToolCallError } from '../tools/invalid-tool-call.js';
import { ToolCollisionError } from '../tools/name-collision.js';
import { JournalCodecError } from './codec-error.js';
import { JournalError, type JournalErrorReason } from './journal-error.js';
import { type JournalChange, JournalMismatchError } from './journal-mismatch.js';

// How errors cross the journal (the `error` tag of codec.ts). The payload is an object:
//   { name, message, stack?, cause?, code?, codes?, partial?, fields? }
// `cause`, `partial` and the values of `fields` are codec-encoded values; `code` and `codes`
// are present for statecraft errors only. Statecraft errors are revived as their typed class,
// found by `code` (or, for a class this version does not know, the nearest known ancestor in
// `codes`, keeping the original `code` and `name`), so `XxxError.isInstance` holds again.
//
// `partial` is kept: it is plain data (transcript, usage, steps) and a `details()` method,
// written as the details it returns and revived as a method again, that a failed run's error
// exists to carry, and dropping it would make a revived error quietly poorer than the
// one thrown. Effect answers, which is what the journal mostly holds, never have one, so it
// costs nothing there.
//
// Other errors are revived as plain `Error`s (or the built-in class of the same name, e.g.
// TypeError) with their name and message. Their own enumerable fields (Node's `code`, `errno`)
// are kept when they encode; a field that does not (an SDK error's `headers` object) is left
// out rather than failing the run: a foreign error is a diagnostic we do not own.

/** The codec's recursion, passed in so that this module does not import codec.ts back. */
export type EncodeChild = (value: unknown, segment: string) => unknown;
export type DecodeChild = (value: unknown, segment: string) => unknown;

export interface ErrorPayload {
  readonly name: string;
  readonly message: string;
  readonly stack?: string;
  readonly cause?: unknown;
  readonly code?: string;
  readonly codes?: readonly string[];
  readonly partial?: unknown;
  readonly fields?: Readonly<Record<string, unknown>>;
}

// The same registry symbol errors.ts sets: the class keys along an error's class chain.
const CODES = Symbol.for('statecraft.error.codes');
// Written by the payload itself, never copied as fields (`code` and `partial` only for
// statecraft errors: a Node error's `code` is an ordinary field).
const BASE_KEYS = new Set(['name', 'message', 'stack', 'cause']);
const STATECRAFT_KEYS = new Set([...BASE_KEYS, 'code', 'partial']);

type Fields = Readonly<Record<string, unknown>>;

interface Revival {
  /** Fields the constructor sets from the payload; the rest are copied as they are. */
  readonly fields: readonly string[];
  make(message: string, f: Fields, options: StatecraftErrorOptions): StatecraftError;
}

const plain = (C: new (message: string, options?: StatecraftErrorOptions) => StatecraftError) => ({
  fields: [],
  make: (message: string, _f: Fields, options: StatecraftErrorOptions) => new C(message, options),
});

const REVIVALS: Readonly<Record<string, Revival>> = {
  [StatecraftError.code]: plain(StatecraftError),
  [InputError.code]: plain(InputError),
  [ProtocolError.code]: plain(ProtocolError),
  [ChainError.code]: plain(ChainError),
  [ConfigError.code]: {
    fields: ['option', 'problems'],
    make: (_m, f, o) => withProblems(new ConfigError(str(f, 'option'), '', o), f),
  },
  [ToolCollisionError.code]: {
    fields: ['executor', 'toolNames', 'option', 'problems'],
    make: (_m, f, o) =>
      withProblems(new ToolCollisionError(str(f, 'executor'), strings(f, 'toolNames'), o), f),
  },
  [TokenLimitError.code]: {
    fields: ['limit', 'used', 'estimate'],
    make: (m, f, o) =>
      new TokenLimitError(num(f, 'limit'), num(f, 'used'), { ...o, message: m, ...estimate(f) }),
  },
  [CostLimitError.code]: {
    fields: ['limit', 'spent', 'estimate'],
    make: (m, f, o) =>
      new CostLimitError(num(f, 'limit'), num(f, 'spent'), { ...o, message: m, ...estimate(f) }),
  },
  [TimeoutError.code]: {
    fields: ['timeoutMs'],
    make: (m, f, o) => new TimeoutError(num(f, 'timeoutMs'), m, o),
  },
  [TranscriptError.code]: {
    fields: ['index'],
    make: (m, f, o) => new TranscriptError(num(f, 'index'), m, o),
  },
  [ModelError.code]: {
    fields: ['retryable', 'status'],
    make: (m, f, o) => {
      const status = f.status === undefined ? undefined : num(f, 'status');
      return new ModelError(m, { ...o, retryable: f.retryable === true, status });
    },
  },
  [AbortError.code]: { fields: ['reason'], make: (m, _f, o) => new AbortError(m, o) },
  [JournalMismatchError.code]: {
    fields: ['entry', 'expectedHash', 'actualHash', 'request', 'changes', 'advice'],
    make: (_m, f, o) =>
      new JournalMismatchError(
        {
          entry: num(f, 'entry'),
          expectedHash: str(f, 'expectedHash'),
          actualHash: str(f, 'actualHash'),
          ...(f.request === undefined ? {} : { request: str(f, 'request') }),
          // Errors journaled before changes were kept have none.
          ...(f.changes === undefined ? {} : { changes: changes(f) }),
          ...(f.advice === undefined ? {} : { advice: str(f, 'advice') }),
        },
        o,
      ),
  },
  [ToolHookError.code]: {
    fields: ['hook', 'callId'],
    make: (m, f, o) => {
      const hook = str(f, 'hook') === 'afterToolCall' ? 'afterToolCall' : 'beforeToolCall';
      const call = { id: str(f, 'callId'), name: '', arguments: {} };
      return Object.assign(new ToolHookError(hook, call, o.cause), { message: m });
    },
  },
  [InvalidToolCallError.code]: {
    fields: ['callId', 'toolName', 'problem'],
    make: (m, f, o) => {
      const call = { id: str(f, 'callId'), name: str(f, 'toolName'), arguments: {} };
      const problem = str(f, 'problem') === 'json' ? 'json' : 'schema';
      return new InvalidToolCallError({ call, problem, message: m }, o);
    },
  },
  [JournalCodecError.code]: {
    fields: ['path'],
    make: (m, f, o) => new JournalCodecError(str(f, 'path'), m, o),
  },
  // A store's fault ends a run with it (a full disk on a Restate worker): the client must be
  // able to tell it by its class and reason, as the worker could.
  [JournalError.code]: {
    fields: ['reason', 'runId', 'file', 'line'],
    make: (m, f, o) =>
      new JournalError(str(f, 'reason') as JournalErrorReason, m, {
        ...o,
        ...(f.runId !== undefined && { runId: str(f, 'runId') }),
        ...(f.file !== undefined && { file: str(f, 'file') }),
        ...(f.line !== undefined && { line: num(f, 'line') }),
      }),
  },
};

const BUILT_INS: Readonly<Record<string, ErrorConstructor>> = {
  Error,
  TypeError,
  RangeError,
  SyntaxError,
  ReferenceError,
  EvalError,
  URIError,
};

/** The payload of `error`; `encodeChild` encodes nested values (cause, partial, fields). */
export function errorToPayload(error: Error, encodeChild: EncodeChild, stacks: boolean) {
  const statecraft = StatecraftError.isInstance(error);
  const payload: Record<string, unknown> = { name: String(error.name), message: error.message };
  if (stacks && typeof error.stack === 'string') payload.stack = error.stack;
  if (Object.hasOwn(error, 'cause')) payload.cause = encodeChild(error.cause, '.cause');
  if (statecraft) {
    payload.code = error.code;
    payload.codes = [...((error as unknown as Record<symbol, string[]>)[CODES] ?? [])];
    if (error.partial !== undefined) {
      payload.partial = encodeChild(partialData(error.partial), '.partial');
    }
  }
  const fields: Record<string, unknown> = {};
  let any = false;
  const base = statecraft ? STATECRAFT_KEYS : BASE_KEYS;
  for (const key of Object.keys(error)) {
    if (base.has(key)) continue;
    const value = (error as unknown as Record<string, unknown>)[key];
    if (!statecraft) {
      try {
        encodeChild(value, `.${key}`);
      } catch {
        continue;
      }
    }
    fields[key] = value;
    any = true;
  }
  // Encoded as one object, so a field named like the codec's tag is escaped as any data is.
  if (any) payload.fields = encodeChild(fields, '');
  return payload;
}

/** The error `payload` describes, revived as its class; `decodeChild` decodes nested values. */
export function errorFromPayload(payload: unknown, decodeChild: DecodeChild): Error {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    throw new TypeError('an error payload must be an object');
  const p = payload as Record<string, unknown>;
  const name = str(p, 'name');
  const message = str(p, 'message');
  const hasCause = Object.hasOwn(p, 'cause');
  const cause = hasCause ? decodeChild(p.cause, '.cause') : undefined;
  const fields = (p.fields === undefined ? {} : decodeChild(p.fields, '.fields')) as Fields;
  if (typeof fields !== 'object' || fields === null)
    throw new TypeError('`fields` must be an object');

  let error: Error;
  let consumed: readonly string[] = [];
  if (typeof p.code === 'string') {
    const code = p.code;
    const codes = p.codes === undefined ? [code] : strings(p, 'codes');
    const known = [code, ...codes].find((c) => Object.hasOwn(REVIVALS, c)) ?? StatecraftError.code;
    const revival = REVIVALS[known] as Revival;
    const options: { cause?: unknown; partial?: PartialResult } = {};
    if (hasCause) options.cause = cause;
    if (p.partial !== undefined)
      options.partial = revivedPartial(decodeChild(p.partial, '.partial'));
    const revived = revival.make(message, fields, options);
    if (revived.code !== code) setOwn(revived, 'code', code, true);
    error = revived;
    consumed = revival.fields;
  } else {
    const Ctor = Object.hasOwn(BUILT_INS, name) ? (BUILT_INS[name] as ErrorConstructor) : Error;
    error = hasCause ? new Ctor(message, { cause }) : new Ctor(message);
  }
  // `message` as it was (ConfigError.of and ToolCollisionError compose theirs), `name` too (a
  // user's subclass revived as its statecraft parent keeps its own name).
  if (error.message !== message) setOwn(error, 'message', message, false);
  if (error.name !== name) setOwn(error, 'name', name, StatecraftError.isInstance(error));
  if (typeof p.stack === 'string') setOwn(error, 'stack', p.stack, false);
  for (const key of Object.keys(fields)) {
    if (!consumed.includes(key)) setOwn(error, key, fields[key], true);
  }
  return error;
}

/**
 * A failed run's partial as data: its `details()` is a method (SPEC A5, as on a result), so
 * what it returns is written in its place.
 */
function partialData(partial: PartialResult): unknown {
  const { details } = partial as { readonly details?: unknown };
  if (typeof details !== 'function') return partial;
  return { ...partial, details: details.call(partial) };
}

/**
 * The partial `data` describes, its `details` a method again, not enumerable, as on the
 * partial that was thrown. Journals written while partials held their details as an object
 * revive the same way.
 */
function revivedPartial(data: unknown): PartialResult {
  if (typeof data !== 'object' || data === null || !Object.hasOwn(data, 'details')) {
    return data as PartialResult;
  }
  const { details, ...rest } = data as { readonly details: unknown };
  if (typeof details === 'function') return data as PartialResult;
  return Object.defineProperty(rest, 'details', {
    value: () => details,
    enumerable: false,
  }) as unknown as PartialResult;
}

function withProblems<E extends ConfigError>(error: E, f: Fields): E {
  if (f.problems !== undefined)
    Object.defineProperty(error, 'problems', { value: Object.freeze([...array(f, 'problems')]) });
  return error;
}

function setOwn(target: object, key: string, value: unknown, enumerable: boolean): void {
  Object.defineProperty(target, key, { value, enumerable, writable: true, configurable: true });
}

function str(f: Fields, key: string): string {
  const value = f[key];
  if (typeof value !== 'string') throw new TypeError(`\`${key}\` must be a string`);
  return value;
}

function num(f: Fields, key: string): number {
  const value = f[key];
  if (typeof value !== 'number') throw new TypeError(`\`${key}\` must be a number`);
  return value;
}

function array(f: Fields, key: string): readonly unknown[] {
  const value = f[key];
  if (!Array.isArray(value)) throw new TypeError(`\`${key}\` must be an array`);
  return value;
}

function strings(f: Fields, key: string): readonly string[] {
  const value = array(f, key);
  if (!value.every((v) => typeof v === 'string'))
    throw new TypeError(`\`${key}\` must be an array of strings`);
  return value as readonly string[];
}

function changes(f: Fields): readonly JournalChange[] {
  return array(f, 'changes').map((change) => {
    const { option, values } = (change ?? {}) as { option?: unknown; values?: unknown };
    if (typeof option !== 'string') throw new TypeError('`changes` must name each option');
    return typeof values === 'string' ? { option, values } : { option };
  });
}

/** A budget error's estimate, when it has one (SPEC H3: the call it did not make). */
function estimate(f: Fields): { estimate?: number } {
  return f.estimate === undefined ? {} : { estimate: num(f, 'estimate') };
}
