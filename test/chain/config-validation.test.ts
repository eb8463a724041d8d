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
    ['maxIterations', 0],
    ['maxIterations', 1.5],
    ['maxIterations', -3],
    ['maxIterations', '10'],
    ['maxIterations', Number.NaN],
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
  // Cause at HEAD: src/runtime/create-chain.ts:113 reads `options.tools` before calling chainConfig,
  // whose own check (src/runtime/chain-options.ts:104) is therefore unreachable.
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
      createChain({ model: scripted, maxIterations: 0 } as ChainOptions<string>),
    ).toThrow();
    expect(scripted.callCount).toBe(0);
  });
});
