// SPEC T1's optional timeout for the whole loop, and the typed errors a failed loop rejects
// with (C13): each keeps the records and usage of the run so far in `partial`.
import {
  ChainError,
  createChain,
  createToolLoop,
  defineTool,
  ModelError,
  type Planner,
  ProtocolError,
  type StatecraftError,
  TimeoutError,
  type ToolLoopPartialResult,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { aborted, deferred, rejectionOf, within } from '../chain/helpers.js';

function partialOf(error: StatecraftError): ToolLoopPartialResult {
  const partial = error.partial as ToolLoopPartialResult | undefined;
  if (!partial) throw new Error(`${error.name} carries no partial result`);
  return partial;
}

/** `fetch` answers at once unless asked to hang; a hanging call ends only when its signal aborts. */
function fetchTool() {
  const signals = new Map<string, AbortSignal>();
  const hanging = deferred();
  const tool = defineTool({
    name: 'fetch',
    description: 'Fetches a page.',
    input: z.object({ url: z.string(), hang: z.boolean().optional() }),
    execute: async ({ url, hang }, { signal }) => {
      signals.set(url, signal);
      if (!hang) return `page ${url}`;
      hanging.resolve();
      await aborted(signal);
      throw new Error('interrupted');
    },
  });
  return { tool, signals, hanging: hanging.promise };
}

function fetchPlan(...urls: { url: string; hang?: boolean }[]) {
  return {
    nextAction: 'execute',
    executionCommands: urls.map((kwargs) => ({
      purpose: `Fetch ${kwargs.url}`,
      toolName: 'fetch',
      toolKwargs: kwargs,
    })),
  };
}

const RESPOND = { nextAction: 'response' };

async function outcomeOf(promise: Promise<unknown>): Promise<unknown> {
  const outcome = await within(2_000, promise);
  if (outcome === 'hung') throw new Error('the run hung');
  if (outcome.settled === 'resolved') throw new Error('expected the run to fail');
  return outcome.error;
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the loop timeout (T1)', () => {
  it('rejects with a TimeoutError keeping every finished record, and aborts the hanging tool', async () => {
    const { tool, signals } = fetchTool();
    const planner = vi.fn<Planner>((context) =>
      context.roundIndex === 0
        ? fetchPlan({ url: 'a' })
        : fetchPlan({ url: 'slow', hang: true }, { url: 'b' }),
    );
    const loop = createToolLoop({ planner, tools: [tool], timeout: 50 });

    const error = await outcomeOf(loop.invoke('go'));

    if (!TimeoutError.isInstance(error)) throw error;
    expect(error.code).toBe('TIMEOUT');
    expect(error.timeoutMs).toBe(50);
    expect(error.message).toContain('50 ms');
    const partial = partialOf(error);
    // Round 0's record and the finished command of the interrupted round, in command order.
    expect(partial.toolLogs.map((r) => [r.kwargs.url, r.success, r.result])).toEqual([
      ['a', true, 'page a'],
      ['b', true, 'page b'],
    ]);
    expect(partial.output).toMatchObject({ status: 'failed', rounds: 1 });
    expect(signals.get('slow')?.aborted).toBe(true);
    expect(planner).toHaveBeenCalledTimes(2);
  });

  it('fires at the timeout, not before (fake timers)', async () => {
    vi.useFakeTimers();
    const { tool, signals, hanging } = fetchTool();
    const planner: Planner = () => fetchPlan({ url: 'slow', hang: true });
    const run = createToolLoop({ planner, tools: [tool], timeout: 1_000 }).invoke('go');
    let settled = false;
    run.then(
      () => {
        settled = true;
      },
      () => {
        settled = true;
      },
    );
    await hanging;
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    expect(signals.get('slow')?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const error = await rejectionOf(TimeoutError, run);
    expect(error.timeoutMs).toBe(1_000);
    expect(signals.get('slow')?.aborted).toBe(true);
  });

  it('interrupts a hanging planner', async () => {
    const { tool } = fetchTool();
    const plannerSignals: AbortSignal[] = [];
    const planner: Planner = async (_context, { signal }) => {
      plannerSignals.push(signal);
      await aborted(signal);
      throw new Error('planner interrupted');
    };
    const error = await outcomeOf(
      createToolLoop({ planner, tools: [tool], timeout: 30 }).invoke('go'),
    );
    if (!TimeoutError.isInstance(error)) throw error;
    expect(plannerSignals).toHaveLength(1);
    expect(plannerSignals[0]?.aborted).toBe(true);
    expect(partialOf(error).toolLogs).toEqual([]);
  });

  it('covers the final response, too', async () => {
    const { tool } = fetchTool();
    const model = new ScriptedModel([{ text: 'too late', latencyMs: 10_000 }]);
    let round = 0;
    const planner: Planner = () => (round++ === 0 ? fetchPlan({ url: 'a' }) : RESPOND);
    const error = await outcomeOf(
      createToolLoop({ model, planner, tools: [tool], timeout: 50 }).invoke('go'),
    );
    if (!TimeoutError.isInstance(error)) throw error;
    expect(model.callCount).toBe(1);
    expect(partialOf(error).toolLogs.map((r) => r.result)).toEqual(['page a']);
  });

  it('a loop that finishes in time succeeds and leaves no timer running', async () => {
    vi.useFakeTimers();
    const { tool } = fetchTool();
    const release = deferred();
    const started = deferred();
    const wait = defineTool({
      name: 'wait',
      description: 'Waits for the test.',
      input: z.object({}),
      execute: async () => {
        started.resolve();
        await release.promise;
        return 'waited';
      },
    });
    let round = 0;
    const planner: Planner = () =>
      round++ === 0
        ? {
            nextAction: 'execute',
            executionCommands: [
              { toolName: 'fetch', toolKwargs: { url: 'a' } },
              { toolName: 'wait', toolKwargs: {} },
            ],
          }
        : RESPOND;
    const run = createToolLoop({ planner, tools: [tool, wait], timeout: 60_000 }).invoke('go');

    await started.promise;
    // The loop's deadline is pending while it runs...
    expect(vi.getTimerCount()).toBeGreaterThan(0);
    release.resolve();
    const result = await run;
    expect(result.stopReason).toBe('response');
    expect(result.toolLogs.map((r) => r.result)).toEqual(['page a', 'waited']);
    // ...and cancelled once it is done: nothing keeps the process alive for 60 s.
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('errors of the planner and the final response', () => {
  it('a planner ModelError keeps retryable and status', async () => {
    const { tool } = fetchTool();
    const cause = new ModelError('rate limited', { retryable: true, status: 429 });
    let round = 0;
    const planner: Planner = () => {
      if (round++ === 0) return fetchPlan({ url: 'a' });
      throw cause;
    };
    const error = await rejectionOf(
      ModelError,
      createToolLoop({ planner, tools: [tool] }).invoke('go'),
    );
    expect(error.code).toBe('MODEL_ERROR');
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(429);
    expect(error.cause).toBe(cause);
    expect(error.message).toContain('rate limited');
    expect(partialOf(error).toolLogs.map((r) => r.result)).toEqual(['page a']);
  });

  it('the default model planner failing keeps retryable and status too', async () => {
    const { tool } = fetchTool();
    const model = new ScriptedModel([
      { error: new ModelError('overloaded', { retryable: true, status: 529 }) },
    ]);
    const error = await rejectionOf(
      ModelError,
      createToolLoop({ model, tools: [tool] }).invoke('go'),
    );
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(529);
    model.assertComplete();
  });

  it('a planner throwing a plain Error becomes a non-retryable ModelError with it as cause', async () => {
    const { tool } = fetchTool();
    const cause = new Error('socket hang up');
    const planner: Planner = () => {
      throw cause;
    };
    const error = await rejectionOf(
      ModelError,
      createToolLoop({ planner, tools: [tool] }).invoke('go'),
    );
    expect(error.retryable).toBe(false);
    expect(error.cause).toBe(cause);
    expect(ProtocolError.isInstance(error)).toBe(false);
  });

  it('a failing final response keeps the usage and records of the run', async () => {
    const { tool } = fetchTool();
    const model = new ScriptedModel([
      {
        text: JSON.stringify(fetchPlan({ url: 'a' })),
        usage: { inputTokens: 10, outputTokens: 5 },
      },
      { text: JSON.stringify(RESPOND), usage: { inputTokens: 3, outputTokens: 2 } },
      { error: new ModelError('service unavailable', { retryable: true, status: 503 }) },
    ]);
    const loop = createToolLoop({ model, tools: [tool], instant: false });

    const error = await rejectionOf(ModelError, loop.invoke('go'));

    model.assertComplete();
    expect(error.status).toBe(503);
    expect(error.retryable).toBe(true);
    const partial = partialOf(error);
    expect(partial.usage).toEqual({ inputTokens: 13, outputTokens: 7, totalTokens: 20 });
    expect(partial.toolLogs.map((r) => r.result)).toEqual(['page a']);
    expect(partial.output).toMatchObject({ status: 'failed', rounds: 1 });
    expect(partial.output?.plans.map((p) => p.plan.nextAction)).toEqual(['execute', 'response']);
  });

  it('a failing chain responder is a ChainError with the chain error as cause', async () => {
    const { tool } = fetchTool();
    const loopy = defineTool({
      name: 'again',
      description: 'Asks to be called again.',
      input: z.object({}),
      execute: () => 'call me again',
    });
    const chainModel = new ScriptedModel(() => ({ toolCalls: [{ name: 'again', arguments: {} }] }));
    const chain = createChain({ model: chainModel, tools: [loopy], maxIterations: 2 });
    let round = 0;
    const planner: Planner = () => (round++ === 0 ? fetchPlan({ url: 'a' }) : RESPOND);
    const error = await rejectionOf(
      ChainError,
      createToolLoop({ planner, tools: [tool], respond: chain }).invoke('go'),
    );
    expect(ProtocolError.isInstance(error.cause)).toBe(true);
    expect(partialOf(error).toolLogs.map((r) => r.result)).toEqual(['page a']);
  });
});
