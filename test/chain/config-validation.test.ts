// Every chain option is validated when the chain is created: an invalid one throws a
// ConfigError naming it (`error.option`), before any model call.
import {
  type ChainOptions,
  ConfigError,
  createChain,
  defineTool,
  type LanguageModel,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { thrownBy } from '../support/errors.js';
import { add } from './helpers.js';

const model = new ScriptedModel([]);

/** Creates a chain with one option overridden (typed loosely, as JavaScript callers may pass anything). */
function configErrorFor(overrides: Record<string, unknown>): ConfigError {
  return thrownBy(ConfigError, () =>
    createChain({ model, ...overrides } as unknown as ChainOptions<string>),
  );
}

describe('chain option validation', () => {
  it.each([
    ['maxIterations', 1.5],
    ['maxIterations', -3],
    ['maxIterations', '10'],
    ['maxIterations', Number.NaN],
    ['maxIterations', Number.NEGATIVE_INFINITY],
    ['maxToolCalls', -1],
    ['maxToolCalls', 2.5],
    ['maxToolCalls', '3'],
    ['maxCost', 0],
    ['maxCost', -1],
    ['maxCost', Number.POSITIVE_INFINITY],
    ['maxCost', '1'],
    ['prices', 3],
    ['prices', null],
    ['maxTokens', -1],
    ['maxTokens', 0],
    ['maxTokens', 100.5],
    ['toolConcurrency', 0],
    ['toolConcurrency', 1.5],
    ['toolConcurrency', -1],
    ['toolTimeoutMs', 0],
    ['toolTimeoutMs', -5],
    ['toolTimeoutMs', Number.NaN],
    ['streamBatchSize', 0],
    ['validateResult', 'yes'],
    ['validateResult', { ok: true }],
    ['resultCacheKey', ''],
    ['resultCacheKey', 42],
    ['toolResponseInstructions', true],
    ['toolResponseInstructions', 7],
  ])('rejects %s = %j', (option, value) => {
    const error = configErrorFor({ [option]: value });
    expect(error.option).toBe(option);
    expect(error.code).toBe('CONFIG_ERROR');
    expect(error.message).toContain(option);
  });

  it.each([
    ['maxIterations', 1],
    ['maxIterations', 0],
    ['maxIterations', Number.POSITIVE_INFINITY],
    ['maxToolCalls', 0],
    ['maxToolCalls', Number.POSITIVE_INFINITY],
    ['prices', { inputPerMillion: 0, outputPerMillion: 0 }],
    ['maxTokens', 1],
    ['toolConcurrency', 1],
    ['toolTimeoutMs', 0.5],
    ['streamBatchSize', 1],
    ['toolResponseInstructions', false],
    ['toolResponseInstructions', 'note'],
    ['resultCacheKey', 'k'],
  ])('accepts %s = %j', (option, value) => {
    expect(() => createChain({ model, [option]: value } as ChainOptions<string>)).not.toThrow();
  });

  it('requires a model', () => {
    expect(configErrorFor({ model: undefined }).option).toBe('model');
    expect(configErrorFor({ model: null }).option).toBe('model');
  });

  // Regression: a bug this test found at HEAD 29a55e2 (fixed since, in the working tree).
  // CreateChain(undefined) (a JavaScript caller, or `createChain(opts)` with opts unset)
  // throws a bare TypeError "Cannot read properties of undefined (reading 'tools')" instead of
  // the ConfigError('options', 'must be an object') that chainConfig is written to throw.
  // Cause at HEAD: src/chain/create-chain.ts:113 reads `options.tools` before calling chainConfig,
  // whose own check (src/chain/options.ts:104) is therefore unreachable.
  it('rejects missing options with a ConfigError naming them', () => {
    expect(
      thrownBy(ConfigError, () => createChain(undefined as unknown as ChainOptions<string>)).option,
    ).toBe('options');
  });

  it('rejects something that is not a LanguageModel, or another interface version', () => {
    expect(configErrorFor({ model: { generate: () => undefined } }).option).toBe('model');
    const v2 = {
      specificationVersion: 'v2',
      provider: 'x',
      modelId: 'x',
      generate: model.generate.bind(model),
      stream: model.stream.bind(model),
    } as unknown as LanguageModel;
    const error = configErrorFor({ model: v2 });
    expect(error.option).toBe('model');
    expect(error.message).toContain('v2');
  });

  it('rejects two tools with the same name', () => {
    const twin = defineTool({
      name: 'add',
      description: 'Another add.',
      input: z.object({}),
      execute: () => 0,
    });
    const error = configErrorFor({ tools: [add, twin] });
    expect(error.option).toBe('tools');
    expect(error.message).toContain("'add'");
  });

  it('rejects a tool that was not made with defineTool', () => {
    const error = configErrorFor({ tools: [{ name: 'raw', execute: () => 1 }] });
    expect(error.option).toBe('tools');
  });

  it('rejects a remote without listTools/execute', () => {
    expect(configErrorFor({ remote: { name: 'r', execute: () => undefined } }).option).toBe(
      'remote',
    );
  });

  it('validates when the chain is created, before any model call', () => {
    const scripted = new ScriptedModel([{ text: 'never' }]);
    expect(() =>
      createChain({ model: scripted, maxIterations: -1 } as ChainOptions<string>),
    ).toThrow();
    expect(scripted.callCount).toBe(0);
  });
});

// SPEC Q4 (issue 13, defect 10): options are validated whole. A misspelled option used to be
// accepted and ignored (`maxIteration: 3` ran with the default 10), and only the first bad
// option was reported.
describe('the options object as a whole (SPEC Q4)', () => {
  it('refuses a misspelled option, naming the nearest known one', () => {
    const error = configErrorFor({ maxIteration: 3 });
    expect(error.option).toBe('maxIteration');
    expect(error.message).toBe(
      'Invalid option `maxIteration`: is not an option of createChain; did you mean `maxIterations`?',
    );
  });

  it('refuses an unknown option even when it is set to undefined', () => {
    expect(configErrorFor({ maxTokenz: undefined }).message).toContain('did you mean `maxTokens`?');
  });

  it('refuses an unknown option near no known one without guessing', () => {
    const error = configErrorFor({ banana: true });
    expect(error.option).toBe('banana');
    expect(error.message).not.toContain('did you mean');
  });

  it('reports every problem in one ConfigError', () => {
    const error = configErrorFor({ maxIteration: 3, maxTokens: 0, model: undefined });
    expect(error.problems.map((p) => p.option)).toEqual(['maxIteration', 'model', 'maxTokens']);
    expect(error.option).toBe('maxIteration');
    expect(error.message).toContain('3 invalid options for createChain');
    expect(error.message).toContain('`maxIteration`: is not an option of createChain');
    expect(error.message).toContain('`model`: must be a LanguageModel');
    expect(error.message).toContain('`maxTokens`: must be an integer >= 1; got 0');
  });

  it('reports bad values of several options, not only the first', () => {
    const error = configErrorFor({
      toolConcurrency: 0,
      validateResult: 'yes',
      earlyStopping: 'sometimes',
      systemPrompt: 42,
      warnRecursiveCalls: 'no',
    });
    expect(error.problems.map((p) => p.option)).toEqual([
      'toolConcurrency',
      'earlyStopping',
      'systemPrompt',
      'warnRecursiveCalls',
      'validateResult',
    ]);
  });

  it.each([
    [{ modelSettings: { temprature: 0 } }, 'modelSettings.temprature', 'modelSettings.temperature'],
    [{ modelSettings: { topp: 0.9 } }, 'modelSettings.topp', 'modelSettings.topP'],
    [
      { warningPrompt: { iteration: 'hurry' } },
      'warningPrompt.iteration',
      'warningPrompt.iterations',
    ],
    [
      { warningPrompt: { tokens: 'hurry' }, warningThreshold: { tokens: -1, token: 5 } },
      'warningThreshold.token',
      'warningThreshold.tokens',
    ],
    [
      { responseFormat: { type: 'json_schema', name: 'n', schema: {}, strikt: true } },
      'responseFormat.strikt',
      'responseFormat.strict',
    ],
  ])('refuses a nested typo by its dotted path: %j', (overrides, option, near) => {
    const error = configErrorFor(overrides);
    expect(error.problems.map((p) => p.option)).toEqual([option]);
    expect(error.message).toContain(`Invalid option \`${option}\``);
    expect(error.message).toContain(`did you mean \`${near}\`?`);
  });

  it.each([
    [{ modelSettings: 0.2 }, 'modelSettings'],
    [{ modelSettings: { temperature: '0.2' } }, 'modelSettings.temperature'],
    [{ modelSettings: { maxOutputTokens: 0 } }, 'modelSettings.maxOutputTokens'],
    [{ modelSettings: { seed: 1.5 } }, 'modelSettings.seed'],
    [{ warningPrompt: 'hurry' }, 'warningPrompt'],
    [{ responseFormat: 'json' }, 'responseFormat'],
    [{ responseFormat: { type: 'yaml' } }, 'responseFormat.type'],
    [{ responseFormat: { type: 'json_object', schema: {} } }, 'responseFormat.schema'],
    [{ responseFormat: { type: 'json_schema', name: 'n' } }, 'responseFormat.schema'],
    [{ mustPrinciples: 'be nice' }, 'mustPrinciples'],
    [{ remote: null }, 'remote'],
  ])('refuses %j, naming %s', (overrides, option) => {
    expect(configErrorFor(overrides).problems.map((p) => p.option)).toEqual([option]);
  });

  it('reports problems at several depths together', () => {
    const error = configErrorFor({
      maxIterations: -1,
      modelSettings: { temprature: 0, topP: 'high' },
      warningThreshold: { iterations: -1 },
    });
    expect(error.problems.map((p) => p.option)).toEqual([
      'maxIterations',
      'modelSettings.temprature',
      'modelSettings.topP',
      'warningPrompt.iterations',
    ]);
    expect(error.message).toContain('4 invalid options for createChain');
  });

  it('accepts every option, each set to a valid value', () => {
    const remote = { name: 'remote', listTools: () => [], execute: () => Promise.reject() };
    // Required<…>: a new option makes this test list it too, or it does not compile.
    const options: Required<ChainOptions<{ answer: number }>> = {
      model,
      name: 'everything',
      tools: [add],
      systemPrompt: 'You add.',
      baseInstruction: 'Answer in JSON.',
      mustPrinciples: ['Use the tool.'],
      maxIterations: 3,
      maxTokens: 1000,
      maxToolCalls: 5,
      maxCost: 0.5,
      prices: { inputPerMillion: 2.5, cachedInputPerMillion: 1.25, outputPerMillion: 10 },
      maxExecutionTime: 60_000,
      earlyStopping: 'generate',
      warningPrompt: { iterations: 'Hurry.', tokens: 'Be brief.' },
      warningThreshold: { iterations: -1, tokens: 500 },
      toolResponseInstructions: false,
      responseFormat: {
        type: 'json_schema',
        name: 'answer',
        schema: { type: 'object' },
        description: 'The answer.',
        strict: true,
      },
      outputSchema: z.object({ answer: z.number() }),
      validateResult: () => ({ ok: true }),
      beforeToolCall: () => undefined,
      afterToolCall: () => {},
      invalidToolCall: 'return-to-model',
      approvalTimeoutMs: 60_000,
      onApprovalTimeout: 'fail',
      maxApprovalReasonLength: 200,
      warnRecursiveCalls: false,
      catchIntermediateResult: false,
      resultCacheKey: 'answer',
      remote,
      toolConcurrency: 2,
      toolTimeoutMs: 5000,
      streamBatchSize: 3,
      modelSettings: { temperature: 0, topP: 0.9, maxOutputTokens: 200, seed: 7 },
    };
    expect(() => createChain(options)).not.toThrow();
  });
});
