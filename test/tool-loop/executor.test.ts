// SPEC T6: the executor runs a round's commands concurrently under the `concurrency` cap,
// keeps its records in command order, turns every tool failure into a record, and passes an
// abort on to every running tool. No wall-clock assertions: tools wait on deferred promises.
import {
  AbortError,
  createToolLoop,
  defineTool,
  type Planner,
  type PlannerContext,
  type ToolExecutionRecord,
  type ToolLoopPartialResult,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { aborted, deferred, rejectionOf, within } from '../chain/helpers.js';

/** Lets every pending callback and microtask run. */
const flush = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/**
 * A `work` tool whose calls wait until the test releases them by id, counting how many are in
 * flight at once.
 */
function gatedTool() {
  const gates = new Map<string, ReturnType<typeof deferred>>();
  const started: string[] = [];
  const finished: string[] = [];
  const signals = new Map<string, AbortSignal>();
  let inFlight = 0;
  let maxInFlight = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  const gate = (id: string) => {
    let d = gates.get(id);
    if (!d) {
      d = deferred();
      gates.set(id, d);
    }
    return d;
  };
  const tool = defineTool({
    name: 'work',
    description: 'Does some work.',
    input: z.object({ id: z.string() }),
    execute: async ({ id }, { signal }) => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      started.push(id);
      signals.set(id, signal);
      for (const w of waiters.filter((w) => started.length >= w.count)) w.resolve();
      try {
        await Promise.race([gate(id).promise, aborted(signal)]);
        return `done ${id}`;
      } finally {
        inFlight--;
        finished.push(id);
      }
    },
  });
  return {
    tool,
    started,
    finished,
    signals,
    get inFlight() {
      return inFlight;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    release: (id: string) => gate(id).resolve(undefined),
    /** Resolves once `count` calls have started. */
    startedAtLeast(count: number): Promise<void> {
      if (started.length >= count) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
  };
}

function workPlan(ids: readonly string[]) {
  return {
    nextAction: 'execute',
    executionCommands: ids.map((id) => ({
      purpose: `Work ${id}`,
      toolName: 'work',
      toolKwargs: { id },
      todoSuggestion: `check ${id}`,
    })),
  };
}

const RESPOND = { nextAction: 'response' };

/** A planner that runs one round of `round0`, then answers. */
function oneRound(round0: unknown) {
  const contexts: PlannerContext[] = [];
  const planner: Planner = (context) => {
    contexts.push(context);
    return context.roundIndex === 0 ? round0 : RESPOND;
  };
  return { planner, contexts };
}

function partialOf(error: AbortError): ToolLoopPartialResult {
  const partial = error.partial as ToolLoopPartialResult | undefined;
  if (!partial) throw new Error(`${error.name} carries no partial result`);
  return partial;
}

async function settled<T>(promise: Promise<T>): Promise<T> {
  const outcome = await within(2_000, promise);
  if (outcome === 'hung') throw new Error('the run hung');
  if (outcome.settled === 'rejected') throw outcome.error;
  return outcome.value;
}

const ids = (n: number) => Array.from({ length: n }, (_, i) => `t${i}`);

describe('concurrency (T6)', () => {
  it.each([1, 2, 3])('never runs more than concurrency = %i tools at once', async (concurrency) => {
    const work = gatedTool();
    const all = ids(7);
    const { planner } = oneRound(workPlan(all));
    const run = createToolLoop({ planner, tools: [work.tool], concurrency }).invoke('go');

    for (let released = 0; released < all.length; released++) {
      const expected = Math.min(concurrency, all.length - released);
      const started = await within(1_000, work.startedAtLeast(released + expected));
      expect(started).not.toBe('hung');
      await flush();
      // The cap is reached, not exceeded: nothing else starts while these run.
      expect(work.inFlight).toBe(expected);
      expect(work.started).toHaveLength(released + expected);
      // Release the oldest running call.
      const oldest = work.started.find((id) => !work.finished.includes(id));
      work.release(oldest as string);
      await flush();
    }

    const result = await settled(run);
    expect(work.maxInFlight).toBe(concurrency);
    expect(result.toolLogs.map((r) => r.result)).toEqual(all.map((id) => `done ${id}`));
  });

  it('starts every command at once when concurrency is unset', async () => {
    const work = gatedTool();
    const all = ids(8);
    const { planner } = oneRound(workPlan(all));
    const run = createToolLoop({ planner, tools: [work.tool] }).invoke('go');

    // All eight start before any is released: with a cap this would hang.
    expect(await within(1_000, work.startedAtLeast(8))).not.toBe('hung');
    expect(work.finished).toEqual([]);
    expect(work.inFlight).toBe(8);
    for (const id of all) work.release(id);

    const result = await settled(run);
    expect(work.maxInFlight).toBe(8);
    expect(result.toolLogs).toHaveLength(8);
  });

  it('applies the cap per round, afresh', async () => {
    const work = gatedTool();
    let round = 0;
    const planner: Planner = (context) => {
      round = context.roundIndex;
      return context.roundIndex < 2 ? workPlan([`r${round}a`, `r${round}b`]) : RESPOND;
    };
    const run = createToolLoop({ planner, tools: [work.tool], concurrency: 2 }).invoke('go');
    for (const r of [0, 1]) {
      expect(await within(1_000, work.startedAtLeast(2 * r + 2))).not.toBe('hung');
      expect(work.inFlight).toBe(2);
      work.release(`r${r}a`);
      work.release(`r${r}b`);
    }
    const result = await settled(run);
    expect(result.rounds).toBe(2);
    expect(result.toolLogs.map((r) => r.kwargs)).toEqual([
      { id: 'r0a' },
      { id: 'r0b' },
      { id: 'r1a' },
      { id: 'r1b' },
    ]);
  });
});

describe('records (T6)', () => {
  it('keeps the records in command order when later commands finish first', async () => {
    const work = gatedTool();
    const all = ids(4);
    const { planner, contexts } = oneRound(workPlan(all));
    const run = createToolLoop({ planner, tools: [work.tool] }).invoke('go');

    await within(1_000, work.startedAtLeast(4));
    for (const id of [...all].reverse()) {
      work.release(id);
      await flush();
    }
    const result = await settled(run);

    expect(work.finished).toEqual(['t3', 't2', 't1', 't0']);
    expect(result.toolLogs.map((r) => r.purpose)).toEqual([
      'Work t0',
      'Work t1',
      'Work t2',
      'Work t3',
    ]);
    expect(contexts[1]?.lastRoundResult.map((r) => r.purpose)).toEqual([
      'Work t0',
      'Work t1',
      'Work t2',
      'Work t3',
    ]);
  });

  it('has the shape { purpose, toolName, kwargs, todoSuggestion, next, success, result, error }', async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a word up.',
      input: z.object({ word: z.string() }),
      execute: ({ word }) => ({ word, meaning: `the meaning of ${word}` }),
    });
    const { planner } = oneRound({
      nextAction: 'execute',
      executionCommands: [
        {
          purpose: 'Define actor',
          toolName: 'lookup',
          toolKwargs: { word: 'actor' },
          todoSuggestion: 'quote the definition',
        },
      ],
    });
    const result = await createToolLoop({ planner, tools: [lookup] }).invoke('go');
    const expected: ToolExecutionRecord = {
      purpose: 'Define actor',
      toolName: 'lookup',
      kwargs: { word: 'actor' },
      todoSuggestion: 'quote the definition',
      next: 'quote the definition',
      success: true,
      result: { word: 'actor', meaning: 'the meaning of actor' },
      error: null,
    };
    expect(result.toolLogs).toEqual([expected]);
    expect(Object.keys(result.toolLogs[0] ?? {}).sort()).toEqual(Object.keys(expected).sort());
  });

  it('turns a throwing tool, an unknown tool and invalid kwargs into failed records, and goes on', async () => {
    const boom = defineTool({
      name: 'boom',
      description: 'Always fails.',
      input: z.object({}),
      execute: () => {
        throw new Error('the disk is full');
      },
    });
    const count = defineTool({
      name: 'count',
      description: 'Counts to n.',
      input: z.object({ n: z.number().int() }),
      execute: ({ n }) => n,
    });
    const planner = vi.fn<Planner>((context) =>
      context.roundIndex === 0
        ? {
            nextAction: 'execute',
            executionCommands: [
              { purpose: 'Explode', toolName: 'boom', toolKwargs: {} },
              { purpose: 'Guess', toolName: 'nope', toolKwargs: { x: 1 } },
              { purpose: 'Bad count', toolName: 'count', toolKwargs: { n: 'three' } },
              { purpose: 'Good count', toolName: 'count', toolKwargs: { n: 3 } },
            ],
          }
        : context.roundIndex === 1
          ? {
              nextAction: 'execute',
              executionCommands: [{ toolName: 'count', toolKwargs: { n: 4 } }],
            }
          : RESPOND,
    );
    const result = await settled(createToolLoop({ planner, tools: [boom, count] }).invoke('go'));

    expect(planner).toHaveBeenCalledTimes(3);
    expect(result.stopReason).toBe('response');
    expect(result.rounds).toBe(2);
    const [explode, guess, bad, good, next] = result.toolLogs;
    expect(explode).toMatchObject({ toolName: 'boom', success: false, result: null });
    expect(explode?.error).toContain('the disk is full');
    expect(guess).toMatchObject({ toolName: 'nope', success: false, result: null });
    expect(guess?.error).toContain("Unknown tool 'nope'");
    expect(bad).toMatchObject({ toolName: 'count', success: false, result: null });
    expect(bad?.error).toContain("Invalid arguments for tool 'count'");
    expect(good).toMatchObject({ success: true, result: 3, error: null });
    expect(next).toMatchObject({ purpose: 'Use count', success: true, result: 4 });

    // The planner of the next round saw the failures as data.
    const round1 = planner.mock.calls[1]?.[0];
    expect(round1?.lastRoundResult.map((r) => r.success)).toEqual([false, false, false, true]);
    // Failures converge to { error, result }.
    expect(result.actionResults.Explode).toEqual({ error: explode?.error, result: null });
    expect(result.actionResults['Good count']).toBe(3);
  });
});

describe('abort (T6, C14)', () => {
  it('reaches every running tool and keeps the records finished before it', async () => {
    const work = gatedTool();
    const controller = new AbortController();
    const planner = vi.fn<Planner>((context) =>
      context.roundIndex === 0 ? workPlan(['early']) : workPlan(['slow1', 'quick', 'slow2']),
    );
    const run = createToolLoop({ planner, tools: [work.tool] }).invoke('go', {
      signal: controller.signal,
    });
    work.release('early');
    work.release('quick');
    expect(await within(1_000, work.startedAtLeast(4))).not.toBe('hung');
    await flush();
    expect(work.finished).toEqual(['early', 'quick']);

    controller.abort();
    const error = await rejectionOf(AbortError, settled(run));

    expect(work.signals.get('slow1')?.aborted).toBe(true);
    expect(work.signals.get('slow2')?.aborted).toBe(true);
    expect(error.code).toBe('ABORTED');
    const partial = partialOf(error);
    expect(partial.toolLogs.map((r) => r.kwargs)).toEqual([{ id: 'early' }, { id: 'quick' }]);
    expect(partial.toolLogs.every((r) => r.success)).toBe(true);
    expect(partial.output?.status).toBe('failed');
    expect(partial.output?.rounds).toBe(1);
    // The run did not go on planning after the abort.
    await flush();
    expect(planner).toHaveBeenCalledTimes(2);
  });

  it('names the reason the caller gave', async () => {
    const work = gatedTool();
    const controller = new AbortController();
    const { planner } = oneRound(workPlan(['hang']));
    const run = createToolLoop({ planner, tools: [work.tool] }).invoke('go', {
      signal: controller.signal,
    });
    await within(1_000, work.startedAtLeast(1));
    controller.abort('user pressed stop');
    const error = await rejectionOf(AbortError, settled(run));
    expect(error.message).toContain('user pressed stop');
    expect(work.signals.get('hang')?.aborted).toBe(true);
    expect(partialOf(error).toolLogs).toEqual([]);
  });

  it('with an already aborted signal, calls neither the planner nor any tool', async () => {
    const work = gatedTool();
    const { planner, contexts } = oneRound(workPlan(['x']));
    const error = await rejectionOf(
      AbortError,
      settled(
        createToolLoop({ planner, tools: [work.tool] }).invoke('go', {
          signal: AbortSignal.abort(),
        }),
      ),
    );
    await flush();
    expect(work.started).toEqual([]);
    expect(partialOf(error).toolLogs).toEqual([]);
    // Like the chain (C14): a run cancelled before it starts spends no planner call.
    expect(contexts).toHaveLength(0);
  });

  it('with an already aborted signal, spends no call of the default model planner', async () => {
    const work = gatedTool();
    const model = new ScriptedModel([{ text: JSON.stringify(workPlan(['x'])) }]);
    await rejectionOf(
      AbortError,
      settled(
        createToolLoop({ model, tools: [work.tool] }).invoke('go', { signal: AbortSignal.abort() }),
      ),
    );
    expect(model.callCount).toBe(0);
    expect(work.started).toEqual([]);
  });
});
