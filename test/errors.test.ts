import {
  AbortError,
  ChainError,
  ConfigError,
  ModelError,
  ProtocolError,
  StatecraftError,
  TokenLimitError,
  TranscriptError,
  userMessage,
} from 'statecraft';
import { usage } from 'statecraft/model';
import { ScriptExhaustedError } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';

type ErrorsModule = typeof import('../src/errors.js');

/**
 * A second instance of src/errors.ts, as a duplicated statecraft dependency would load it.
 * Vite keys modules by id including the query, so the suffix yields a separate evaluation.
 */
async function loadSecondCopy(): Promise<ErrorsModule> {
  const specifier = '../src/errors.ts?second-copy';
  return (await import(/* @vite-ignore */ specifier)) as ErrorsModule;
}

// Every error class with one instance of it and the code it must keep across versions.
const cases = [
  { Class: StatecraftError, code: 'STATECRAFT_ERROR', make: () => new StatecraftError('base') },
  { Class: ConfigError, code: 'CONFIG_ERROR', make: () => new ConfigError('opt', 'bad') },
  { Class: ProtocolError, code: 'PROTOCOL_ERROR', make: () => new ProtocolError('protocol') },
  { Class: TokenLimitError, code: 'TOKEN_LIMIT', make: () => new TokenLimitError(100, 150) },
  { Class: ChainError, code: 'CHAIN_ERROR', make: () => new ChainError('chain') },
  { Class: TranscriptError, code: 'TRANSCRIPT_INVALID', make: () => new TranscriptError(2, 't') },
  { Class: ModelError, code: 'MODEL_ERROR', make: () => new ModelError('model') },
  { Class: AbortError, code: 'ABORTED', make: () => new AbortError() },
  {
    Class: ScriptExhaustedError,
    code: 'SCRIPT_EXHAUSTED',
    make: () => new ScriptExhaustedError('no more script'),
  },
] as const;

// The classes a value can belong to; StatecraftError is checked separately (it holds them all).
const leafClasses = cases.map((c) => c.Class).filter((Class) => Class !== StatecraftError);

describe('error codes', () => {
  it.each(cases)('$Class.name has the stable code $code', ({ Class, code, make }) => {
    const error = make();
    expect(Class.code).toBe(code);
    expect(error.code).toBe(code);
    expect(error.name).toBe(Class.name);
    expect(error).toBeInstanceOf(Error);
  });

  it('gives every class its own code', () => {
    const codes = cases.map((c) => c.Class.code);
    expect(new Set(codes).size).toBe(codes.length);
  });
});

describe('isInstance', () => {
  it.each(cases)(
    'recognises a $Class.name as its own class and a StatecraftError',
    ({ Class, make }) => {
      const error = make();
      expect(Class.isInstance(error)).toBe(true);
      expect(StatecraftError.isInstance(error)).toBe(true);
    },
  );

  it.each(cases)('does not take a $Class.name for an unrelated class', ({ Class, make }) => {
    const error = make();
    const unrelated = leafClasses.filter(
      (Other) =>
        Other !== Class &&
        // A ScriptExhaustedError is also a ModelError: that relation is checked below.
        !(Class === ScriptExhaustedError && Other === ModelError),
    );
    expect(unrelated.length).toBeGreaterThan(5);
    for (const Other of unrelated) expect(Other.isInstance(error)).toBe(false);
  });

  it('follows the subclass chain: a ScriptExhaustedError is a ModelError', () => {
    const error = new ScriptExhaustedError('out of script');
    expect(ModelError.isInstance(error)).toBe(true);
    expect(ScriptExhaustedError.isInstance(error)).toBe(true);
    expect(ConfigError.isInstance(error)).toBe(false);
    // ...but not the other way round: a plain ModelError is no ScriptExhaustedError.
    expect(ScriptExhaustedError.isInstance(new ModelError('model'))).toBe(false);
  });

  it('keeps a user subclass without its own code apart from its parent', () => {
    class MyAdapterError extends ModelError {}
    const mine = new MyAdapterError('adapter');
    expect(ModelError.isInstance(mine)).toBe(true);
    expect(MyAdapterError.isInstance(mine)).toBe(true);
    expect(MyAdapterError.isInstance(new ModelError('model'))).toBe(false);
    expect(mine.code).toBe('MODEL_ERROR');
  });

  it.each([
    ['a plain Error', new Error('plain')],
    ['an Error whose code matches', Object.assign(new Error('x'), { code: 'CONFIG_ERROR' })],
    ['an object whose code matches', { code: 'CONFIG_ERROR', name: 'ConfigError' }],
    ['null', null],
    ['undefined', undefined],
    ['the code as a string', 'CONFIG_ERROR'],
    ['a number', 42],
  ])('is false for %s', (_label, value) => {
    expect(StatecraftError.isInstance(value)).toBe(false);
    expect(ConfigError.isInstance(value)).toBe(false);
  });

  it('narrows the type so the subclass fields are usable', () => {
    const error: unknown = new ConfigError('maxIterations', 'must be positive');
    if (!ConfigError.isInstance(error)) throw new Error('expected a ConfigError');
    expect(error.option).toBe('maxIterations');
  });
});

describe('isInstance across copies of the package', () => {
  it('loads a separate module instance (the premise of the tests below)', async () => {
    const copy = await loadSecondCopy();
    expect(copy.ConfigError).not.toBe(ConfigError);
    expect(copy.StatecraftError).not.toBe(StatecraftError);
    expect(copy.ConfigError.code).toBe('CONFIG_ERROR');
  });

  it('recognises an error from the other copy, where instanceof cannot', async () => {
    const copy = await loadSecondCopy();
    const foreign = new copy.ConfigError('model', 'is required');
    expect(foreign instanceof ConfigError).toBe(false);
    expect(foreign instanceof StatecraftError).toBe(false);
    expect(ConfigError.isInstance(foreign)).toBe(true);
    expect(StatecraftError.isInstance(foreign)).toBe(true);
    expect(ModelError.isInstance(foreign)).toBe(false);
  });

  it('works in the other direction and along the subclass chain', async () => {
    const copy = await loadSecondCopy();
    const local = new ScriptExhaustedError('out of script');
    expect(local instanceof copy.ModelError).toBe(false);
    expect(copy.ModelError.isInstance(local)).toBe(true);
    expect(copy.StatecraftError.isInstance(local)).toBe(true);
    expect(copy.ConfigError.isInstance(local)).toBe(false);
  });
});

describe('error fields', () => {
  it('carries the partial result (transcript and usage) of the run it ended', () => {
    const partial = {
      transcript: [userMessage('Hello')],
      usage: usage({ inputTokens: 12, outputTokens: 3 }),
    };
    const error = new ProtocolError('maxIterations reached', { partial });
    expect(error.partial).toBe(partial);
    expect(error.partial?.transcript[0]).toEqual({ role: 'user', content: 'Hello' });
    expect(error.partial?.usage.totalTokens).toBe(15);
    const limit = new TokenLimitError(10, 15, { partial });
    expect(limit.partial).toBe(partial);
    expect(new ProtocolError('no partial').partial).toBeUndefined();
  });

  it('keeps the cause', () => {
    const cause = new Error('socket hang up');
    const error = new ModelError('request failed', { cause, retryable: true });
    expect(error.cause).toBe(cause);
    expect(new ChainError('x', { cause: 'a string cause' }).cause).toBe('a string cause');
    expect(new ChainError('no cause')).not.toHaveProperty('cause');
  });

  it('ModelError is not retryable unless told, and keeps the status', () => {
    const plain = new ModelError('bad request');
    expect(plain.retryable).toBe(false);
    expect(plain.status).toBeUndefined();
    const rateLimited = new ModelError('rate limited', { retryable: true, status: 429 });
    expect(rateLimited.retryable).toBe(true);
    expect(rateLimited.status).toBe(429);
    expect(rateLimited.message).toBe('rate limited');
  });

  it('ConfigError names the option in its field and its message', () => {
    const error = new ConfigError('maxIterations', 'must be a positive integer');
    expect(error.option).toBe('maxIterations');
    expect(error.message).toBe('Invalid option `maxIterations`: must be a positive integer');
  });

  it('TokenLimitError keeps the limit and the tokens used', () => {
    const error = new TokenLimitError(1000, 1234);
    expect(error.limit).toBe(1000);
    expect(error.used).toBe(1234);
    expect(error.message).toContain('1000');
    expect(error.message).toContain('1234');
  });

  it('TranscriptError keeps the index of the offending message', () => {
    expect(new TranscriptError(3, 'orphan tool result').index).toBe(3);
  });

  it("AbortError has the reason 'cancelled' and a default message", () => {
    const error = new AbortError();
    expect(error.reason).toBe('cancelled');
    expect(error.message).toBe('The run was cancelled');
    expect(new AbortError('stopped by user').message).toBe('stopped by user');
  });
});
