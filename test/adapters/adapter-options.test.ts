import { ConfigError } from 'statecraft';
import { AnthropicModel } from 'statecraft/anthropic';
import { GeminiModel } from 'statecraft/gemini';
import { OpenAIChatModel, OpenAIResponsesModel, openAICompatible } from 'statecraft/openai';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';

// Adapter options are validated whole (SPEC Q4): an unknown key is refused with the nearest
// known name, and every problem is reported in one ConfigError.

function configErrorOf(make: () => unknown): ConfigError {
  try {
    make();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error as ConfigError;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

const factories: readonly [string, (options: Record<string, unknown>) => unknown][] = [
  ['new OpenAIChatModel', (o) => new OpenAIChatModel(o as never)],
  ['new OpenAIResponsesModel', (o) => new OpenAIResponsesModel(o as never)],
  ['new AnthropicModel', (o) => new AnthropicModel(o as never)],
  ['new GeminiModel', (o) => new GeminiModel(o as never)],
];

describe.each(factories)('%s options', (where, make) => {
  it('refuses an unknown key, suggesting the nearest known name', () => {
    const error = configErrorOf(() => make({ model: 'm', apiKey: 'k', idleTimeoutMS: 5 }));
    expect(error.option).toBe('idleTimeoutMS');
    expect(error.message).toContain(
      `is not an option of ${where}; did you mean \`idleTimeoutMs\`?`,
    );
  });

  it('reports every problem at once', () => {
    const error = configErrorOf(() =>
      make({ model: '', apiKey: 'k', idleTimeoutMs: 0, providerOptions: [], colour: 'red' }),
    );
    expect(error.problems.map((p) => p.option).sort()).toEqual(
      ['colour', 'idleTimeoutMs', 'model', 'providerOptions'].sort(),
    );
    expect(error.message).toMatch(new RegExp(`^4 invalid options for ${where}:`));
  });

  it('accepts a positive idleTimeoutMs', () => {
    expect(() => make({ model: 'm', apiKey: 'k', idleTimeoutMs: 250 })).not.toThrow();
  });
});

describe('other adapter factories', () => {
  it('openAICompatible refuses what its preset decides, and unknown keys', () => {
    const error = configErrorOf(() =>
      openAICompatible('ollama', {
        model: 'm',
        maxTokensField: 'max_tokens',
        basURL: 'x',
      } as never),
    );
    expect(error.problems.map((p) => p.option)).toEqual(['maxTokensField', 'basURL']);
    expect(error.message).toContain('did you mean `baseURL`?');
  });

  it("openAICompatible reports an unknown key and the model's own bad options in one error", () => {
    const error = configErrorOf(() =>
      openAICompatible('ollama', { model: '', basURL: 'x', maxRetries: -1 } as never),
    );
    expect(error.problems.map((p) => p.option)).toEqual(['basURL', 'model', 'maxRetries']);
  });

  it("Gemini's retry options are checked key by key", () => {
    const error = configErrorOf(
      () =>
        new GeminiModel({
          model: 'm',
          apiKey: 'k',
          retries: { attempt: 2, maxDelay: -1 } as never,
        }),
    );
    expect(error.problems.map((p) => p.option)).toEqual(['retries.attempt', 'retries.maxDelay']);
    expect(error.message).toContain('did you mean `retries.attempts`?');
  });

  it('ScriptedModel refuses unknown options, reporting all of them', () => {
    const error = configErrorOf(
      () => new ScriptedModel([], { modelID: 'x', expectedCall: 1 } as never),
    );
    expect(error.problems.map((p) => p.option)).toEqual(['modelID', 'expectedCall']);
    expect(error.message).toContain('did you mean `modelId`?');
    expect(error.message).toContain('did you mean `expectedCalls`?');
  });
});
