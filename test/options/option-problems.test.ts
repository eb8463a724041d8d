import { ConfigError } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { nearestName } from '../../src/options/nearest-name.js';
import { OptionProblems } from '../../src/options/problems.js';

describe('OptionProblems (SPEC Q4)', () => {
  it('reports every problem at once, unknown keys with the nearest known name', () => {
    const problems = new OptionProblems('createThing');
    problems.unknownKeys({ maxIteration: 3, colour: 'red', model: 1 }, ['maxIterations', 'model']);
    problems.check(() => {
      throw new ConfigError('model', 'must be a LanguageModel');
    });
    expect(problems.size).toBe(3);
    let thrown: unknown;
    try {
      problems.throwIfAny();
    } catch (error) {
      thrown = error;
    }
    expect(ConfigError.isInstance(thrown)).toBe(true);
    const error = thrown as ConfigError;
    expect(error.problems.map((p) => p.option)).toEqual(['maxIteration', 'colour', 'model']);
    expect(error.option).toBe('maxIteration');
    expect(error.message).toContain('3 invalid options for createThing');
    expect(error.message).toContain('did you mean `maxIterations`?');
    expect(error.message).toContain('`colour`: is not an option of createThing');
    expect(error.message).not.toContain('colour`: is not an option of createThing; did you mean');
  });

  it('keeps the single-option message when one problem is found', () => {
    const problems = new OptionProblems('createThing');
    problems.check(() => {
      throw new ConfigError('maxTokens', 'must be an integer >= 1; got 0');
    });
    expect(() => problems.throwIfAny()).toThrow(
      'Invalid option `maxTokens`: must be an integer >= 1; got 0',
    );
  });

  it('lets other errors through and returns the checked value', () => {
    const problems = new OptionProblems('x');
    expect(problems.check(() => 5)).toBe(5);
    expect(() =>
      problems.check(() => {
        throw new TypeError('a bug');
      }),
    ).toThrow(TypeError);
    expect(() => problems.throwIfAny()).not.toThrow();
  });

  it('suggests only names close enough to be typos', () => {
    expect(nearestName('maxToolCall', ['maxToolCalls', 'model'])).toBe('maxToolCalls');
    expect(nearestName('MAXROUNDS', ['maxRounds'])).toBe('maxRounds');
    expect(nearestName('banana', ['maxRounds', 'model'])).toBeUndefined();
    expect(nearestName('x'.repeat(100), ['x'])).toBeUndefined();
  });
});

describe('nearestName', () => {
  it('counts two swapped neighbouring letters as one slip', () => {
    expect(nearestName('prot', ['port', 'host', 'keepRuns'])).toBe('port');
    expect(nearestName('maxItreations', ['maxIterations', 'maxTokens'])).toBe('maxIterations');
  });
});
