// SPEC Q8 for durable runs: a step cut short keeps the calls that finished, and a resume
// (the journal replayed through the machine) tells the same truth. The results journaled
// before what stopped the step — the deadline's timer, an abort, a hook's failure, a
// decision's deadline — reach the machine again before it, in the chain (partial.transcript,
// intermediateSteps) and the tool loop (partial.toolLogs); a result journaled after the stop
// does not count; a step in flight at a crash keeps what finished without running it again.
import {
  AbortError,
  ChainError,
  type ChainPartialResult,
  createChain,
  createToolLoop,
  defineTool,
  type Planner,
  type RunDetails,
  type StatecraftError,
  TimeoutError,
  type ToolLoopPartialResult,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { JournalEntry } from '../../src/durable/journal-entry.js';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import { aborted, deferred, toolMessages } from '../chain/helpers.js';
import { storeWithPrefix } from './helpers.js';

/**
 * `charge` finishes at once (`charged` resolves then); `wait` answers only once its signal
 * aborts; `refund` needs a decision. `done` logs every execution.
 */
function sideEffects() {
  const done: string[] = [];
  const charged = deferred();
  const charge = defineTool({
    name: 'charge',
    description: 'Charges a card.',
    input: z.object({ cents: z.number() }),
    execute: ({ cents }) => {
      done.push(`charged ${cents}`);
      charged.resolve();
      return `charged ${cents}`;
    },
  });
  const wait = defineTool({
    name: 'wait',
    description: 'Waits for the bank.',
    input: z.object({}),
    execute: async (_args, { signal }) => {
      await aborted(signal);
      return 'too late';
    },
  });
  const notify = defineTool({
    name: 'notify',
    description: 'Notifies.',
    input: z.object({}),
    execute: () => {
      done.push('notified');
      return 'notified';
    },
  });
  const refund = defineTool({
    name: 'refund',
    description: 'Refunds.',
    input: z.object({}),
    needsApproval: true,
    execute: () => 'refunded',
  });
  return { tools: [charge, wait, notify, refund], done, charged: charged.promise };
}

const CHARGE = { id: 'c1', name: 'charge', arguments: { cents: 500 } };
const second = (name: string) => ({ id: 'c2', name, arguments: {} });

/** Aborts `controller` once `charged` resolved and its result had a turn to reach the run. */
function abortAfter(charged: Promise<void>): AbortController {
  const controller = new AbortController();
  void charged.then(() => setTimeout(() => controller.abort('the user left'), 0));
  return controller;
}

function partialOf<P>(error: unknown): P {
  const partial = (error as StatecraftError).partial as P | undefined;
  if (!partial) throw new Error(`${String(error)} carries no partial result`);
  return partial;
}

function detailsOf(partial: { readonly details?: unknown }): RunDetails {
  const details = partial.details as RunDetails | (() => RunDetails);
  return typeof details === 'function' ? details() : details;
}

const chargedAnswer = { toolCallId: 'c1', success: true, output: 'charged 500' };

/** What a chain run and its resume must both say: c1 ran; `c2` as given. */
function expectChainTruth(live: ChainPartialResult, resumed: ChainPartialResult, c2: object) {
  for (const partial of [live, resumed]) {
    const tools = toolMessages(partial.transcript);
    expect(tools.find((m) => m.toolCallId === 'c1')).toMatchObject(chargedAnswer);
    expect(tools.find((m) => m.toolCallId === 'c2')).toMatchObject(c2);
  }
  expect(resumed.transcript).toEqual(live.transcript);
  expect(resumed.intermediateSteps).toEqual(live.intermediateSteps);
  expect(resumed.steps).toEqual(live.steps);
  // The resume ran nothing: c1 is answered from the journal.
  expect(detailsOf(resumed).toolCalls.find((c) => c.call.id === 'c1')).toMatchObject({
    replayed: true,
    result: { success: true },
  });
}

const notRun = (why: RegExp) => ({ success: false, error: expect.stringMatching(why) });

/** The entries of run `id`, and where the first of `type` is. */
async function journal(store: ReturnType<typeof memoryStore>, id: string) {
  const entries = (await store.read(id)) ?? [];
  return { entries, at: (type: string) => entries.findIndex((e) => e.type === type) };
}

const isResultOf = (entry: JournalEntry, callId: string) =>
  entry.type === 'result' && entry.callId === callId;

describe('a durable chain: a step cut short keeps what finished, on resume too', () => {
  const chainOf = (toolCalls: object[], options: object = {}) => {
    const { tools, done, charged } = sideEffects();
    const model = new ScriptedModel([{ toolCalls }] as never);
    return { chain: createChain({ model, tools, ...options }), done, charged };
  };

  it('the time limit: the journaled result comes before the timer, and a resume reports it', async () => {
    const store = memoryStore();
    const make = () => chainOf([CHARGE, second('wait')], { maxExecutionTime: 1_500 });
    const live = await make()
      .chain.invoke('Pay.', { runId: 't', store })
      .catch((e) => e);
    expect(TimeoutError.isInstance(live)).toBe(true);
    const { entries, at } = await journal(store, 't');
    const result = entries.findIndex((e) => isResultOf(e, 'c1'));
    expect(result).toBeGreaterThan(0);
    expect(result).toBeLessThan(at('timer'));

    const again = make();
    const resumed = await again.chain.resume('t', { store }).catch((e) => e);

    expect(TimeoutError.isInstance(resumed)).toBe(true);
    expectChainTruth(
      partialOf(live),
      partialOf(resumed),
      notRun(/not run, the time limit was reached/),
    );
    expect(again.done).toEqual([]);
  }, 30_000);

  it('an abort: the same partial run on resume', async () => {
    const store = memoryStore();
    const first = chainOf([CHARGE, second('wait')]);
    const { signal } = abortAfter(first.charged);
    const live = await first.chain.invoke('Pay.', { runId: 'a', store, signal }).catch((e) => e);
    expect(AbortError.isInstance(live)).toBe(true);

    const resumed = await chainOf([CHARGE, second('wait')])
      .chain.resume('a', { store })
      .catch((e) => e);

    expect(AbortError.isInstance(resumed)).toBe(true);
    expectChainTruth(partialOf(live), partialOf(resumed), notRun(/not run, the run failed/));
  });

  it('an afterToolCall that throws: the call it threw for is journaled, and kept on resume', async () => {
    const store = memoryStore();
    const afterToolCall = (call: { id: string }) => {
      if (call.id === 'c1') throw new Error('audit log is down');
    };
    const make = () => chainOf([CHARGE, second('notify')], { afterToolCall });
    const live = await make()
      .chain.invoke('Pay.', { runId: 'h', store })
      .catch((e) => e);
    expect(ChainError.isInstance(live)).toBe(true);
    const { entries } = await journal(store, 'h');
    expect(entries.filter((e) => e.type === 'result').map((e) => e.callId)).toEqual(
      expect.arrayContaining(['c1', 'c2']),
    );

    const again = make();
    const resumed = await again.chain.resume('h', { store }).catch((e) => e);

    expect(ChainError.isInstance(resumed)).toBe(true);
    expectChainTruth(partialOf(live), partialOf(resumed), { success: true, output: 'notified' });
    expect(again.done).toEqual([]);

    // Crashed right after c1's result: c1 is not run again, and its hook's failure, journaled
    // with it, fails the step again, as in the run that did not crash.
    const cut = entries.findIndex((e) => isResultOf(e, 'c1')) + 1;
    const third = make();
    const crashed = await third.chain
      .resume('h', { store: await storeWithPrefix('h', entries, cut) })
      .catch((e) => e);
    expect(ChainError.isInstance(crashed)).toBe(true);
    expect(crashed.cause).toMatchObject({ hook: 'afterToolCall', callId: 'c1' });
    expect((crashed as Error).message).toBe((live as Error).message);
    expect(third.done).not.toContain('charged 500');
    const tools = toolMessages(partialOf<ChainPartialResult>(crashed).transcript);
    expect(tools.find((m) => m.toolCallId === 'c1')).toMatchObject(chargedAnswer);
  });

  it("a decision's deadline under onApprovalTimeout 'fail': the same partial run on resume", async () => {
    const store = memoryStore();
    const make = () =>
      chainOf([CHARGE, second('refund')], { approvalTimeoutMs: 50, onApprovalTimeout: 'fail' });
    const approve = () => undefined;
    const live = await make()
      .chain.invoke('Pay.', { runId: 'd', store, approve })
      .catch((e) => e);
    expect(TimeoutError.isInstance(live)).toBe(true);

    const resumed = await make()
      .chain.resume('d', { store, approve })
      .catch((e) => e);

    expect(TimeoutError.isInstance(resumed)).toBe(true);
    expectChainTruth(
      partialOf(live),
      partialOf(resumed),
      notRun(/not run, the run failed: No decision on tool call c2/),
    );
  });

  it('a result journaled after the step was stopped does not count', async () => {
    const store = memoryStore();
    const make = () => chainOf([CHARGE, second('wait')], { maxExecutionTime: 1_000 });
    const live = await make()
      .chain.invoke('Pay.', { runId: 'l', store })
      .catch((e) => e);
    const { entries, at } = await journal(store, 'l');
    const c1 = entries.find((e) => isResultOf(e, 'c1')) as JournalEntry;
    // c2 answering after the timer, as a tool that ignored its abort would have.
    const late = { ...c1, callId: 'c2', result: { ...(c1.result as object), toolCallId: 'c2' } };
    const timer = at('timer');
    const tampered = [...entries.slice(0, timer + 1), late, ...entries.slice(timer + 1)];

    const resumed = await make()
      .chain.resume('l', { store: await storeWithPrefix('l', tampered, tampered.length) })
      .catch((e) => e);

    expect(TimeoutError.isInstance(resumed)).toBe(true);
    expectChainTruth(
      partialOf(live),
      partialOf(resumed),
      notRun(/not run, the time limit was reached/),
    );
  }, 30_000);

  it('a crash in the middle of the step: what finished is kept, not run again, and replays alike', async () => {
    const store = memoryStore();
    const make = () => chainOf([CHARGE, second('wait')], { maxExecutionTime: 1_000 });
    await make()
      .chain.invoke('Pay.', { runId: 'm', store })
      .catch(() => {});
    const { entries } = await journal(store, 'm');
    // Died right after c1's result: the step is issued again, its deadline long passed.
    const crashed = await storeWithPrefix(
      'm',
      entries,
      entries.findIndex((e) => isResultOf(e, 'c1')) + 1,
    );

    const again = make();
    const resumed = await again.chain.resume('m', { store: crashed }).catch((e) => e);

    expect(TimeoutError.isInstance(resumed)).toBe(true);
    expect(again.done).toEqual([]);
    const once = partialOf<ChainPartialResult>(resumed);
    expect(toolMessages(once.transcript).find((m) => m.toolCallId === 'c1')).toMatchObject(
      chargedAnswer,
    );
    // The journal the resumed process wrote replays to the same partial run.
    const replayed = await make()
      .chain.resume('m', { store: crashed })
      .catch((e) => e);
    expectChainTruth(once, partialOf(replayed), notRun(/not run, the time limit was reached/));
  }, 30_000);
});

describe('a durable tool loop: a round cut short keeps its finished records, on resume too', () => {
  const planner =
    (second: string): Planner =>
    (context) =>
      context.roundIndex === 0
        ? {
            nextAction: 'execute',
            executionCommands: [
              { purpose: 'charge', toolName: 'charge', toolKwargs: { cents: 500 } },
              { purpose: 'second', toolName: second, toolKwargs: {} },
            ],
          }
        : { nextAction: 'response' };
  const loopOf = (secondTool: string, options: object = {}) => {
    const { tools, done, charged } = sideEffects();
    const loop = createToolLoop({
      planner: planner(secondTool),
      tools,
      respond: false,
      ...options,
    });
    return { loop, done, charged };
  };
  const charged = { toolName: 'charge', success: true, result: 'charged 500' };

  /** The live run's records, and the resume's, the same; `charged` among them. */
  function expectLoopTruth(live: unknown, resumed: unknown, records: object[]) {
    const livePartial = partialOf<ToolLoopPartialResult>(live);
    const resumedPartial = partialOf<ToolLoopPartialResult>(resumed);
    expect(livePartial.toolLogs).toMatchObject(records);
    expect(resumedPartial.toolLogs).toEqual(livePartial.toolLogs);
    expect(detailsOf(resumedPartial).toolCalls.find((c) => c.call.id === 'round1_0')).toMatchObject(
      { replayed: true },
    );
  }

  it('the timeout: a resume keeps the record that finished', async () => {
    const store = memoryStore();
    const live = await loopOf('wait', { timeout: 1_500 })
      .loop.invoke('Pay.', { runId: 't', store })
      .catch((e) => e);
    expect(TimeoutError.isInstance(live)).toBe(true);

    const again = loopOf('wait', { timeout: 1_500 });
    const resumed = await again.loop.resume('t', { store }).catch((e) => e);

    expect(TimeoutError.isInstance(resumed)).toBe(true);
    expectLoopTruth(live, resumed, [charged]);
    expect(again.done).toEqual([]);
  }, 30_000);

  it('an abort: a resume keeps the record that finished', async () => {
    const store = memoryStore();
    const first = loopOf('wait');
    const { signal } = abortAfter(first.charged);
    const live = await first.loop.invoke('Pay.', { runId: 'a', store, signal }).catch((e) => e);
    expect(AbortError.isInstance(live)).toBe(true);

    const resumed = await loopOf('wait')
      .loop.resume('a', { store })
      .catch((e) => e);

    expect(AbortError.isInstance(resumed)).toBe(true);
    expectLoopTruth(live, resumed, [charged]);
  });

  it('an afterToolCall that throws: the command it threw for is journaled, and kept on resume', async () => {
    const store = memoryStore();
    const afterToolCall = (call: { id: string }) => {
      if (call.id === 'round1_0') throw new Error('audit log is down');
    };
    const live = await loopOf('notify', { afterToolCall })
      .loop.invoke('Pay.', { runId: 'h', store })
      .catch((e) => e);
    expect(ChainError.isInstance(live)).toBe(true);

    const again = loopOf('notify', { afterToolCall });
    const resumed = await again.loop.resume('h', { store }).catch((e) => e);

    expect(ChainError.isInstance(resumed)).toBe(true);
    expectLoopTruth(live, resumed, [charged, { toolName: 'notify', success: true }]);
    expect(again.done).toEqual([]);

    // Crashed right after the record: not run again, and the round fails as it did.
    const { entries } = await journal(store, 'h');
    const cut = entries.findIndex((e) => isResultOf(e, 'round1_0')) + 1;
    const third = loopOf('notify', { afterToolCall });
    const crashed = await third.loop
      .resume('h', { store: await storeWithPrefix('h', entries, cut) })
      .catch((e) => e);
    expect(ChainError.isInstance(crashed)).toBe(true);
    expect((crashed as Error).message).toBe((live as Error).message);
    expect(third.done).not.toContain('charged 500');
    expect(partialOf<ToolLoopPartialResult>(crashed).toolLogs).toMatchObject([
      charged,
      { toolName: 'notify', success: true },
    ]);
  });

  it("a decision's deadline under onApprovalTimeout 'fail': a resume keeps the record", async () => {
    const store = memoryStore();
    const options = { approvalTimeoutMs: 50, onApprovalTimeout: 'fail' };
    const approve = () => undefined;
    const live = await loopOf('refund', options)
      .loop.invoke('Pay.', { runId: 'd', store, approve })
      .catch((e) => e);
    expect(TimeoutError.isInstance(live)).toBe(true);

    const resumed = await loopOf('refund', options)
      .loop.resume('d', { store, approve })
      .catch((e) => e);

    expect(TimeoutError.isInstance(resumed)).toBe(true);
    expectLoopTruth(live, resumed, [charged]);
  });

  it('a crash in the middle of the round: the finished record is kept, its command not run again', async () => {
    const store = memoryStore();
    await loopOf('wait', { timeout: 1_000 })
      .loop.invoke('Pay.', { runId: 'm', store })
      .catch(() => {});
    const { entries } = await journal(store, 'm');
    const crashed = await storeWithPrefix(
      'm',
      entries,
      entries.findIndex((e) => isResultOf(e, 'round1_0')) + 1,
    );

    const again = loopOf('wait', { timeout: 1_000 });
    const resumed = await again.loop.resume('m', { store: crashed }).catch((e) => e);

    expect(TimeoutError.isInstance(resumed)).toBe(true);
    expect(again.done).toEqual([]);
    expect(partialOf<ToolLoopPartialResult>(resumed).toolLogs).toMatchObject([charged]);
  }, 30_000);
});
