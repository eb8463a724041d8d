// A durable run whose store fails (a full disk, a refused file, an entry too large, a store
// that never answers, one that throws what it likes) ends at once with a typed JournalError
// that carries the partial run, is bounded by the store's timeoutMs and by the run's own
// deadline and signal, and resumes once the fault is cleared, repeating no finished call.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  approvals,
  costOf,
  createChain,
  createToolLoop,
  type FileJournalStore,
  fileStore,
  JournalError,
  type JournalStore,
  memoryStore,
} from 'statecraft';
import { afterEach, describe, expect, it } from 'vitest';
import { type Fault, type FaultyStore, faultyStore } from './faulty-store.js';
import { type Execution, loggingTool, type Turn, turnModel } from './helpers.js';

const TURNS: readonly Turn[] = [
  { calls: [{ id: 'c1', name: 'reserve', arguments: { value: 'seat' } }] },
  { calls: [{ id: 'c2', name: 'charge', arguments: { value: 'card' } }] },
  { text: 'booked' },
];
// The appends of a run of TURNS, in order (1-based).
const APPEND = { executeToolsRequest: 4, c1Result: 6, c1StepAnswer: 7 } as const;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempStore(): FileJournalStore {
  const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-faults-'));
  dirs.push(dir);
  return fileStore(dir);
}

const PRICES = { inputPerMillion: 2, outputPerMillion: 8 };

function chainLogging(
  log: Execution[],
  options: { maxExecutionTime?: number; prices?: typeof PRICES } = {},
) {
  return createChain({
    model: turnModel(TURNS),
    tools: [loggingTool('reserve', log), loggingTool('charge', log)],
    ...options,
  });
}

async function failure(run: Promise<unknown>): Promise<JournalError> {
  const error = await run.then(
    () => expect.fail('the run should have failed'),
    (caught: unknown) => caught,
  );
  expect(JournalError.isInstance(error), String(error)).toBe(true);
  return error as JournalError;
}

describe('a store that fails mid-run', () => {
  it.each([
    ['ENOSPC', 'no-space', /disk \(or quota\) is full: free space, then resume/],
    ['EACCES', 'no-permission', /fix the permissions, then resume/],
  ] as const)(
    '%s tearing a line: typed %s with the partial run, then resumed once cleared',
    async (kind, reason, advice) => {
      const inner = tempStore();
      const file = path.join(inner.dir, 'trip.jsonl');
      const fault: Fault = { kind, tear: file };
      const store = faultyStore(inner, APPEND.c1Result, fault);
      const log: Execution[] = [];
      const error = await failure(chainLogging(log).invoke('book', { runId: 'trip', store }));
      expect(error.reason).toBe(reason);
      expect(error.message).toMatch(advice);
      expect(error.runId).toBe('trip');
      // The run as it stopped: the model's call to reserve, whose tool ran.
      expect(error.partial?.transcript.map((message) => message.role)).toEqual([
        'user',
        'assistant',
        'tool',
      ]);
      expect(error.partial?.usage.totalTokens).toBe(15);
      expect(log.map((execution) => execution.callId)).toEqual(['c1']);
      // Still readable by anyone: letting the run go, this process cut the torn line.
      expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true);
      expect((await fileStore(inner.dir).list()).map((run) => run.status)).toEqual(['running']);

      // Space is back: the same process (the same store) resumes. c1's result never made it to
      // the journal, so c1 is issued once more (flagged possibly repeated); nothing else repeats.
      store.heal();
      const result = await chainLogging(log).resume('trip', { store });
      expect(result.text).toBe('booked');
      expect(log.map((execution) => execution.callId)).toEqual(['c1', 'c1', 'c2']);
      expect(new Set(log.map((execution) => execution.key))).toEqual(
        new Set(['trip:c1', 'trip:c2']),
      );
      // The journal has no torn line in the middle: a fresh store reads and lists it.
      expect((await fileStore(inner.dir).read('trip'))?.at(-1)).toEqual({
        type: 'end',
        status: 'succeeded',
      });
      expect(await approvals(fileStore(inner.dir)).list()).toEqual([]);
    },
  );

  it('a failure while tools run keeps the step whose tools ran, so its usage adds up, and its cost', async () => {
    const store = faultyStore(tempStore(), APPEND.c1Result, { kind: 'EACCES' });
    const chain = chainLogging([], { prices: PRICES });
    const error = await failure(chain.invoke('book', { runId: 'trip', store }));
    const partial = error.partial as unknown as {
      steps: { usage: { totalTokens: number } }[];
      usage: { totalTokens: number };
      cost?: number;
    };
    expect(partial.usage.totalTokens).toBe(15);
    expect(partial.steps.map((step) => step.usage.totalTokens)).toEqual([15]);
    expect(partial.cost).toBe(costOf(partial.usage as Parameters<typeof costOf>[0], PRICES));
  });

  it('a failure of the start entry ends typed, with the run as it stood: its input, nothing done', async () => {
    const inner = tempStore();
    const store = faultyStore(inner, 1, {
      kind: 'ENOSPC',
      tear: path.join(inner.dir, 'trip.jsonl'),
    });
    const log: Execution[] = [];
    const error = await failure(chainLogging(log).invoke('book', { runId: 'trip', store }));
    expect(error.reason).toBe('no-space');
    expect(error.partial?.transcript).toEqual([{ role: 'user', content: 'book' }]);
    expect(error.partial?.usage.totalTokens).toBe(0);
    expect(log).toEqual([]);
    // Nothing began: no run is listed, and the id starts a run once the disk has room.
    expect(await fileStore(inner.dir).list()).toEqual([]);
    store.heal();
    expect((await chainLogging(log).invoke('book', { runId: 'trip', store })).text).toBe('booked');
  });

  it('a tool loop failing mid-round logs the calls of that round that finished', async () => {
    const loopOf = (log: Execution[]) =>
      createToolLoop({
        planner: async ({ roundIndex }) => ({
          nextAction: roundIndex === 0 ? 'execute' : 'response',
          executionCommands: ['a', 'b', 'c'].map((value) => ({
            purpose: `charge ${value}`,
            toolName: 'charge',
            toolKwargs: { value },
          })),
        }),
        tools: [loggingTool('charge', log)],
        concurrency: 1,
        respond: async () => 'done',
      });
    // Where the second call's result is appended, as an unfaulted run journals it.
    const dry = memoryStore();
    await loopOf([]).invoke('pay', { runId: 'dry', store: dry });
    const types = ((await dry.read('dry')) ?? []).map((entry) => entry.type);
    const secondResult = types.indexOf('result', types.indexOf('result') + 1) + 1;
    const log: Execution[] = [];
    const store = faultyStore(tempStore(), secondResult, { kind: 'ENOSPC' });
    const error = await failure(loopOf(log).invoke('pay', { runId: 'pay', store }));
    expect(error.reason).toBe('no-space');
    expect(log.map((execution) => execution.callId)).toHaveLength(2);
    const toolLogs = (error.partial as unknown as { toolLogs: { kwargs: unknown }[] }).toolLogs;
    expect(toolLogs.map((record) => record.kwargs)).toEqual([{ value: 'a' }, { value: 'b' }]);
  });

  it('a failure after a call finished loses nothing confirmed: the resume does not run it again', async () => {
    const store = faultyStore(tempStore(), APPEND.c1StepAnswer, { kind: 'ENOSPC' });
    const log: Execution[] = [];
    const error = await failure(chainLogging(log).invoke('book', { runId: 'trip', store }));
    expect(error.reason).toBe('no-space');
    store.heal();
    await chainLogging(log).resume('trip', { store });
    expect(log.map((execution) => execution.callId)).toEqual(['c1', 'c2']);
  });

  it('an error the store throws without a known cause is typed store-failed, its cause kept', async () => {
    const store = faultyStore(memoryStore(), APPEND.executeToolsRequest, { kind: 'throw' });
    const log: Execution[] = [];
    const error = await failure(chainLogging(log).invoke('book', { runId: 'trip', store }));
    expect(error.reason).toBe('store-failed');
    expect((error.cause as Error).message).toBe('the store broke');
    // Its intent was never written, so the call never started, and the transcript says so.
    expect(log).toEqual([]);
    const [, , answer] = error.partial?.transcript ?? [];
    expect(answer).toMatchObject({
      role: 'tool',
      success: false,
      error: expect.stringMatching(/not run/),
    });
  });

  it('an entry over the store’s maxEntryBytes ends the run too-large, saying what to raise', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-faults-'));
    dirs.push(dir);
    const store = fileStore(dir, { maxEntryBytes: 4_096 });
    const chain = createChain({
      model: turnModel(TURNS),
      tools: [loggingTool('reserve', []), loggingTool('charge', [])],
    });
    const error = await failure(
      chain.invoke(
        { messages: [{ role: 'user', content: 'x'.repeat(5_000) }] },
        {
          runId: 'big',
          store,
        },
      ),
    );
    expect(error.reason).toBe('too-large');
    expect(error.message).toContain('maxEntryBytes (4096)');
  });
});

describe('a store that never answers', () => {
  const stalled = (timeoutMs?: number): JournalStore =>
    faultyStore(memoryStore(), APPEND.executeToolsRequest, { kind: 'stall' }, timeoutMs);

  it('is bounded by the run’s maxExecutionTime (then a short grace), not the store’s timeout', async () => {
    const log: Execution[] = [];
    const chain = chainLogging(log, { maxExecutionTime: 300 });
    const error = await failure(chain.invoke('book', { runId: 'slow', store: stalled() }));
    expect(error.reason).toBe('timed-out');
    expect(error.message).toContain('after the run reached its time limit');
    expect(error.partial?.transcript.length).toBeGreaterThan(0);
    expect(log).toEqual([]);
  });

  it('is bounded by the caller’s signal', async () => {
    const chain = chainLogging([]);
    const error = await failure(
      chain.invoke('book', { runId: 'slow', store: stalled(), signal: AbortSignal.timeout(300) }),
    );
    expect(error.reason).toBe('timed-out');
    expect(error.message).toContain('after the run was cancelled');
  });

  it('leaves no timer behind once it timed out, though the run was cancelled while it waited', async () => {
    const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
    const before = timers();
    const controller = new AbortController();
    const store = stalled(500);
    const run = chainLogging([]).invoke('book', {
      runId: 'slow',
      store,
      signal: controller.signal,
    });
    // Cancelled once the store has stalled: its grace (2 s) is longer than what is left of
    // the store's own 500 ms, which ends the wait first.
    while ((store as FaultyStore).appends < APPEND.executeToolsRequest)
      await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort();
    const error = await failure(run);
    expect(error.reason).toBe('timed-out');
    expect(error.message).toContain('within 500 ms');
    expect(timers()).toBeLessThanOrEqual(before);
  });

  it('is bounded by the store’s own timeoutMs when the run has neither', async () => {
    const error = await failure(
      chainLogging([]).invoke('book', { runId: 'slow', store: stalled(500) }),
    );
    expect(error.reason).toBe('timed-out');
    expect(error.message).toContain('within 500 ms');
  });
});

describe('approvals(store) over a store that never answers', () => {
  it('ends each decision and listing with a typed timed-out, after the store’s timeoutMs', async () => {
    const never = () => new Promise<never>(() => {});
    const stalled: JournalStore = {
      timeoutMs: 300,
      append: never,
      read: never,
      list: never,
      delete: never,
      post: never,
      posted: never,
    };
    const decisions = approvals(stalled);
    for (const attempt of [
      () => decisions.approve('r', 'c1'),
      () => decisions.list(),
      () => decisions.list('r'),
    ]) {
      const error = await failure(attempt());
      expect(error.reason).toBe('timed-out');
      expect(error.message).toContain('within 300 ms');
    }
  });
});
