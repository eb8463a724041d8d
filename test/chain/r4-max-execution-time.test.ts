// SPEC R4 `maxExecutionTime` (LangChain's max_execution_time): when the run's time is up, the
// effect in flight (model call, tool calls, validation) is cancelled (its signal aborted, its
// late answer dropped) and the run fails with a TimeoutError carrying the partial run, or
// stops early (see r4-early-stopping.test.ts). The delays are small and real; nothing asserts
// a duration beyond "it ended, and with what".
import {
  AbortError,
  createChain,
  defineTool,
  type LanguageModel,
  memoryStore,
  TimeoutError,
} from 'statecraft';
import type { ModelRequest, ModelResponse } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aborted, partialOf, rejectionOf, rolesOf, within } from './helpers.js';

/** A model whose calls the test writes as functions of (request, signal), recording both. */
function manualModel(
  ...calls: ((request: ModelRequest, signal: AbortSignal) => Promise<ModelResponse>)[]
) {
  const signals: AbortSignal[] = [];
  const requests: ModelRequest[] = [];
  const model: LanguageModel = {
    specificationVersion: 'v1',
    provider: 'manual',
    modelId: 'manual',
    generate(request, options = {}) {
      const call = calls[requests.length];
      if (!call) throw new Error(`unexpected model call #${requests.length + 1}`);
      const signal = options.signal ?? new AbortController().signal;
      requests.push(request);
      signals.push(signal);
      return call(request, signal);
    },
    stream() {
      throw new Error('not streamed in these tests');
    },
  };
  return { model, signals, requests };
}

function textResponse(text: string): ModelResponse {
  return {
    content: [{ type: 'text', text }],
    usage: { inputTokens: 5, outputTokens: 5, totalTokens: 10 },
    finishReason: { unified: 'stop', raw: 'stop' },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A tool that waits until its signal aborts, recording that signal. */
function hangingTool() {
  const signals: AbortSignal[] = [];
  const tool = defineTool({
    name: 'slow_search',
    description: 'Searches, slowly.',
    input: z.object({ q: z.string() }),
    execute: async (_args, { signal }) => {
      signals.push(signal);
      await aborted(signal);
      return 'too late';
    },
  });
  return { tool, signals };
}

describe('maxExecutionTime without earlyStopping (R4)', () => {
  it('aborts a model call that never answers and fails with a TimeoutError', async () => {
    const { model, signals } = manualModel((_request, signal) =>
      aborted(signal).then(() => textResponse('never seen')),
    );
    const outcome = await within(
      2_000,
      rejectionOf(TimeoutError, createChain({ model, maxExecutionTime: 40 }).invoke('hello')),
    );
    if (outcome === 'hung' || outcome.settled !== 'resolved') throw new Error('run did not end');
    const error = outcome.value;
    expect(error.code).toBe('TIMEOUT');
    expect(error.timeoutMs).toBe(40);
    expect(error.message).toContain('maxExecutionTime (40 ms)');
    expect(signals[0]?.aborted).toBe(true);
    expect(AbortError.isInstance(signals[0]?.reason)).toBe(true);
    const partial = partialOf(error);
    expect(rolesOf(partial.transcript)).toEqual(['user']);
    expect(partial.output).toMatchObject({ status: 'failed', failure: { code: 'TIMEOUT' } });
  });

  it('aborts the tool calls in flight, keeping the step that made them', async () => {
    const { tool, signals } = hangingTool();
    const model = new ScriptedModel([
      { text: 'Searching.', toolCalls: [{ id: 'c1', name: 'slow_search', arguments: { q: 'x' } }] },
    ]);
    const chain = createChain({ model, tools: [tool], maxExecutionTime: 50 });
    const error = await rejectionOf(TimeoutError, chain.invoke('find x'));
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
    const partial = partialOf(error);
    // The late "too late" result never reached the run: the call is answered as not run.
    expect(rolesOf(partial.transcript)).toEqual(['user', 'assistant', 'tool']);
    expect(partial.transcript.at(-1)).toMatchObject({
      toolCallId: 'c1',
      error: expect.stringMatching(/not run, the time limit was reached/),
    });
    expect(partial.steps.map((s) => [s.iteration, s.toolResults.length])).toEqual([[1, 0]]);
    expect(partial.steps[0]?.usage).toEqual(partial.usage);
    expect(partial.intermediateSteps).toEqual([]);
    model.assertComplete();
  });

  it('cancels a validation that does not finish', async () => {
    const model = new ScriptedModel([{ text: 'an answer' }]);
    const chain = createChain({
      model,
      maxExecutionTime: 40,
      validateResult: () => new Promise(() => {}),
    });
    const error = await rejectionOf(TimeoutError, chain.invoke('go'));
    expect(partialOf(error).transcript.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'an answer',
    });
  });

  it('ends on time even when the model ignores its signal', async () => {
    const late: string[] = [];
    const { model } = manualModel(async () => {
      await sleep(80);
      late.push('answered');
      return textResponse('late answer');
    });
    const error = await rejectionOf(
      TimeoutError,
      createChain({ model, maxExecutionTime: 20 }).invoke('go'),
    );
    // The run did not wait for the model: it had not answered yet.
    expect(late).toEqual([]);
    expect(partialOf(error).usage.totalTokens).toBe(0);
    await sleep(100);
  });

  it('changes nothing for a run that ends in time', async () => {
    const model = new ScriptedModel([{ text: 'quick' }]);
    const run = await createChain({ model, maxExecutionTime: 10_000 }).invoke('go');
    expect(run.result).toBe('quick');
    expect(run.stopped).toBeUndefined();
  });

  it('still lets the caller abort first', async () => {
    const model = new ScriptedModel([{ text: 'slow', latencyMs: 5_000 }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    await rejectionOf(
      AbortError,
      createChain({ model, maxExecutionTime: 10_000 }).invoke('go', { signal: controller.signal }),
    );
  });
});

describe('the final call of earlyStopping generate gets maxExecutionTime of its own (R4)', () => {
  it('answers after the time limit, with the late answer of the cut-off call dropped', async () => {
    // Call 1 ignores its signal and answers at 400 ms, after the final call (from ~200 ms)
    // answered: had that late answer reached the machine, it would be the result.
    const { model, signals, requests } = manualModel(
      async () => {
        await sleep(400);
        return textResponse('late answer');
      },
      async () => textResponse('final answer'),
    );
    const run = await createChain({
      model,
      maxExecutionTime: 200,
      earlyStopping: 'generate',
    }).invoke('go');
    expect(run.result).toBe('final answer');
    expect(run.stopped).toEqual({ reason: 'maxExecutionTime', method: 'generate' });
    expect(signals[0]?.aborted).toBe(true);
    expect(requests).toHaveLength(2);
    expect(requests[1]?.tools).toBeUndefined();
    await sleep(250); // the late answer arrives, and is dropped
    expect(run.transcript.map((m) => ('content' in m ? m.content : m.role))).not.toContain(
      'late answer',
    );
  });

  it('a final call still running after maxExecutionTime more is aborted: a TimeoutError with the partial run', async () => {
    const { model, signals } = manualModel(
      (_request, signal) => aborted(signal).then(() => textResponse('cut off')),
      (_request, signal) => aborted(signal).then(() => textResponse('cut off too')),
    );
    const chain = createChain({ model, maxExecutionTime: 50, earlyStopping: 'generate' });
    const error = await rejectionOf(TimeoutError, chain.invoke('go'));
    expect(error.message).toBe(
      "The final answer of earlyStopping 'generate' did not come within maxExecutionTime (50 ms)",
    );
    expect(error.timeoutMs).toBe(50);
    expect(signals).toHaveLength(2);
    expect(signals[1]?.aborted).toBe(true);
    expect(partialOf(error).usage.totalTokens).toBe(0);
  });

  it('a final call that ignores its signal is not waited for', async () => {
    const { model } = manualModel(
      (_request, signal) => aborted(signal).then(() => textResponse('cut off')),
      () => new Promise<ModelResponse>(() => {}),
    );
    const chain = createChain({ model, maxExecutionTime: 50, earlyStopping: 'generate' });
    await rejectionOf(TimeoutError, chain.invoke('go'));
  });

  it('is still cancelled by the caller', async () => {
    const controller = new AbortController();
    const { model, signals } = manualModel(
      (_request, signal) => aborted(signal).then(() => textResponse('cut off')),
      (_request, signal) => {
        // The caller gives up while the final call runs, well within its own bound.
        setTimeout(() => controller.abort(), 0);
        return aborted(signal).then(() => textResponse('cut off too'));
      },
    );
    const chain = createChain({ model, maxExecutionTime: 100, earlyStopping: 'generate' });
    await rejectionOf(AbortError, chain.invoke('go', { signal: controller.signal }));
    expect(signals).toHaveLength(2);
    expect(signals[1]?.aborted).toBe(true);
  });
});

// LangChain's AgentExecutor checks `time_elapsed >= max_execution_time` before its first step:
// 0 stops at once, with no model call, as maxIterations 0 does here. It used to be refused.
describe('maxExecutionTime 0: the time is up before the first model call (R4)', () => {
  const noCall = () => manualModel();

  it('fails with a TimeoutError and the empty partial run, making no model call', async () => {
    for (const earlyStopping of [undefined, 'generate'] as const) {
      const { model, requests } = noCall();
      const chain = createChain({
        model,
        maxExecutionTime: 0,
        ...(earlyStopping && { earlyStopping }),
      });
      const error = await rejectionOf(TimeoutError, chain.invoke('hello'));
      expect(error.timeoutMs).toBe(0);
      expect(error.message).toBe('Reached maxExecutionTime (0 ms) without a final answer');
      const partial = partialOf(error);
      expect(rolesOf(partial.transcript)).toEqual(['user']);
      expect(partial.usage.totalTokens).toBe(0);
      expect(partial.steps).toEqual([]);
      expect(partial.details().modelCalls).toEqual([]);
      expect(requests).toHaveLength(0);
    }
  });

  it("answers with the stop message under earlyStopping 'force'", async () => {
    const { model, requests } = noCall();
    const chain = createChain({ model, maxExecutionTime: 0, earlyStopping: 'force' });
    const run = await chain.invoke('hello');
    expect(run.stopped).toEqual({ reason: 'maxExecutionTime', method: 'force' });
    expect(run.text).toMatch(/time limit/);
    expect(run.iterations).toBe(0);
    expect(requests).toHaveLength(0);
  });

  it('is a durable run like any: journaled, and resumed as it ended', async () => {
    const store = memoryStore();
    const { model, requests } = noCall();
    const chain = createChain({ model, maxExecutionTime: 0, earlyStopping: 'force' });
    const run = await chain.invoke('hello', { runId: 'zero', store });
    const again = await chain.resume('zero', { store });
    expect(again.text).toBe(run.text);
    expect((await store.read('zero'))?.map((entry) => entry.type)).toEqual(['start', 'end']);
    expect(requests).toHaveLength(0);
  });

  it('still refuses a negative or NaN time, naming the option', () => {
    const { model } = noCall();
    for (const maxExecutionTime of [-1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createChain({ model, maxExecutionTime })).toThrow(
        /Invalid option `maxExecutionTime`: must be a finite number >= 0/,
      );
    }
  });
});
