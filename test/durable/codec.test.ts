// Issue 15, part 2: values cross the journal as JSON and come back with their classes.
import {
  AbortError,
  assistantMessage,
  ChainError,
  ConfigError,
  InputError,
  ModelError,
  ProtocolError,
  StatecraftError,
  systemMessage,
  TimeoutError,
  TokenLimitError,
  ToolCollisionError,
  Transcript,
  TranscriptError,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { describe, expect, it } from 'vitest';
import { decode, encode } from '../../src/durable/codec.js';
import { JournalCodecError } from '../../src/durable/codec-error.js';
import { JournalError } from '../../src/durable/journal-error.js';
import { JournalMismatchError } from '../../src/durable/journal-mismatch.js';

/** Through the codec and a real JSON text, as a journal line would take it. */
function roundTrip<T>(value: T): T {
  return decode(JSON.parse(JSON.stringify(encode(value)))) as T;
}

/** The error thrown by `run`; fails the test when nothing is thrown. */
function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

/** Every field a revived error must have back, own enumerable or not. */
function shapeOf(error: Error): Record<string, unknown> {
  const shape: Record<string, unknown> = {
    class: Object.getPrototypeOf(error).constructor,
    name: error.name,
    message: error.message,
    stack: error.stack,
    hasCause: Object.hasOwn(error, 'cause'),
  };
  for (const key of Object.keys(error))
    shape[key] = (error as unknown as Record<string, unknown>)[key];
  if (error.cause instanceof Error) shape.cause = shapeOf(error.cause);
  else if (Object.hasOwn(error, 'cause')) shape.cause = error.cause;
  return shape;
}

describe('plain JSON', () => {
  it('is written as it is, and a tree that needs no tag is not copied', () => {
    const value = { a: [1, 'two', true, null, { b: { c: [] } }], d: -1.5, e: '' };
    expect(encode(value)).toBe(value);
    expect(decode(value)).toBe(value);
    expect(roundTrip(value)).toEqual(value);
  });

  it('copies only the path down to a value that needs a tag', () => {
    const untouched = { x: [1, 2, 3] };
    const value = { untouched, list: [untouched, { when: new Date(0) }] };
    const json = encode(value) as { untouched: unknown; list: unknown[] };
    expect(json).not.toBe(value);
    expect(json.untouched).toBe(untouched);
    expect(json.list[0]).toBe(untouched);
    expect(json.list[1]).toEqual({ when: { $sc: 'date', v: '1970-01-01T00:00:00.000Z' } });
  });
});

describe('tagged values', () => {
  it('keeps undefined in objects and arrays', () => {
    const value = { a: undefined, b: [1, undefined, 3], c: { d: undefined } };
    const back = roundTrip(value);
    expect(back).toStrictEqual(value);
    expect(Object.hasOwn(back, 'a')).toBe(true);
    expect(back.b).toHaveLength(3);
    expect(roundTrip(undefined)).toBeUndefined();
    expect(encode({ a: undefined })).toEqual({ a: { $sc: 'undefined' } });
  });

  it('keeps NaN, Infinity, -Infinity and -0', () => {
    const back = roundTrip([Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0]);
    expect(back[0]).toBeNaN();
    expect(back[1]).toBe(Number.POSITIVE_INFINITY);
    expect(back[2]).toBe(Number.NEGATIVE_INFINITY);
    expect(Object.is(back[3], -0)).toBe(true);
    expect(Object.is(back[4], 0)).toBe(true);
  });

  it('keeps BigInts as tagged decimal strings', () => {
    const big = 2n ** 70n;
    expect(encode({ n: big })).toEqual({ n: { $sc: 'bigint', v: '1180591620717411303424' } });
    expect(roundTrip({ n: big, m: -5n })).toEqual({ n: big, m: -5n });
  });

  it('keeps Dates, including an invalid one', () => {
    const back = roundTrip({ at: new Date('2024-05-06T07:08:09.010Z'), bad: new Date(Number.NaN) });
    expect(back.at).toBeInstanceOf(Date);
    expect(back.at.toISOString()).toBe('2024-05-06T07:08:09.010Z');
    expect(back.bad).toBeInstanceOf(Date);
    expect(back.bad.getTime()).toBeNaN();
  });

  it('keeps Maps and Sets, with tagged keys and values inside', () => {
    const value = {
      map: new Map<unknown, unknown>([
        ['a', 1],
        [2n, new Date(5)],
        [{ k: 1 }, undefined],
      ]),
      set: new Set([1, 'x', 3n]),
    };
    const back = roundTrip(value);
    expect(back.map).toBeInstanceOf(Map);
    expect(back.set).toBeInstanceOf(Set);
    expect(back).toEqual(value);
    expect([...back.map.keys()][1]).toBe(2n);
  });

  it('revives a Transcript as a Transcript of frozen messages, as Transcript.from does', () => {
    const transcript = Transcript.from([
      systemMessage('be brief'),
      userMessage('add 1 and 2'),
      assistantMessage('', [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }]),
      toolResultMessage({ toolCallId: 'c1', name: 'add', output: 3, success: true }),
      assistantMessage('3', [], { truncated: true, truncatedReason: 'cancelled' }),
    ]).prepend(systemMessage('head'));
    const back = roundTrip({ transcript });
    expect(back.transcript).toBeInstanceOf(Transcript);
    expect(back.transcript.toArray()).toEqual(transcript.toArray());
    expect(back.transcript.length).toBe(6);
    for (const message of back.transcript) expect(Object.isFrozen(message)).toBe(true);
    const call = back.transcript.at(3);
    if (call?.role !== 'assistant') throw new Error('expected the assistant message');
    expect(Object.isFrozen(call.toolCalls)).toBe(true);
    expect(Object.isFrozen(call.toolCalls[0])).toBe(true);
  });
});

describe('the "$sc" escape', () => {
  it('wraps a user object that has the tag key, so it comes back as data', () => {
    const value = {
      a: { $sc: 'undefined' },
      b: { $sc: 'date', v: 'not a date' },
      c: [{ $sc: { $sc: 'bigint', v: '1' }, other: 2n }],
    };
    expect(encode(value.a)).toEqual({ $sc: 'object', v: { $sc: 'undefined' } });
    const back = roundTrip(value);
    expect(back).toEqual(value);
    expect(back.c[0]?.other).toBe(2n);
  });

  it('keeps a __proto__ key an ordinary key', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "d": {"$sc": "undefined"}}');
    const back = roundTrip(value) as Record<string, unknown>;
    expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
    expect(Object.hasOwn(back, '__proto__')).toBe(true);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('errors', () => {
  const cause = new TypeError('socket hang up');
  const errors: [string, Error][] = [
    ['StatecraftError', new StatecraftError('base', { cause })],
    ['ConfigError', new ConfigError('model', 'must be a LanguageModel')],
    [
      'ConfigError.of',
      ConfigError.of('createChain', [
        { option: 'model', message: 'is required' },
        { option: 'maxIterations', message: 'must be a positive integer' },
      ]),
    ],
    ['InputError', new InputError('expected a string, got 123')],
    ['ProtocolError', new ProtocolError('maxIterations reached', { cause: 'a string cause' })],
    ['TokenLimitError', new TokenLimitError(1000, 1234, { cause })],
    ['ChainError', new ChainError('no valid result')],
    ['TimeoutError', new TimeoutError(5000, 'timed out after 5000 ms')],
    ['TranscriptError', new TranscriptError(3, 'tool result without a call')],
    ['ModelError', new ModelError('rate limited', { retryable: true, status: 429, cause })],
    ['ModelError without status', new ModelError('bad')],
    ['AbortError', new AbortError(undefined, { cause: { why: 'user', at: 3n } })],
    ['ToolCollisionError', new ToolCollisionError('neural-1', ['add', 'lookup'])],
    [
      'JournalMismatchError',
      new JournalMismatchError({
        entry: 7,
        expectedHash: 'a'.repeat(64),
        actualHash: 'b'.repeat(64),
      }),
    ],
    [
      'JournalMismatchError naming what changed',
      new JournalMismatchError({
        entry: 0,
        expectedHash: 'a'.repeat(64),
        actualHash: 'b'.repeat(64),
        request: "input of run 'r'",
        changes: [{ option: 'maxIterations', values: '5 → 8' }, { option: 'systemPrompt' }],
        advice: 'A run id starts one run: resume it, or use a new id for this input.',
      }),
    ],
    ['JournalCodecError', new JournalCodecError('$.x', 'Cannot journal $.x')],
    [
      'JournalError',
      new JournalError('no-space', 'The disk is full', {
        runId: 'trip',
        file: '/tmp/trip.jsonl',
        line: 3,
        cause: Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }),
      }),
    ],
    ['JournalError without a file', new JournalError('timed-out', 'The store stalled')],
  ];

  for (const [label, error] of errors) {
    it(`revives ${label} as its class with its fields, message, name, stack and cause`, () => {
      const back = roundTrip(error);
      expect(back).toBeInstanceOf(Object.getPrototypeOf(error).constructor);
      expect(shapeOf(back)).toEqual(shapeOf(error));
      expect(back).toEqual(error);
    });
  }

  it('passes isInstance and keeps `code` for every statecraft class', () => {
    const classes = [
      ConfigError,
      TokenLimitError,
      ModelError,
      AbortError,
      ToolCollisionError,
      JournalMismatchError,
      JournalError,
    ] as const;
    for (const C of classes) {
      const original = errors.find(([, e]) => e.constructor === C)?.[1] as StatecraftError;
      const back = roundTrip(original);
      expect(C.isInstance(back)).toBe(true);
      expect(StatecraftError.isInstance(back)).toBe(true);
      expect(back.code).toBe(C.code);
    }
    const collision = roundTrip(new ToolCollisionError('r', ['x']));
    expect(ConfigError.isInstance(collision)).toBe(true);
    expect(Object.isFrozen(collision.toolNames)).toBe(true);
    expect(Object.isFrozen(collision.problems)).toBe(true);
  });

  it('keeps a nested cause chain and the partial result', () => {
    const transcript = [userMessage('hi'), assistantMessage('hello')];
    const error = new TimeoutError(10, 'late', {
      cause: new ModelError('upstream', { status: 503, cause: new RangeError('deep') }),
      partial: { transcript, usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 } },
    });
    const back = roundTrip(error);
    expect(back.partial).toEqual(error.partial);
    const middle = back.cause as ModelError;
    expect(ModelError.isInstance(middle)).toBe(true);
    expect(middle.status).toBe(503);
    expect(middle.cause).toBeInstanceOf(RangeError);
    expect((middle.cause as Error).message).toBe('deep');
  });

  it('revives a foreign error as a plain Error with its name, message and JSON-able fields', () => {
    class HttpError extends Error {
      override name = 'HttpError';
      status = 500;
      headers = new Headers({ a: 'b' });
      constructor() {
        super('upstream failed', { cause: new Error('root') });
      }
    }
    const back = roundTrip<unknown>(new HttpError()) as Error & Record<string, unknown>;
    expect(back.constructor).toBe(Error);
    expect(back.name).toBe('HttpError');
    expect(back.message).toBe('upstream failed');
    expect(back.status).toBe(500);
    // A Headers object has no JSON form: a foreign error is a diagnostic, the rest is kept.
    expect(Object.hasOwn(back, 'headers')).toBe(false);
    expect((back.cause as Error).message).toBe('root');
    const node = Object.assign(new Error('ENOENT: no such file'), { code: 'ENOENT', errno: -2 });
    expect(roundTrip(node)).toMatchObject({ code: 'ENOENT', errno: -2, message: node.message });
  });

  it('revives a user subclass or an unknown code as its nearest known class, keeping code and name', () => {
    class RateLimitError extends ModelError {}
    class VendorError extends StatecraftError {
      static override readonly code = 'VENDOR';
      readonly vendor = 'acme';
    }
    const sub = roundTrip(new RateLimitError('slow down', { status: 429 }));
    expect(ModelError.isInstance(sub)).toBe(true);
    expect(sub.name).toBe('RateLimitError');
    expect(sub.status).toBe(429);
    const unknown = roundTrip(new VendorError('x')) as StatecraftError & { vendor: string };
    expect(StatecraftError.isInstance(unknown)).toBe(true);
    expect(unknown.code).toBe('VENDOR');
    expect(unknown.name).toBe('VendorError');
    expect(unknown.vendor).toBe('acme');
  });
});

describe('refusals', () => {
  it('refuses a function, naming its path', () => {
    const value = { context: { steps: [{}, {}, { x: () => 1 }] } };
    const error = thrown(() => encode(value));
    if (!JournalCodecError.isInstance(error)) throw error;
    expect(error.code).toBe('JOURNAL_CODEC');
    expect(error.path).toBe('$.context.steps[2].x');
    expect(error.message).toContain('$.context.steps[2].x');
    expect(error.message).toContain('function');
  });

  it('refuses symbols, cycles and instances of unknown classes, naming each path', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    class Opaque {
      secret = 1;
    }
    const cases: [unknown, string][] = [
      [{ 'a key': [Symbol('s')] }, '$["a key"][0]'],
      [cyclic, '$.self.back'],
      [{ m: new Map([['k', new Opaque()]]) }, '$.m[map entry 0].value'],
      [new Set([() => 0]), '$[0]'],
      [{ e: new ModelError('x', { cause: { f: () => 0 } }) }, '$.e.cause.f'],
      [
        Transcript.from([userMessage('hi'), { role: 'user', content: Symbol('no') } as never]),
        '$[1].content',
      ],
    ];
    for (const [value, path] of cases) {
      const error = thrown(() => encode(value));
      if (!JournalCodecError.isInstance(error)) throw error;
      expect(error.path).toBe(path);
    }
  });

  it('honours toJSON for objects of other classes, as JSON would', () => {
    expect(roundTrip({ u: new URL('https://example.com/a') })).toEqual({
      u: 'https://example.com/a',
    });
  });

  it('refuses an unknown or malformed tag when decoding, naming its path', () => {
    const cases: [unknown, string][] = [
      [{ a: [{ $sc: 'hologram', v: 1 }] }, '$.a[0]'],
      [{ n: { $sc: 'bigint', v: '12x' } }, '$.n'],
      [{ n: { $sc: 'number', v: 'Eleven' } }, '$.n'],
      [{ e: { $sc: 'error', v: { name: 'Error' } } }, '$.e'],
      [{ t: { $sc: 'undefined', extra: 1 } }, '$.t'],
    ];
    for (const [json, path] of cases) {
      const error = thrown(() => decode(json));
      if (!JournalCodecError.isInstance(error)) throw error;
      expect(error.path).toBe(path);
    }
  });
});
