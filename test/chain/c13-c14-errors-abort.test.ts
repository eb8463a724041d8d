// SPEC C13, C14: typed errors with stable codes, carrying the partial run; an AbortSignal
// reaches the model call and every tool, and aborting ends the run with an AbortError
// (reason 'cancelled') that keeps the transcript so far.
import {
  AbortError,
  createChain,
  defineTool,
  type LanguageModel,
  ModelError,
  ProtocolError,
  StatecraftError,
} from 'statecraft';
import { ScriptedModel, type ScriptStep } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aborted, add, partialOf, rejectionOf, rolesOf, within } from './helpers.js';

/** A ScriptedModel that also records the signal of every call. */
function signalSpy(script: readonly ScriptStep[]) {
  const scripted = new ScriptedModel(script);
  const signals: (AbortSignal | undefined)[] = [];
  const model: LanguageModel = {
    specificationVersion: 'v1',
    provider: 'spy',
    modelId: 'spy',
    generate(request, options = {}) {
      signals.push(options.signal);
      return scripted.generate(request, options);
    },
    stream(request, options = {}) {
      signals.push(options.signal);
      return scripted.stream(request, options);
    },
  };
  return { model, scripted, signals };
}

function abortAfter(ms: number, reason?: unknown): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(reason), ms);
  return controller.signal;
}

describe('abort during a model call (C14)', () => {
  it('rejects with an AbortError at once, aborts the model call and keeps the transcript so far', async () => {
    const { model, scripted, signals } = signalSpy([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'too late', latencyMs: 5_000 },
    ]);
    const chain = createChain({ model, tools: [add] });
    const outcome = await within(
      1_000,
      chain.invoke('add', { signal: abortAfter(30) }).catch((error: unknown) => error),
    );
    if (outcome === 'hung' || outcome.settled !== 'resolved') throw new Error('run did not end');
    const error = outcome.value;
    if (!AbortError.isInstance(error)) throw error;

    expect(error.code).toBe('ABORTED');
    expect(error.reason).toBe('cancelled');
    expect(StatecraftError.isInstance(error)).toBe(true);
    expect(ModelError.isInstance(error)).toBe(false);
    expect(scripted.callCount).toBe(2);
    expect(signals[1]?.aborted).toBe(true);

    const partial = partialOf(error);
    expect(rolesOf(partial.transcript)).toEqual(['user', 'assistant', 'tool']);
    expect(partial.transcript.at(-1)).toMatchObject({ role: 'tool', output: 3 });
    expect(partial.usage.totalTokens).toBeGreaterThan(0);
    expect(partial.output.status).toBe('failed');
    expect(partial.output.iterations).toBe(2);
  });

  it('names the abort reason the caller gave', async () => {
    const { model } = signalSpy([{ text: 'slow', latencyMs: 5_000 }]);
    const error = await rejectionOf(
      AbortError,
      createChain({ model }).invoke('go', { signal: abortAfter(10, 'user pressed stop') }),
    );
    expect(error.message).toContain('user pressed stop');
  });

  it('an already aborted signal ends the run without spending a model call', async () => {
    const { model, scripted } = signalSpy([{ text: 'never' }]);
    const controller = new AbortController();
    controller.abort();
    const error = await rejectionOf(
      AbortError,
      createChain({ model }).invoke('go', { signal: controller.signal }),
    );
    expect(scripted.callCount).toBe(0);
    expect(rolesOf(partialOf(error).transcript)).toEqual(['user']);
  });

  it('a signal aborted after the run succeeded changes nothing', async () => {
    const controller = new AbortController();
    const run = await createChain({ model: new ScriptedModel([{ text: 'ok' }]) }).invoke('go', {
      signal: controller.signal,
    });
    controller.abort();
    expect(run.result).toBe('ok');
  });
});

describe('abort during a tool (C14)', () => {
  it('aborts the tool’s signal and rejects with the calls in the partial transcript', async () => {
    const state: { signal?: AbortSignal; sawAbort: boolean } = { sawAbort: false };
    const slow = defineTool({
      name: 'slow',
      description: 'Waits until cancelled.',
      input: z.object({}),
      execute: async (_args, { signal }) => {
        state.signal = signal;
        await aborted(signal);
        state.sawAbort = true;
        return 'cancelled work';
      },
    });
    const model = new ScriptedModel([
      { text: 'Starting.', toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] },
    ]);
    const outcome = await within(
      1_000,
      createChain({ model, tools: [slow] }).invoke('go', { signal: abortAfter(30) }),
    );
    if (outcome === 'hung' || outcome.settled !== 'rejected') throw new Error('run did not fail');
    const error = outcome.error;
    if (!AbortError.isInstance(error)) throw error;

    expect(error.reason).toBe('cancelled');
    expect(state.signal?.aborted).toBe(true);
    expect(state.sawAbort).toBe(true);
    const partial = partialOf(error);
    expect(partial.transcript.at(-2)).toMatchObject({
      role: 'assistant',
      content: 'Starting.',
      toolCalls: [{ id: 's1', name: 'slow' }],
    });
    // Answered as not run (issue 13, defect 8), and the step is kept (defect 6).
    expect(partial.transcript.at(-1)).toMatchObject({
      role: 'tool',
      toolCallId: 's1',
      success: false,
      error: expect.stringMatching(/not run, the run failed: The run was cancelled/),
    });
    expect(partial.steps.map((s) => [s.iteration, s.toolResults.length])).toEqual([[1, 0]]);
    expect(partial.steps[0]?.usage).toEqual(partial.usage);
  });

  it('aborts every concurrent call of the step, also with toolTimeoutMs set', async () => {
    const signals: AbortSignal[] = [];
    const slow = defineTool({
      name: 'slow',
      description: 'Waits until cancelled.',
      input: z.object({ n: z.number() }),
      execute: async (_args, { signal }) => {
        signals.push(signal);
        await aborted(signal);
        return 'x';
      },
    });
    const model = new ScriptedModel([
      {
        toolCalls: [
          { name: 'slow', arguments: { n: 1 } },
          { name: 'slow', arguments: { n: 2 } },
          { name: 'slow', arguments: { n: 3 } },
        ],
      },
    ]);
    await rejectionOf(
      AbortError,
      createChain({ model, tools: [slow], toolTimeoutMs: 10_000 }).invoke('go', {
        signal: abortAfter(30),
      }),
    );
    expect(signals).toHaveLength(3);
    expect(signals.every((s) => s.aborted)).toBe(true);
  });
});

describe('abort during validation (C14)', () => {
  it('a slow validateResult does not hold up cancellation', async () => {
    const model = new ScriptedModel([{ text: 'answer' }]);
    const chain = createChain({
      model,
      validateResult: () => new Promise<{ ok: true }>(() => {}),
    });
    const outcome = await within(1_000, chain.invoke('go', { signal: abortAfter(20) }));
    if (outcome === 'hung' || outcome.settled !== 'rejected') throw new Error('run did not fail');
    expect(AbortError.isInstance(outcome.error)).toBe(true);
    const partial = partialOf(outcome.error as AbortError);
    expect(partial.transcript.at(-1)).toMatchObject({ role: 'assistant', content: 'answer' });
  });
});

describe('model errors (C13)', () => {
  it('rejects with a ModelError keeping retryable, status, the cause and the partial run', async () => {
    const original = new ModelError('rate limited', { retryable: true, status: 429 });
    const model = new ScriptedModel([
      {
        toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }],
        usage: { inputTokens: 7, outputTokens: 3 },
      },
      { error: original },
    ]);
    const error = await rejectionOf(ModelError, createChain({ model, tools: [add] }).invoke('go'));
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(429);
    expect(error.message).toContain('rate limited');
    expect(error.cause).toBe(original);
    const partial = partialOf(error);
    expect(rolesOf(partial.transcript)).toEqual(['user', 'assistant', 'tool']);
    expect(partial.usage).toEqual({ inputTokens: 7, outputTokens: 3, totalTokens: 10 });
    expect(partial.steps).toHaveLength(1);
  });

  it('a non-retryable ModelError stays non-retryable', async () => {
    const model = new ScriptedModel([{ error: new ModelError('bad request', { status: 400 }) }]);
    const error = await rejectionOf(ModelError, createChain({ model }).invoke('go'));
    expect(error.retryable).toBe(false);
    expect(error.status).toBe(400);
  });

  it('wraps any other model failure in a ModelError with the original as cause', async () => {
    const boom = new TypeError('socket hang up');
    const model = new ScriptedModel([{ error: boom }]);
    const error = await rejectionOf(ModelError, createChain({ model }).invoke('go'));
    expect(error.cause).toBe(boom);
    expect(error.message).toContain('socket hang up');
    expect(error.retryable).toBe(false);
    expect(ProtocolError.isInstance(error)).toBe(false);
  });

  it('a model that receives more calls than scripted fails the run with a ModelError', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }]);
    const error = await rejectionOf(ModelError, createChain({ model, tools: [add] }).invoke('go'));
    expect(error.message).toMatch(/scripted for 1/);
  });
});
