// Issue 15: a durable run's deadline counts from its journaled start, across restarts: a
// deadline that passed while the process was down fires once on resume, and only once.
import {
  createChain,
  createToolLoop,
  defineTool,
  type LanguageModel,
  type RunDetails,
  TimeoutError,
} from 'statecraft';
import type { ModelRequest } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JournalEntry } from '../../src/durable/journal-entry.js';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import { type Execution, loggingTool, storeWithPrefix, type Turn, turnModel } from './helpers.js';

/** A model that answers only when aborted (with the abort's error): a call in flight forever. */
function hangingModel(): LanguageModel & { calls: number } {
  const model = {
    specificationVersion: 'v1' as const,
    provider: 'test',
    modelId: 'hang',
    calls: 0,
    generate(_request: ModelRequest, options?: { signal?: AbortSignal }) {
      model.calls++;
      return new Promise<never>((_, reject) => {
        const signal = options?.signal;
        if (!signal) return;
        if (signal.aborted) reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    },
    // biome-ignore lint/correctness/useYield: never yields; a call in flight forever.
    async *stream() {
      throw new Error('not streamed');
    },
  };
  return model as unknown as LanguageModel & { calls: number };
}

/** The journal of a run that died with its first model call in flight, started `ago` ms back. */
async function diedWithCallInFlight(
  start: (store: ReturnType<typeof memoryStore>) => Promise<unknown>,
  ago: number,
) {
  const store = memoryStore();
  // Started, then "killed": the journal keeps the start and the model call's request (the
  // run itself is aborted by its caller's signal soon after; its later entries are dropped).
  await start(store).catch(() => {});
  const entries = ((await store.read('t')) ?? []).slice(0, 2);
  const [first, request] = entries as [JournalEntry, JournalEntry];
  expect(request.type).toBe('request');
  const moved = { ...first, startedAt: (first.startedAt as number) - ago };
  return storeWithPrefix('t', [moved, request], 2);
}

describe('durable deadlines', () => {
  it('a maxExecutionTime that passed while the process was down fires once on resume', async () => {
    const hung = createChain({ model: hangingModel(), maxExecutionTime: 1_000 });
    const store = await diedWithCallInFlight(
      (s) => hung.invoke('go', { runId: 't', store: s, signal: AbortSignal.timeout(200) }),
      5_000,
    );
    const model = hangingModel();
    const chain = createChain({ model, maxExecutionTime: 1_000 });
    const error = await chain.resume('t', { store }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    // The deadline had passed: it fired before the call in flight could be issued again.
    expect(model.calls).toBe(0);
    const timers = ((await store.read('t')) ?? []).filter((e) => e.type === 'timer');
    expect(timers).toEqual([{ type: 'timer', name: 'maxExecutionTime' }]);
    // Resumed again: the firing is replayed, not fired anew; nothing is called.
    const again = createChain({ model: hangingModel(), maxExecutionTime: 1_000 });
    await expect(again.resume('t', { store })).rejects.toBeInstanceOf(TimeoutError);
    expect(((await store.read('t')) ?? []).filter((e) => e.type === 'timer')).toHaveLength(1);
  });

  it('the time left is counted from the journaled start, not from the resume', async () => {
    const hung = createChain({ model: hangingModel(), maxExecutionTime: 60_000 });
    const store = await diedWithCallInFlight(
      (s) => hung.invoke('go', { runId: 't', store: s, signal: AbortSignal.timeout(200) }),
      59_800,
    );
    // A deadline counted from the resume would hold this call for a minute (the test's
    // timeout is 10 s); counted from the journaled start it fires within about 200 ms.
    const chain = createChain({ model: hangingModel(), maxExecutionTime: 60_000 });
    await expect(chain.resume('t', { store })).rejects.toBeInstanceOf(TimeoutError);
  }, 10_000);

  it('a tool call in flight when the process died is not issued again once the deadline has passed; one that finished keeps its result', async () => {
    const turns: readonly Turn[] = [
      {
        calls: [
          { id: 'c1', name: 'reserve', arguments: { value: 'seat' } },
          { id: 'c2', name: 'charge', arguments: { value: 'card' } },
        ],
      },
      { text: 'charged' },
    ];
    // The first process reserved, and died while it charged; 5 s ago, limit 1 s.
    const first = memoryStore();
    const hanging = defineTool({
      name: 'charge',
      description: 'Records a charge.', // as loggingTool's: the same configuration
      input: z.object({ value: z.string() }),
      execute: (_args, { signal }) =>
        new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
        ),
    });
    const dying = createChain({
      model: turnModel(turns),
      tools: [loggingTool('reserve', []), hanging],
      maxExecutionTime: 1_000,
    });
    await dying
      .invoke('charge it', { runId: 't', store: first, signal: AbortSignal.timeout(300) })
      .catch(() => {});
    const entries = (await first.read('t')) ?? [];
    const at = (type: string, callId: string) =>
      entries.findIndex((entry) => entry.type === type && entry.callId === callId);
    const cut = Math.max(at('result', 'c1'), at('call', 'c2')) + 1;
    expect(at('result', 'c1')).toBeGreaterThan(0);
    expect(at('call', 'c2')).toBeGreaterThan(0);
    const [start, ...rest] = entries.slice(0, cut) as [JournalEntry, ...JournalEntry[]];
    const store = await storeWithPrefix(
      't',
      [{ ...start, startedAt: (start.startedAt as number) - 5_000 }, ...rest],
      cut,
    );
    const log: Execution[] = [];
    const chain = createChain({
      model: turnModel(turns),
      tools: [loggingTool('reserve', log), loggingTool('charge', log)],
      maxExecutionTime: 1_000,
    });
    const error = await chain.resume('t', { store }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(log).toEqual([]); // neither ran again
    // The transcript keeps the reservation's real result, and answers the charge as not run;
    // details() shows the reservation, answered from the journal.
    const partial = (error as TimeoutError).partial;
    const answers = partial?.transcript.filter((message) => message.role === 'tool') ?? [];
    expect(answers).toMatchObject([
      { toolCallId: 'c1', success: true, output: 'reserve:seat' },
      { toolCallId: 'c2', success: false },
    ]);
    const details = (partial as { details(): RunDetails } | undefined)?.details();
    expect(details?.toolCalls).toMatchObject([{ call: { id: 'c1' }, replayed: true }]);
  });

  it('a call queued behind toolConcurrency when the deadline cancels its step never starts, and the run replays', async () => {
    const started: string[] = [];
    // The first call holds the only slot until the deadline aborts it; the second waits.
    const slow = defineTool({
      name: 'charge',
      description: 'Records a charge.',
      input: z.object({ value: z.string() }),
      execute: ({ value }, { signal }) => {
        started.push(value);
        return new Promise<never>((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
        );
      },
    });
    const turns: readonly Turn[] = [
      {
        calls: [
          { id: 'c1', name: 'charge', arguments: { value: 'first' } },
          { id: 'c2', name: 'charge', arguments: { value: 'second' } },
        ],
      },
      { text: 'stopped' },
    ];
    const chainOf = () =>
      createChain({
        model: turnModel(turns),
        tools: [slow],
        toolConcurrency: 1,
        maxExecutionTime: 300,
        earlyStopping: 'generate',
      });
    const store = memoryStore();
    const result = await chainOf().invoke('charge', { runId: 'q', store });
    expect(result.text).toBe('stopped');
    expect(started).toEqual(['first']);
    const entries = (await store.read('q')) ?? [];
    expect(entries.filter((entry) => entry.type === 'call')).toHaveLength(1);
    // Replayed from its journal: the same end, nothing run again.
    expect((await chainOf().resume('q', { store })).text).toBe('stopped');
    expect(started).toEqual(['first']);
  });

  it("a tool loop's timeout too", async () => {
    const planner = (_context: unknown, { signal }: { signal: AbortSignal }) =>
      new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
      );
    const tools = [loggingTool('charge', [])];
    const loop = createToolLoop({ planner, tools, respond: false, timeout: 1_000 });
    const store = await diedWithCallInFlight(
      (s) => loop.invoke('go', { runId: 't', store: s, signal: AbortSignal.timeout(200) }),
      5_000,
    );
    const resumed = createToolLoop({ planner, tools, respond: false, timeout: 1_000 });
    await expect(resumed.resume('t', { store })).rejects.toBeInstanceOf(TimeoutError);
    const entries = (await store.read('t')) ?? [];
    expect(entries.filter((e) => e.type === 'timer')).toEqual([
      { type: 'timer', name: 'loopTimeout' },
    ]);
    expect(entries.at(-1)).toEqual({ type: 'end', status: 'failed' });
  });
});
