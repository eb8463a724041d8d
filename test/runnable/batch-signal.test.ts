// SPEC R1 `batch` with the caller's signal: however many inputs, the caller's signal gets a
// constant number of abort listeners (one per input would pass Node's limit of ten and warn
// MaxListenersExceededWarning), and aborting it still cancels every input's run.
import { getEventListeners } from 'node:events';
import {
  AbortError,
  type BatchResult,
  createChain,
  createToolLoop,
  defineTool,
  fromFunction,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aborted } from '../chain/helpers.js';

const INPUTS = Array.from({ length: 30 }, (_, i) => `question ${i + 1}`);

/** Yields to the event loop until `ready()` holds, so every run has started (bounded). */
async function until(ready: () => boolean): Promise<void> {
  for (let turn = 0; turn < 1_000 && !ready(); turn++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
  if (!ready()) throw new Error('the batch never got every input running');
}

/**
 * Starts `batch` under a caller's signal, waits until `started()` says every input is in
 * flight, counts the listeners on that signal, aborts it, and returns the count and outcomes.
 */
async function listenersWhileRunning<O>(
  batch: (signal: AbortSignal) => Promise<BatchResult<O>[]>,
  started: () => boolean,
): Promise<{ listeners: number; results: BatchResult<O>[] }> {
  const controller = new AbortController();
  const running = batch(controller.signal);
  await until(started);
  const listeners = getEventListeners(controller.signal, 'abort').length;
  controller.abort();
  const results = await running;
  // And the batch leaves nothing behind on a signal the caller may keep using.
  expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  return { listeners, results };
}

function expectAllAborted(results: readonly BatchResult<unknown>[]) {
  expect(results).toHaveLength(INPUTS.length);
  for (const result of results) {
    expect(result.status).toBe('rejected');
    if (result.status === 'rejected') expect(AbortError.isInstance(result.reason)).toBe(true);
  }
}

describe('batch under a caller signal adds O(1) listeners to it (R1)', () => {
  it('chain.batch: 30 runs in flight, at most 1 listener, and abort cancels all', async () => {
    // Every call waits (for a minute, or until its signal aborts): all 30 are in flight together.
    const model = new ScriptedModel(() => ({ text: 'never', latencyMs: 60_000 }));
    const chain = createChain({ model });
    const { listeners, results } = await listenersWhileRunning(
      (signal) => chain.batch(INPUTS, { signal }),
      () => model.requests.length === INPUTS.length,
    );
    expect(listeners).toBeLessThanOrEqual(1);
    expectAllAborted(results);
  });

  it('chain.batch with a concurrency cap: queued inputs are cancelled too', async () => {
    const model = new ScriptedModel(() => ({ text: 'never', latencyMs: 60_000 }));
    const chain = createChain({ model });
    const { listeners, results } = await listenersWhileRunning(
      (signal) => chain.batch(INPUTS, { signal, concurrency: 4 }),
      () => model.requests.length === 4,
    );
    expect(listeners).toBeLessThanOrEqual(1);
    expectAllAborted(results);
    expect(model.requests).toHaveLength(4);
  });

  it('the tool loop batch: 30 runs planning, at most 1 listener, and abort cancels all', async () => {
    let planning = 0;
    const loop = createToolLoop({
      planner: async (_context, { signal }) => {
        planning++;
        await aborted(signal);
        return { nextAction: 'response' };
      },
      respond: false,
      tools: [
        defineTool({
          name: 'noop',
          description: 'Does nothing.',
          input: z.object({}),
          execute: () => null,
        }),
      ],
    });
    const { listeners, results } = await listenersWhileRunning(
      (signal) => loop.batch(INPUTS, { signal }),
      () => planning === INPUTS.length,
    );
    expect(listeners).toBeLessThanOrEqual(1);
    expectAllAborted(results);
  });

  it('a Runnable batch: 30 runs in flight, at most 1 listener, and abort cancels all', async () => {
    let running = 0;
    const wait = fromFunction(async (input: string, config) => {
      running++;
      const signal = config?.signal;
      if (!signal) throw new Error('the run got no signal');
      await aborted(signal);
      throw new AbortError(`cancelled: ${input}`);
    });
    const { listeners, results } = await listenersWhileRunning(
      (signal) => wait.batch(INPUTS, { signal }),
      () => running === INPUTS.length,
    );
    expect(listeners).toBeLessThanOrEqual(1);
    expectAllAborted(results);
  });
});
