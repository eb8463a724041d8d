// SPEC H2, issue 13 (defect 11): what a decision may be, wherever it comes from. A decision of
// the wrong shape is an InputError at every entry point (approvals(store), a run's `approve`
// callback, an app machine's APPROVE / REJECT); an inbox line counts only for the request it
// names, dated between that request and now; a rejection's reason is cut to a length before
// anything stores or sends it, and the model reads where it was cut.
import {
  ApprovalPendingError,
  approvals,
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  InputError,
  memoryStore,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { createActor, enqueueActions, type SnapshotFrom, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { decisionOf } from '../../src/approvals/approval.js';
import type { JournalEntry } from '../../src/durable/journal-entry.js';
import { thrownBy } from '../support/errors.js';

function dropTable(ran: string[]) {
  return defineTool({
    name: 'drop_table',
    description: 'Drops a table.',
    input: z.object({ table: z.string() }),
    needsApproval: true,
    execute: ({ table }) => {
      ran.push(`drop ${table}`);
      return `dropped ${table}`;
    },
  });
}

/**
 * A chain that asks to drop `tmp` (call c1), then answers with what its tool call got;
 * `thinking` runs while the model makes its first answer, before the call exists.
 */
function cleanup(
  ran: string[],
  options: { maxApprovalReasonLength?: number } = {},
  thinking?: () => void,
) {
  const model = new ScriptedModel(({ messages }) => {
    const tool = messages.toArray().find((m) => m.role === 'tool');
    if (tool?.role === 'tool') return { text: `Done: ${tool.output ?? tool.error}` };
    thinking?.();
    return { toolCalls: [{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }] };
  });
  return { chain: createChain({ model, tools: [dropTable(ran)], ...options }), model };
}

/** A run of `cleanup` parked on call c1 in `store` as run 'r'. */
async function parked(
  store = memoryStore(),
  ran: string[] = [],
  options: { maxApprovalReasonLength?: number } = {},
) {
  const { chain } = cleanup(ran, options);
  const error = await chain
    .invoke('Drop tmp.', { runId: 'r', store, parkForApproval: true })
    .catch((e: unknown) => e);
  expect(ApprovalPendingError.isInstance(error)).toBe(true);
  return { store, chain, ran };
}

async function inputErrorOf(promise: Promise<unknown>): Promise<InputError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!InputError.isInstance(error)) throw new Error(`expected an InputError, got ${error}`);
  return error;
}

const BIG = 20_000_000; // characters: the reason of the issue, 20 MB

describe('a decision of the wrong shape is an InputError', () => {
  it('approvals(store): approve, reject and decide name every problem, and post nothing', async () => {
    const { store } = await parked();
    const decisions = approvals(store);
    const errors = [
      await inputErrorOf(decisions.approve(5 as never, 'c1')),
      await inputErrorOf(decisions.approve('r', '')),
      await inputErrorOf(decisions.reject('r', 'c1', 42 as never)),
      await inputErrorOf(decisions.decide('r', null as never)),
      await inputErrorOf(decisions.decide('r', { callId: 7, aproved: true } as never)),
      await inputErrorOf(decisions.decide('r', { callId: 'c1', approved: true, reason: 'ok' })),
      await inputErrorOf(decisions.list(3 as never)),
    ];
    expect(errors.map((e) => e.message)).toEqual([
      'approvals(store).approve(runId, callId): `runId` must be a non-empty string; got a number',
      'approvals(store).approve(runId, callId): `callId` must be a non-empty string; got an empty string',
      'approvals(store).reject(runId, callId, reason?): `reason` must be a string; got a number',
      'approvals(store).decide(runId, { callId, approved, reason? }): must be an object { callId, approved, reason }; got null',
      'approvals(store).decide(runId, { callId, approved, reason? }): `aproved` is not one of its fields; did you mean `approved`?; `callId` must be a string; got a number; `approved` is missing (a boolean)',
      'approvals(store).decide(runId, { callId, approved, reason? }): `reason` is for a rejection only (approved: false): the model reads it then',
      'approvals(store).list(runId?): `runId` must be a non-empty string; got a number',
    ]);
    expect(await store.posted?.('r')).toEqual([]);
    expect(await decisions.list('r')).toHaveLength(1);
  });

  it('approvals(store, options) checks its options like any factory', () => {
    const error = thrownBy(ConfigError, () =>
      approvals(memoryStore(), { maxReasonLenght: 10 } as never),
    );
    expect(error.message).toBe(
      'Invalid option `maxReasonLenght`: is not an option of approvals; did you mean `maxReasonLength`?',
    );
    expect(
      thrownBy(ConfigError, () => approvals(memoryStore(), { maxReasonLength: 0 })).option,
    ).toBe('maxReasonLength');
    expect(thrownBy(ConfigError, () => approvals({} as never)).option).toBe('store');
  });

  it("an approve callback's unreadable answer is an InputError, and the call is rejected with it", async () => {
    expect(() => decisionOf('c1', { approved: 'yes' } as never)).toThrow(InputError);
    expect(() => decisionOf('c1', { approved: false, reason: 42 } as never)).toThrow(
      /`reason` must be a string; got a number/,
    );
    expect(() => decisionOf('c1', 'yes' as never)).toThrow(/got a string$/);
    const ran: string[] = [];
    const { chain } = cleanup(ran);
    const result = await chain.invoke('Drop tmp.', {
      approve: () => ({ approved: true, resaon: 'fine' }) as never,
    });
    expect(ran).toEqual([]);
    expect(result.text).toBe(
      'Done: Not approved: the approve callback failed: approve: answer true, false, { approved, reason? } or undefined; got an object: `resaon` is not one of its fields; did you mean `reason`?',
    );
    expect(result.details().toolCalls[0]?.approval?.approved).toBe(false);
  });

  it("an app machine's APPROVE or REJECT of the wrong shape fails the chain with an InputError", async () => {
    for (const event of [
      { type: 'REJECT', callId: 'c1', reason: 42 },
      { type: 'APPROVE', callID: 'c1' },
    ]) {
      const ran: string[] = [];
      const { chain } = cleanup(ran);
      const app = appDeciding(chain, () => event);
      const actor = createActor(app).start();
      const error = await toPromise(actor).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(InputError.isInstance(error), String(error)).toBe(true);
      expect(ran).toEqual([]);
    }
    const reasonError = await runApp({ type: 'REJECT', callId: 'c1', reason: 42 });
    expect(reasonError.message).toBe('The REJECT event: `reason` must be a string; got a number');
    const keyError = await runApp({ type: 'APPROVE', callID: 'c1' });
    expect(keyError.message).toContain('`callID` is not one of its fields; did you mean `callId`?');
  });

  it('the tool loop refuses the same events', async () => {
    const ran: string[] = [];
    const loop = createToolLoop({
      planner: ({ roundIndex }) =>
        roundIndex === 0
          ? {
              nextAction: 'execute',
              executionCommands: [{ toolName: 'drop_table', toolKwargs: { table: 'tmp' } }],
            }
          : { nextAction: 'response' },
      tools: [dropTable(ran)],
      respond: false,
    });
    type LoopSnapshot = SnapshotFrom<typeof loop.machine>;
    let sent = false;
    const app = setup({ actors: { agent: loop.machine } }).createMachine({
      initial: 'working',
      states: {
        working: {
          invoke: {
            id: 'agent',
            src: 'agent',
            input: loop.input('Clean up'),
            onSnapshot: {
              guard: ({ event }) =>
                !sent && (event.snapshot as LoopSnapshot).context.approvals.awaiting.length > 0,
              actions: enqueueActions(({ enqueue }) => {
                sent = true; // once: an event the loop ignores is not sent again
                enqueue.sendTo('agent', { type: 'REJECT', callId: 0 } as never);
              }),
            },
            onDone: 'done',
          },
        },
        done: { type: 'final' },
      },
    });
    const error = await toPromise(createActor(app).start()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(InputError.isInstance(error)).toBe(true);
    expect((error as Error).message).toBe(
      'The REJECT event: `callId` must be a string; got a number',
    );
    expect(ran).toEqual([]);
  });
});

describe('an inbox line decides only the request it names, dated between it and now', () => {
  it('a line posted before the call was asked, dated in the future, does not approve it', async () => {
    const store = memoryStore();
    const ran: string[] = [];
    const ahead = Date.now() + 86_400_000;
    // Written to the run's inbox while the model thinks: call c1 is not asked yet.
    const { chain } = cleanup(ran, {}, () => {
      void store.post?.('r', line({ approved: true, at: ahead }));
      void store.post?.('r', line({ approved: true, at: ahead, requestedAt: ahead }));
    });
    const error = await chain
      .invoke('Drop tmp.', { runId: 'r', store, parkForApproval: true })
      .catch((e: unknown) => e);
    expect(ApprovalPendingError.isInstance(error)).toBe(true);
    expect(ran).toEqual([]);
    expect(await store.posted?.('r')).toHaveLength(2);
    expect((await approvals(store).list('r')).map((call) => call.callId)).toEqual(['c1']);
  });

  it('a line that names the request but is dated in the future does not decide it; a real decision then does', async () => {
    const { store, chain, ran } = await parked();
    const [waiting] = await approvals(store).list('r');
    const requestedAt = waiting?.requestedAt ?? 0;
    await store.post?.('r', line({ approved: true, at: Date.now() + 86_400_000, requestedAt }));
    const again = await chain
      .resume('r', { store, parkForApproval: true })
      .catch((e: unknown) => e);
    expect(ApprovalPendingError.isInstance(again)).toBe(true);
    expect(ran).toEqual([]);
    // Not counted as decided: a person can still decide it, and that decision counts.
    expect(await approvals(store).reject('r', 'c1', 'not today')).toBe(true);
    const result = await chain.resume('r', { store, parkForApproval: true });
    expect(result.text).toBe('Done: Not approved: not today');
  });

  it("a decider whose clock runs behind the run's dates its decision at the request, and it counts", async () => {
    const { store, chain, ran } = await parked();
    const realNow = Date.now;
    Date.now = () => realNow() - 3_600_000; // the decider's clock: an hour behind
    try {
      expect(await approvals(store).approve('r', 'c1')).toBe(true);
    } finally {
      Date.now = realNow;
    }
    await chain.resume('r', { store, parkForApproval: true });
    expect(ran).toEqual(['drop tmp']);
  });
});

describe("a rejection's reason is cut before it is stored or sent", () => {
  it('approvals(store).reject: 20 MB of reason is posted, journaled and sent as 1,000 characters', async () => {
    const { store, chain } = await parked();
    expect(await approvals(store).reject('r', 'c1', 'x'.repeat(BIG))).toBe(true);
    const cut = `${'x'.repeat(1_000)}… [reason cut at 1000 characters]`;
    const [message] = (await store.posted?.('r')) ?? [];
    expectText(message?.reason, cut);
    const result = await chain.resume('r', { store, parkForApproval: true });
    expectText(result.text, `Done: Not approved: ${cut}`);
    const journaled = ((await store.read('r')) ?? []).filter((e) => e.type === 'decision');
    expect(journaled).toHaveLength(1);
    expectText(journaled[0]?.reason, cut);
    expectText(result.details().toolCalls[0]?.approval?.reason, cut);
    expect(JSON.stringify(await store.read('r')).length).toBeLessThan(100_000);
  });

  it("approvals(store, { maxReasonLength }) and the run's maxApprovalReasonLength: the shorter wins", async () => {
    const { store, chain } = await parked(memoryStore(), [], { maxApprovalReasonLength: 10 });
    await approvals(store, { maxReasonLength: 20 }).reject('r', 'c1', 'no'.repeat(50));
    const [posted] = (await store.posted?.('r')) ?? [];
    expect(posted?.reason).toBe(`${'no'.repeat(10)}… [reason cut at 20 characters]`);
    const result = await chain.resume('r', { store, parkForApproval: true });
    expect(result.text).toBe(
      `Done: Not approved: ${'no'.repeat(5)}… [reason cut at 10 characters]`,
    );
  });

  it("the approve callback's reason is cut to maxApprovalReasonLength; the model reads where", async () => {
    const ran: string[] = [];
    const { chain, model } = cleanup(ran, { maxApprovalReasonLength: 12 });
    const store = memoryStore();
    const result = await chain.invoke('Drop tmp.', {
      runId: 'cb',
      store,
      approve: () => ({ approved: false, reason: 'because '.repeat(BIG / 8) }),
    });
    const cut = 'because beca… [reason cut at 12 characters]';
    expectText(result.text, `Done: Not approved: ${cut}`);
    const sent = model.requests[1]?.messages.toArray().find((m) => m.role === 'tool');
    expectText(sent?.role === 'tool' && sent.error, `Not approved: ${cut}`);
    const journaled = ((await store.read('cb')) ?? []).filter((e) => e.type === 'decision');
    expect(journaled).toHaveLength(1);
    expectText(journaled[0]?.reason, cut);
  });

  it("a tool loop cuts a rejected command's reason to its maxApprovalReasonLength", async () => {
    const ran: string[] = [];
    const loop = createToolLoop({
      planner: ({ roundIndex }) =>
        roundIndex === 0
          ? {
              nextAction: 'execute',
              executionCommands: [{ toolName: 'drop_table', toolKwargs: { table: 'tmp' } }],
            }
          : { nextAction: 'response' },
      tools: [dropTable(ran)],
      respond: false,
      maxApprovalReasonLength: 5,
    });
    const result = await loop.invoke('Clean up', {
      approve: () => ({ approved: false, reason: 'never '.repeat(BIG / 6) }),
    });
    expect(ran).toEqual([]);
    expectText(result.toolLogs[0]?.error, 'Not approved: never… [reason cut at 5 characters]');
  });

  it("an app machine's REJECT: its reason is cut before the chain keeps it", async () => {
    const ran: string[] = [];
    const { chain } = cleanup(ran);
    let kept: unknown;
    const app = appDeciding(
      chain,
      () => ({ type: 'REJECT', callId: 'c1', reason: 'y'.repeat(BIG) }),
      (snapshot) => {
        kept = snapshot.context.approvals.decided[0]?.reason;
      },
    );
    const actor = createActor(app).start();
    await toPromise(actor);
    const cut = `${'y'.repeat(1_000)}… [reason cut at 1000 characters]`;
    expectText(kept, cut);
    expect(ran).toEqual([]);
  });
});

/** `actual` is the text `expected`; a failure shows lengths, never megabytes of diff. */
function expectText(actual: unknown, expected: string): void {
  expect(typeof actual === 'string' ? actual.length : actual).toBe(expected.length);
  expect(actual === expected, 'same length, other text').toBe(true);
}

/** An inbox decision line on call c1 of run 'r', as a store holds it. */
function line(fields: { approved: boolean; at: number; requestedAt?: number }): JournalEntry {
  return { type: 'decision', callId: 'c1', ...fields };
}

type Cleanup = ReturnType<typeof cleanup>['chain'];

/**
 * An app machine that invokes `chain.machine` and answers each waiting call with `decide()`'s
 * event; `seen` is told of every snapshot of the chain after its first decision.
 */
function appDeciding(
  chain: Cleanup,
  decide: () => Readonly<Record<string, unknown>>,
  seen?: (snapshot: SnapshotFrom<Cleanup['machine']>) => void,
) {
  type AgentSnapshot = SnapshotFrom<Cleanup['machine']>;
  const sent = new Set<string>(); // once per call: an event the chain ignores is not sent again
  return setup({ actors: { agent: chain.machine } }).createMachine({
    initial: 'working',
    states: {
      working: {
        invoke: {
          id: 'agent',
          src: 'agent',
          input: chain.input('Drop tmp.'),
          onSnapshot: {
            actions: enqueueActions(({ event, enqueue }) => {
              const snapshot = event.snapshot as AgentSnapshot;
              if (snapshot.context.approvals.decided.length > 0) seen?.(snapshot);
              for (const { callId } of snapshot.context.approvals.awaiting) {
                if (sent.has(callId)) continue;
                sent.add(callId);
                enqueue.sendTo('agent', decide() as never);
              }
            }),
          },
          onDone: 'done',
        },
      },
      done: { type: 'final' },
    },
  });
}

/** The InputError an app that sends `event` ends with. */
async function runApp(event: Readonly<Record<string, unknown>>): Promise<InputError> {
  const { chain } = cleanup([]);
  const actor = createActor(appDeciding(chain, () => event)).start();
  const error = await toPromise(actor).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!InputError.isInstance(error)) throw new Error(`expected an InputError, got ${error}`);
  return error;
}
