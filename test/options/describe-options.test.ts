import { ConfigError } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { type Describes, describeOptions } from '../../src/options/describe.js';
import {
  count,
  flag,
  func,
  integer,
  name,
  object,
  oneOf,
  satisfies,
  unchecked,
} from '../../src/options/kinds.js';
import { OptionProblems } from '../../src/options/problems.js';

interface ThingOptions {
  readonly name?: string;
  readonly retries?: number;
  readonly limit?: number;
  readonly mode?: 'fast' | 'safe';
  readonly verbose?: boolean;
  readonly onDone?: (result: string) => void;
  readonly schema?: unknown;
  readonly sampling?: { readonly temperature?: number; readonly seed?: number };
}

const THING_OPTIONS = describeOptions('createThing', {
  name: name('thing'),
  retries: integer(0, { default: 3 }),
  limit: count({
    also: (limit, at) => {
      if (limit !== undefined && at.values.retries === 0)
        at.problem('is pointless with no retries');
    },
  }),
  mode: oneOf(['fast', 'safe'], { default: 'safe' }),
  verbose: flag({ default: false }),
  onDone: func<(result: string) => void>('(result) => void'),
  schema: unchecked(),
  sampling: object({
    temperature: satisfies<number>(
      (v) => typeof v === 'number' && Number.isFinite(v),
      (v) => `must be a finite number; got ${String(v)}`,
    ),
    seed: integer(0),
  }),
});

// The tie: this line fails tsc when ThingOptions and THING_OPTIONS drift apart.
const _described: Describes<ThingOptions, typeof THING_OPTIONS> = true;

function problemsOf(options: object): ConfigError {
  try {
    THING_OPTIONS.parse(options);
  } catch (error) {
    if (ConfigError.isInstance(error)) return error as ConfigError;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('an options description', () => {
  it('derives the keys in check order, and the defaults', () => {
    expect(THING_OPTIONS.keys).toEqual([
      'name',
      'retries',
      'limit',
      'mode',
      'verbose',
      'onDone',
      'schema',
      'sampling',
    ]);
    expect(THING_OPTIONS.defaults).toEqual({
      name: 'thing',
      retries: 3,
      mode: 'safe',
      verbose: false,
    });
  });

  it('returns the checked values with the defaults applied', () => {
    const values = THING_OPTIONS.parse({ limit: Number.POSITIVE_INFINITY, sampling: { seed: 2 } });
    expect(values).toEqual({
      name: 'thing',
      retries: 3,
      limit: Number.POSITIVE_INFINITY,
      mode: 'safe',
      verbose: false,
      sampling: { seed: 2 },
    });
    // Typed from the description: a defaulted option is never undefined.
    const retries: number = values.retries;
    expect(retries).toBe(3);
  });

  it('reports every problem at once: unknown keys first, then in key order', () => {
    const error = problemsOf({
      retrys: 2,
      sampling: { temprature: 0.2, seed: -1 },
      mode: 'quick',
      retries: 1.5,
      verbose: 'yes',
      onDone: 'print',
    });
    expect(error.problems).toEqual([
      { option: 'retrys', message: 'is not an option of createThing; did you mean `retries`?' },
      { option: 'retries', message: 'must be an integer >= 0; got 1.5' },
      { option: 'mode', message: `must be 'fast' or 'safe'; got "quick"` },
      { option: 'verbose', message: 'must be true or false; got yes' },
      { option: 'onDone', message: 'must be a function (result) => void' },
      {
        option: 'sampling.temprature',
        message: 'is not an option of createThing; did you mean `sampling.temperature`?',
      },
      { option: 'sampling.seed', message: 'must be an integer >= 0; got -1' },
    ]);
    expect(error.message).toContain('7 invalid options for createThing');
  });

  it('refuses a nested option that is not an object, listing its keys', () => {
    expect(problemsOf({ sampling: 0.2 }).problems).toEqual([
      { option: 'sampling', message: 'must be an object { temperature?, seed? }; got a number' },
    ]);
  });

  it('runs a rule with the options checked before it', () => {
    expect(problemsOf({ retries: 0, limit: 2 }).problems).toEqual([
      { option: 'limit', message: 'is pointless with no retries' },
    ]);
    expect(THING_OPTIONS.parse({ retries: 1, limit: 2 }).limit).toBe(2);
  });

  it('collects into a caller’s problems without throwing', () => {
    const problems = new OptionProblems('createThing');
    problems.add('tools', 'has two tools named "add"');
    const values = THING_OPTIONS.collect({ retries: -1 }, problems);
    expect(values.retries).toBeUndefined();
    expect(problems.size).toBe(2);
  });

  it('fails tsc when an interface and its description drift', () => {
    interface Wider extends ThingOptions {
      readonly extra?: string;
    }
    interface Retyped extends Omit<ThingOptions, 'mode'> {
      readonly mode?: 'fast' | 'safe' | 'auto';
    }
    // @ts-expect-error `extra` is in the interface only
    const _unlisted: Describes<Wider, typeof THING_OPTIONS> = true;
    // @ts-expect-error `mode` takes a value the description refuses
    const _retyped: Describes<Retyped, typeof THING_OPTIONS> = true;
    const drift: Describes<Wider, typeof THING_OPTIONS> = { drifted: 'extra' };
    expect(drift.drifted).toBe('extra');
  });
});
