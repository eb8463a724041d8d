// SPEC T8: every tool-loop option is validated when the loop is created; an invalid one throws
// a ConfigError naming it (`error.option`), before any planner or model call.
import {
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  type LanguageModel,
  type ToolLoopOptions,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { thrownBy } from '../support/errors.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: z.object({ word: z.string() }),
  execute: ({ word }) => `definition of ${word}`,
});

/** A model that must never be called: validation happens before any call. */
function unusedModel(): ScriptedModel {
  return new ScriptedModel([]);
}

/** The ConfigError createToolLoop throws for these options (typed loosely, as JavaScript callers may pass anything). */
function configErrorFor(options: unknown): ConfigError {
  return thrownBy(ConfigError, () => createToolLoop(options as ToolLoopOptions));
}

/** A valid loop (a model and a tool) with one option overridden. */
function errorForOption(option: string, value: unknown): ConfigError {
  return configErrorFor({ model: unusedModel(), tools: [lookup], [option]: value });
}

describe('numeric options', () => {
  it.each([
    ['maxRounds', -1, '-1'],
    ['maxRounds', 1.5, '1.5'],
    ['maxRounds', Number.NaN, 'NaN'],
    ['maxRounds', '3', '3'],
    ['maxRounds', Number.POSITIVE_INFINITY, 'Infinity'],
    ['maxToolCalls', -1, '-1'],
    ['maxToolCalls', 1.5, '1.5'],
    ['maxToolCalls', '3', '3'],
    ['concurrency', 0, '0'],
    ['concurrency', -1, '-1'],
    ['concurrency', 2.5, '2.5'],
    ['concurrency', Number.POSITIVE_INFINITY, 'Infinity'],
    ['concurrency', '4', '4'],
    ['timeout', 0, '0'],
    ['timeout', -5, '-5'],
    ['timeout', Number.NaN, 'NaN'],
    ['timeout', Number.POSITIVE_INFINITY, 'Infinity'],
    ['timeout', '100', '100'],
    ['planRetries', -1, '-1'],
    ['planRetries', 0.5, '0.5'],
  ])('rejects %s = %j, naming the option and the value', (option, value, shown) => {
    const error = errorForOption(option, value);
    expect(error.option).toBe(option);
    expect(error.code).toBe('CONFIG_ERROR');
    expect(error.message).toContain(`\`${option}\``);
    expect(error.message).toContain(`got ${shown}`);
  });

  it('says what the option must be', () => {
    expect(errorForOption('maxRounds', -1).message).toContain('integer >= 0');
    expect(errorForOption('planRetries', -1).message).toContain('integer >= 0');
    expect(errorForOption('concurrency', 0).message).toContain('integer > 0');
    expect(errorForOption('timeout', 0).message).toContain('finite number > 0');
  });

  it.each([
    ['maxRounds', 0],
    ['maxRounds', 5],
    ['maxToolCalls', 0],
    ['maxToolCalls', Number.POSITIVE_INFINITY],
    ['concurrency', 1],
    ['timeout', 0.5],
    ['planRetries', 0],
    ['planRetries', 3],
  ])('accepts %s = %j', (option, value) => {
    const model = unusedModel();
    expect(() => createToolLoop({ model, tools: [lookup], [option]: value })).not.toThrow();
  });

  it('treats an explicit undefined as the default', () => {
    expect(() =>
      createToolLoop({
        model: unusedModel(),
        tools: [lookup],
        maxRounds: undefined,
        concurrency: undefined,
        timeout: undefined,
        planRetries: undefined,
      }),
    ).not.toThrow();
  });
});

describe('instant and respond', () => {
  it.each([['yes'], [1], [null]])('rejects instant = %j', (value) => {
    const error = errorForOption('instant', value);
    expect(error.option).toBe('instant');
    expect(error.message).toContain(`got ${String(value)}`);
  });

  it.each([[true], [false]])('accepts instant = %j', (value) => {
    expect(() =>
      createToolLoop({ model: unusedModel(), tools: [lookup], instant: value }),
    ).not.toThrow();
  });

  it.each([['no'], [0], [null]])('rejects enabled = %j, naming it', (value) => {
    const error = errorForOption('enabled', value);
    expect(error.option).toBe('enabled');
    expect(error.message).toContain('`enabled`: must be a boolean');
    expect(error.message).toContain(`got ${String(value)}`);
  });

  it.each([[true], [false]])('accepts enabled = %j', (value) => {
    expect(() =>
      createToolLoop({ model: unusedModel(), tools: [lookup], enabled: value }),
    ).not.toThrow();
  });

  it('refuses a misspelled enabled, naming it', () => {
    expect(errorForOption('enable', false).message).toContain('did you mean `enabled`?');
  });

  it.each([
    ['a number', 42],
    ['a string', 'yes'],
    ['an object without invoke', {}],
    ['an object whose invoke is not a function', { invoke: 'no' }],
  ])('rejects respond as %s', (_name, value) => {
    expect(errorForOption('respond', value).option).toBe('respond');
  });

  it('rejects respond: true without a model to respond with', () => {
    const error = configErrorFor({ planner: () => ({}), tools: [lookup], respond: true });
    expect(error.option).toBe('respond');
    expect(error.message).toContain('model');
  });

  it('accepts respond as false, a function or a chain', () => {
    const model = unusedModel();
    const chain = createChain({ model });
    for (const respond of [false, () => 'answer', chain]) {
      expect(() => createToolLoop({ model, tools: [lookup], respond })).not.toThrow();
    }
  });

  it('accepts a planner with a responder function and no model', () => {
    expect(() =>
      createToolLoop({ planner: () => ({}), tools: [lookup], respond: () => 'ok' }),
    ).not.toThrow();
  });

  it('rejects instructions that are not a string', () => {
    expect(errorForOption('instructions', 42).option).toBe('instructions');
  });
});

describe('model, planner and tools', () => {
  it.each([
    ['a string', 'gpt'],
    ['an object', { plan: true }],
    ['null', null],
  ])('rejects a planner that is %s, not a function', (_name, planner) => {
    expect(configErrorFor({ planner, tools: [lookup] }).option).toBe('planner');
  });

  it.each([
    ['an object without generate and stream', { generate: () => undefined }],
    ['a string', 'gpt-4o'],
    ['a number', 1],
  ])('rejects a model that is %s', (_name, model) => {
    expect(configErrorFor({ model, tools: [lookup] }).option).toBe('model');
  });

  it('rejects a model of another LanguageModel version, naming the version', () => {
    const scripted = unusedModel();
    const v2 = {
      specificationVersion: 'v2',
      provider: 'x',
      modelId: 'x',
      generate: scripted.generate.bind(scripted),
      stream: scripted.stream.bind(scripted),
    } as unknown as LanguageModel;
    const error = configErrorFor({ model: v2, tools: [lookup] });
    expect(error.option).toBe('model');
    expect(error.message).toContain('v2');
  });

  it('requires a model or a planner when tools are given', () => {
    const error = configErrorFor({ tools: [lookup] });
    expect(error.option).toBe('model');
    expect(error.message).toContain('planner');
  });

  it('accepts a planner without a model', () => {
    expect(() => createToolLoop({ planner: () => ({}), tools: [lookup] })).not.toThrow();
  });

  it.each([
    ['an object', { lookup }],
    ['a string', 'lookup'],
    ['a tool, not a list', lookup],
  ])('rejects tools that are %s, not an array', (_name, tools) => {
    expect(configErrorFor({ model: unusedModel(), tools }).option).toBe('tools');
  });

  it('rejects an item that was not made with defineTool, naming its index', () => {
    const error = configErrorFor({
      model: unusedModel(),
      tools: [lookup, { name: 'raw', execute: () => 1 }],
    });
    expect(error.option).toBe('tools');
    expect(error.message).toContain('tools[1]');
  });

  it('rejects two tools with the same name, naming it', () => {
    const twin = defineTool({
      name: 'lookup',
      description: 'Another lookup.',
      input: z.object({}),
      execute: () => 0,
    });
    const error = configErrorFor({ model: unusedModel(), tools: [lookup, twin] });
    expect(error.option).toBe('tools');
    expect(error.message).toContain("'lookup'");
  });
});

describe('the options object', () => {
  it.each([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'model'],
    ['a number', 42],
  ])('rejects %s', (_name, options) => {
    const error = configErrorFor(options);
    expect(error.option).toBe('options');
  });

  it('validates before any model call', () => {
    const model = new ScriptedModel([{ text: '{"nextAction":"response"}' }]);
    expect(() => createToolLoop({ model, tools: [lookup], maxRounds: -1 })).toThrow(ConfigError);
    expect(model.callCount).toBe(0);
  });
});

describe('a loop without tools and without a model', () => {
  it('is valid, and never plans', async () => {
    const loop = createToolLoop({});
    const result = await loop.invoke('hello');
    expect(result).toMatchObject({
      status: 'done',
      stopReason: 'tools-off',
      rounds: 0,
      plans: [],
      answer: undefined,
      actionResults: {},
      extraInstruction: undefined,
      toolLogs: [],
    });
  });

  it('never calls a planner it was given', async () => {
    let calls = 0;
    const loop = createToolLoop({
      planner: () => {
        calls++;
        return { nextAction: 'response' };
      },
    });
    const result = await loop.invoke('hello');
    expect(result.stopReason).toBe('tools-off');
    expect(calls).toBe(0);
  });

  it('with a model, skips planning and only makes the final response', async () => {
    const model = new ScriptedModel([{ text: 'Hi there.' }]);
    const result = await createToolLoop({ model }).invoke('hello');
    expect(result.stopReason).toBe('tools-off');
    expect(result.plans).toEqual([]);
    expect(result.answer).toBe('Hi there.');
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.responseFormat).toBeUndefined();
    model.assertComplete();
  });
});

// SPEC Q4 (issue 13, defect 10): options are validated whole. A misspelled option used to be
// accepted and ignored (`maxToolCalls: 1` bounded nothing), and only the first bad option was
// reported.
describe('the options object as a whole (SPEC Q4)', () => {
  it('refuses a misspelled option, naming the nearest known one', () => {
    const error = errorForOption('maxRound', 3);
    expect(error.option).toBe('maxRound');
    expect(error.message).toBe(
      'Invalid option `maxRound`: is not an option of createToolLoop; did you mean `maxRounds`?',
    );
    expect(errorForOption('planRetrys', 2).message).toContain('did you mean `planRetries`?');
  });

  it('refuses an option the tool loop does not have', () => {
    const error = errorForOption('maxIterations', 1);
    expect(error.option).toBe('maxIterations');
    expect(error.message).toContain('is not an option of createToolLoop');
  });

  it('reports every problem in one ConfigError', () => {
    const error = configErrorFor({
      model: unusedModel(),
      tools: [lookup],
      maxIterations: 1,
      maxRounds: -1,
      instant: 'yes',
    });
    expect(error.problems.map((p) => p.option)).toEqual(['maxIterations', 'maxRounds', 'instant']);
    expect(error.option).toBe('maxIterations');
    expect(error.message).toContain('3 invalid options for createToolLoop');
    expect(error.message).toContain('`maxIterations`: is not an option of createToolLoop');
    expect(error.message).toContain('`maxRounds`: must be an integer >= 0; got -1');
    expect(error.message).toContain('`instant`: must be a boolean; got yes');
  });

  it('reports a missing model with the other problems', () => {
    const error = configErrorFor({ tools: [lookup], concurrency: 0, respond: true });
    expect(error.problems.map((p) => p.option)).toEqual(['model', 'concurrency', 'respond']);
  });

  it('accepts every option, each set to a valid value', () => {
    // Required<…>: a new option makes this test list it too, or it does not compile.
    const options: Required<ToolLoopOptions> = {
      model: unusedModel(),
      name: 'everything',
      planner: () => ({ nextAction: 'response' }),
      tools: [lookup],
      enabled: true,
      maxRounds: 2,
      maxToolCalls: 4,
      concurrency: 2,
      timeout: 60_000,
      planRetries: 0,
      instant: false,
      respond: () => 'answer',
      instructions: 'Answer briefly.',
      beforeToolCall: () => undefined,
      afterToolCall: () => {},
      invalidToolCall: 'return-to-model',
      approvalTimeoutMs: 60_000,
      onApprovalTimeout: 'fail',
      maxApprovalReasonLength: 200,
    };
    expect(() => createToolLoop(options)).not.toThrow();
  });
});
