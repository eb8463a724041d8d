import {
  AbortError,
  ChainError,
  ConfigError,
  createChain,
  defineTool,
  type LanguageModel,
  ModelError,
  type RemoteToolExecutor,
  TokenLimitError,
} from 'statecraft';
import { LANGUAGE_MODEL_VERSION, type ModelResponse } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { thrownBy } from '../support/errors.js';
import { partialOf, rejectionOf, toolMessages } from './helpers.js';

// Regressions for what a code review of the chain runtime found (each failed before its fix).

const ping = defineTool({
  name: 'ping',
  description: 'Answers pong.',
  input: z.object({}),
  execute: () => 'pong',
});

/** A model answering with exactly these responses, ids as given (empty ids included). */
function rawModel(responses: ModelResponse[]): LanguageModel {
  let calls = 0;
  return {
    specificationVersion: LANGUAGE_MODEL_VERSION,
    provider: 'raw',
    modelId: 'raw',
    async generate() {
      const response = responses[calls++];
      if (!response) throw new Error('no more responses');
      return response;
    },
    // biome-ignore lint/correctness/useYield: never streamed in these tests.
    async *stream() {
      throw new Error('not streamed');
    },
  };
}

const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
const callsOf = (ids: string[]): ModelResponse => ({
  content: ids.map((id) => ({ type: 'tool-call', toolCall: { id, name: 'ping', arguments: {} } })),
  usage,
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
});
const answer: ModelResponse = {
  content: [{ type: 'text', text: 'done' }],
  usage,
  finishReason: { unified: 'stop', raw: 'stop' },
};

describe('chain review regressions', () => {
  it('links results to calls whose ids were missing or repeated in one response', async () => {
    const model = rawModel([callsOf(['', 'dup', 'dup']), answer]);
    const run = await createChain({ model, tools: [ping] }).invoke('go');
    const assistant = run.transcript.find((m) => m.role === 'assistant' && m.toolCalls.length > 0);
    const ids = assistant?.role === 'assistant' ? assistant.toolCalls.map((c) => c.id) : [];
    expect(new Set(ids).size).toBe(3);
    expect(ids.every(Boolean)).toBe(true);
    const answered = toolMessages(run.transcript).map((m) => m.toolCallId);
    expect(answered).toEqual(ids);
  });

  it('fails with TokenLimitError, without another model call, when a tool step starts with the budget spent', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [{ name: 'ping', arguments: {} }],
        usage: { inputTokens: 60, outputTokens: 40 },
      },
      { text: 'never asked' },
    ]);
    const error = await rejectionOf(
      TokenLimitError,
      createChain({ model, tools: [ping], maxTokens: 100 }).invoke('go'),
    );
    expect(model.callCount).toBe(1);
    expect(partialOf(error).transcript.at(-1)).toMatchObject({
      role: 'tool',
      output: 'pong',
    });
  });

  it('warns about an identical call repeated within one response (SPEC C8)', async () => {
    const execute = vi.fn(() => 'ok');
    const once = defineTool({
      name: 'once',
      description: 'Runs once.',
      input: z.object({ a: z.number() }),
      execute,
      duplicateCallWarn: true,
    });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'once', arguments: { a: 1 } },
          { name: 'once', arguments: { a: 1 } },
        ],
      },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [once] }).invoke('go');
    expect(execute).toHaveBeenCalledTimes(1);
    expect(toolMessages(run.transcript).map((m) => m.success)).toEqual([true, false]);
  });

  it('stops the run when the stream reader breaks out of the loop', async () => {
    const model = new ScriptedModel(() => ({
      toolCalls: [{ name: 'ping', arguments: {} }],
      latencyMs: 5,
    }));
    for await (const event of createChain({ model, tools: [ping], maxIterations: 50 }).stream(
      'go',
    )) {
      if (event.type === 'tool-result') break;
    }
    const callsAtBreak = model.callCount;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(model.callCount).toBe(callsAtBreak);
    expect(callsAtBreak).toBeLessThanOrEqual(2);
  });

  it('does not hang on a remote whose listTools never answers; an abort ends the run', async () => {
    const remote: RemoteToolExecutor = {
      name: 'stuck',
      listTools: () => new Promise(() => {}),
      execute: async () => ({ toolCallId: 'x', name: 'x', output: null, success: true }),
    };
    const model = new ScriptedModel([{ text: 'never asked' }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 30);
    const error = await rejectionOf(
      AbortError,
      createChain({ model, remote }).invoke('go', { signal: controller.signal }),
    );
    expect(error.reason).toBe('cancelled');
  });

  it('answers with the local tools when the remote cannot list its own in time', async () => {
    const remote: RemoteToolExecutor = {
      name: 'slow',
      listTools: () => new Promise(() => {}),
      execute: async () => ({ toolCallId: 'x', name: 'x', output: null, success: true }),
    };
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'ping', arguments: {} }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, remote, tools: [ping], toolTimeoutMs: 20 }).invoke('go');
    expect(toolMessages(run.transcript)[0]).toMatchObject({
      output: 'pong',
      success: true,
    });
    expect(model.requests[0]?.tools?.map((t) => t.name)).toEqual(['ping']);
  });

  it('reports bad tools as a ConfigError on `tools`', () => {
    expect(
      thrownBy(ConfigError, () =>
        createChain({ model: new ScriptedModel([]), tools: ping as never }),
      ).option,
    ).toBe('tools');
    expect(
      thrownBy(ConfigError, () =>
        createChain({ model: new ScriptedModel([]), tools: [null as never] }),
      ).option,
    ).toBe('tools');
  });

  it('estimates usage for tool outputs JSON cannot hold', async () => {
    const big = defineTool({
      name: 'big',
      description: 'A BigInt.',
      input: z.object({}),
      execute: () => ({ n: 10n }),
    });
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'big', arguments: {} }] },
      { text: 'done' },
    ]);
    await expect(createChain({ model, tools: [big] }).invoke('go')).resolves.toMatchObject({
      status: 'succeeded',
    });
  });

  it('turns a throwing validateResult into a ChainError that keeps the answer', async () => {
    const failing = createChain({
      model: new ScriptedModel([{ text: 'x' }]),
      validateResult: () => {
        throw new Error('validator exploded');
      },
    });
    const error = await rejectionOf(ChainError, failing.invoke('go'));
    expect(partialOf(error).transcript.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'x',
    });
  });

  it('a malformed model response is a ModelError at the boundary (SPEC Q3), keeping the partial run', async () => {
    const model = rawModel([
      callsOf(['a']),
      { content: null, usage, finishReason: answer.finishReason } as never,
    ]);
    const error = await rejectionOf(ModelError, createChain({ model, tools: [ping] }).invoke('go'));
    expect(error.message).toContain('`content` is null, not an array of parts');
    expect(error.retryable).toBe(false);
    expect(partialOf(error).transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
  });
});
