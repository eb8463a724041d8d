// SPEC H2 for the tool loop: a command of a tool that needs approval parks its round in the
// loop machine's `awaitingApproval` state until a decision comes: from the run's `approve`
// callback, from approvals(store) in any process, from an app machine's event, or from its
// deadline. Approved commands run; rejected ones are failed records the planner reads with the
// reason; the round's other commands are not held up, and a waiting one holds no slot.
import {
  AbortError,
  ApprovalPendingError,
  approvals,
  ConfigError,
  createToolLoop,
  defineTool,
  memoryStore,
  type PlannerContext,
  TimeoutError,
  type ToolLoopPartialResult,
  type ToolLoopStreamEvent,
} from 'statecraft';
import { describe, expect, it } from 'vitest';
import { assign, createActor, enqueueActions, type SnapshotFrom, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { storeWithPrefix } from '../durable/helpers.js';

function tools(ran: string[], onRead?: () => void) {
  const drop = defineTool({
    name: 'drop_table',
    description: 'Drops a table.',
    input: z.object({ table: z.string() }),
    needsApproval: true,
    execute: ({ table }) => {
      ran.push(`drop ${table}`);
      return `dropped ${table}`;
    },
  });
  const read = defineTool({
    name: 'read_table',
    description: 'Reads a table.',
    input: z.object({ table: z.string() }),
    execute: async ({ table }) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      ran.push(`read ${table}`);
      onRead?.();
      return `rows of ${table}`;
    },
  });
  const pay = defineTool({
    name: 'pay',
    description: 'Pays.',
    input: z.object({ cents: z.number().int() }),
    needsApproval: ({ cents }) => cents > 100,
    execute: ({ cents }) => {
      ran.push(`pay ${cents}`);
      return `paid ${cents}`;
    },
  });
  return [drop, read, pay];
}

type Command = { readonly toolName: string; readonly toolKwargs: object };

/** Plans `commands` in the first round, then answers; remembers what each round saw. */
function planner(commands: readonly Command[], seen: PlannerContext[] = []) {
  return (context: PlannerContext) => {
    seen.push(context);
    if (context.roundIndex > 0) return { nextAction: 'response', executionCommands: [] };
    return {
      nextAction: 'execute',
      executionCommands: commands.map((c, i) => ({ purpose: `step ${i}`, ...c })),
    };
  };
}

const drop = (table: string) => ({ toolName: 'drop_table', toolKwargs: { table } });
const read = (table: string) => ({ toolName: 'read_table', toolKwargs: { table } });
const pay = (cents: number) => ({ toolName: 'pay', toolKwargs: { cents } });

function loopOf(commands: readonly Command[], ran: string[], extra: object = {}) {
  return createToolLoop({
    planner: planner(commands),
    tools: tools(ran),
    respond: () => 'done',
    ...extra,
  });
}

const outcomes = (
  logs: readonly { toolName: string; success: boolean; error: string | null; result: unknown }[],
) => logs.map((r) => [r.toolName, r.success, r.error ?? r.result]);

describe('tool-loop approvals with the approve callback', () => {
  it('runs an approved command, records a rejected one with the reason, runs the rest meanwhile', async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const seen: PlannerContext[] = [];
    const loop = createToolLoop({
      planner: planner([drop('users'), drop('logs'), read('users')], seen),
      tools: tools(ran),
      respond: () => 'done',
    });
    const events: ToolLoopStreamEvent[] = [];
    for await (const event of loop.stream('Clean up', {
      approve: async (request) => {
        asked.push(`${request.callId}:${request.tool}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
        return (request.arguments as { table: string }).table === 'logs'
          ? true
          : { approved: false, reason: 'users is production' };
      },
    })) {
      events.push(event);
    }
    expect(asked).toEqual(['round1_0:drop_table', 'round1_1:drop_table']);
    // The read ran while the drops waited.
    expect(ran).toEqual(['read users', 'drop logs']);
    const final = events.at(-1);
    if (final?.type !== 'final' || !final.result) throw new Error('no result');
    expect(outcomes(final.result.toolLogs)).toEqual([
      ['drop_table', false, 'Not approved: users is production'],
      ['drop_table', true, 'dropped logs'],
      ['read_table', true, 'rows of users'],
    ]);
    // The next planner call reads the rejection.
    expect(seen[1]?.lastRoundResult[0]?.error).toBe('Not approved: users is production');
    const states = events.filter((e) => e.type === 'state').map((e) => e.state);
    expect(states).toContain('running.awaitingApproval');
    // One round: executing is entered again after the wait, but the round is not re-sent.
    expect(states.filter((s) => s === 'running.executing').length).toBeGreaterThanOrEqual(2);
    expect(events.filter((e) => e.type === 'round-started')).toHaveLength(2);
    const approvalEvents = events
      .filter((e) => e.type === 'approval-requested' || e.type === 'approval-decided')
      .map((e) =>
        e.type === 'approval-requested'
          ? `asked ${e.request.callId}`
          : e.type === 'approval-decided'
            ? `decided ${e.decision.callId} ${e.decision.approved}`
            : '',
      );
    expect(approvalEvents).toEqual([
      'asked round1_0',
      'asked round1_1',
      'decided round1_0 false',
      'decided round1_1 true',
    ]);
    const details = final.details.toolCalls.map((d) => [d.call.id, d.approval?.approved]);
    expect(details).toEqual(
      expect.arrayContaining([
        ['round1_0', false],
        ['round1_1', true],
        ['round1_2', undefined],
      ]),
    );
    expect(final.details.toolCalls.find((d) => d.call.id === 'round1_1')?.approval).toMatchObject({
      approved: true,
      waitedMs: expect.any(Number),
    });
  });

  it('a command waiting for a decision holds no concurrency slot', async () => {
    const ran: string[] = [];
    let readDone: () => void = () => {};
    const read_ = new Promise<void>((resolve) => {
      readDone = resolve;
    });
    const loop = createToolLoop({
      planner: planner([drop('tmp'), read('tmp')]),
      tools: tools(ran, () => readDone()),
      respond: () => 'done',
      concurrency: 1,
    });
    // Approved only once the read ran: with its slot held by the waiting drop, it never would.
    const result = await loop.invoke('Clean up', {
      approve: async () => {
        await read_;
        return true;
      },
    });
    expect(ran).toEqual(['read tmp', 'drop tmp']);
    expect(outcomes(result.toolLogs)).toEqual([
      ['drop_table', true, 'dropped tmp'],
      ['read_table', true, 'rows of tmp'],
    ]);
  });

  it('asks only for the commands whose predicate says so', async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const result = await loopOf([pay(500), pay(5)], ran).invoke('Pay', {
      approve: (request) => {
        asked.push(request.callId);
        return false;
      },
    });
    expect(asked).toEqual(['round1_0']);
    expect(ran).toEqual(['pay 5']);
    expect(outcomes(result.toolLogs)).toEqual([
      ['pay', false, 'Not approved.'],
      ['pay', true, 'paid 5'],
    ]);
  });

  it('an abort while a command waits fails the run and never runs the command', async () => {
    const ran: string[] = [];
    const controller = new AbortController();
    const error = await loopOf([drop('users')], ran)
      .invoke('Clean up', {
        signal: controller.signal,
        approve: () => {
          setTimeout(() => controller.abort('changed my mind'), 10);
          return undefined;
        },
      })
      .catch((e: unknown) => e);
    expect(AbortError.isInstance(error)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ran).toEqual([]);
  });
});

describe('tool-loop approvals of durable runs (approvals(store))', () => {
  it('parks, lists the pending command, takes a decision from elsewhere and resumes without repeating one', async () => {
    const ran: string[] = [];
    const store = memoryStore();
    const seen: PlannerContext[] = [];
    const loop = createToolLoop({
      planner: planner([drop('logs'), read('logs')], seen),
      tools: tools(ran),
      respond: () => 'done',
    });
    const parked = await loop
      .invoke('Clean up', { runId: 'l1', store, parkForApproval: true })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(ApprovalPendingError.isInstance(parked)).toBe(true);
    expect((parked as ApprovalPendingError).approvals).toEqual([
      { callId: 'round1_0', tool: 'drop_table', arguments: { table: 'logs' } },
    ]);
    expect(ran).toEqual(['read logs']);
    const pending = await approvals(store).list();
    expect(pending).toEqual([
      expect.objectContaining({
        runId: 'l1',
        kind: 'tool-loop',
        callId: 'round1_0',
        tool: 'drop_table',
        arguments: { table: 'logs' },
      }),
    ]);
    expect(await approvals(store).approve('l1', 'round1_0')).toBe(true);
    expect(await approvals(store).list()).toEqual([]);
    const result = await loop.resume('l1', { store });
    expect(result.answer).toBe('done');
    expect(ran).toEqual(['read logs', 'drop logs']);
    // The first round's plan came from the journal: the planner was asked for round 2 only.
    expect(seen.map((c) => c.roundIndex)).toEqual([0, 1]);
    expect(outcomes(result.toolLogs)).toEqual([
      ['drop_table', true, 'dropped logs'],
      ['read_table', true, 'rows of logs'],
    ]);
    expect(
      result.details().toolCalls.find((d) => d.call.id === 'round1_0')?.approval,
    ).toMatchObject({
      approved: true,
    });
    await expect(approvals(store).approve('l1', 'round1_0')).resolves.toBe(false);
  });

  it('a waiting run takes a decision posted in the same process at once', async () => {
    const ran: string[] = [];
    const store = memoryStore();
    const loop = loopOf([drop('tmp')], ran);
    let result: Awaited<ReturnType<typeof loop.invoke>> | undefined;
    for await (const event of loop.stream('Clean up', { runId: 'l2', store })) {
      if (event.type === 'approval-requested') {
        await approvals(store).reject('l2', event.request.callId, 'keep it');
      }
      if (event.type === 'final') result = event.result;
    }
    expect(ran).toEqual([]);
    expect(result?.toolLogs[0]?.error).toBe('Not approved: keep it');
  });

  it('resumes after a crash at every entry: same records, no command run twice, no decision asked twice', async () => {
    const decide = (asked: string[]) => (request: { callId: string; arguments: unknown }) => {
      asked.push(request.callId);
      return (request.arguments as { table: string }).table === 'tmp'
        ? true
        : { approved: false as const, reason: 'stays' };
    };
    const commands = [drop('tmp'), read('users'), drop('users')];
    const full = memoryStore();
    const reference = await loopOf(commands, []).invoke('Clean up', {
      runId: 'r',
      store: full,
      approve: decide([]),
    });
    expect(outcomes(reference.toolLogs)).toEqual([
      ['drop_table', true, 'dropped tmp'],
      ['read_table', true, 'rows of users'],
      ['drop_table', false, 'Not approved: stays'],
    ]);
    const entries = (await full.read('r')) ?? [];
    expect(entries.filter((e) => e.type === 'approval')).toHaveLength(2);
    expect(entries.filter((e) => e.type === 'decision')).toHaveLength(2);
    for (let count = 1; count <= entries.length; count++) {
      const prefix = entries.slice(0, count);
      const where = `crash after ${count} entries`;
      const store = await storeWithPrefix('r', entries, count);
      const ran: string[] = [];
      const asked: string[] = [];
      const resumed = await loopOf(commands, ran).resume('r', { store, approve: decide(asked) });
      expect(resumed.toolLogs, where).toEqual(reference.toolLogs);
      const finished = prefix.filter((e) => e.type === 'result').map((e) => e.callId);
      const decided = prefix.filter((e) => e.type === 'decision').map((e) => e.callId);
      const requested = prefix.filter((e) => e.type === 'approval').map((e) => e.callId);
      // A decided command is not asked about again; a requested one is asked once more.
      for (const id of asked) expect(decided, `${where}: ${id} asked again`).not.toContain(id);
      expect(asked.length, where).toBeLessThanOrEqual(2);
      for (const id of requested.filter((id) => !decided.includes(id))) {
        expect(asked, `${where}: ${id} waits`).toContain(id);
      }
      if (finished.includes('round1_0')) expect(ran, where).not.toContain('drop tmp');
      if (finished.includes('round1_1')) expect(ran, where).not.toContain('read users');
      expect(ran, where).not.toContain('drop users');
      expect(((await store.read('r')) ?? []).at(-1), where).toEqual({
        type: 'end',
        status: 'succeeded',
      });
    }
  });
});

describe('tool-loop approval deadlines', () => {
  it("rejects a command no one decides in time: its record reads 'no decision in time'", async () => {
    const ran: string[] = [];
    const loop = loopOf([pay(500)], ran, { approvalTimeoutMs: 30 });
    const result = await loop.invoke('Pay', { approve: () => undefined });
    expect(ran).toEqual([]);
    expect(result.toolLogs[0]?.error).toBe('Not approved: no decision in time');
    expect(result.details().toolCalls[0]?.approval).toMatchObject({
      approved: false,
      timedOut: true,
    });
  });

  it('a parked run resumed to park again after its deadline fires the deadline rather than park', async () => {
    const store = memoryStore();
    const ran: string[] = [];
    const loop = loopOf([pay(500)], ran, { approvalTimeoutMs: 20 });
    await expect(loop.invoke('Pay', { runId: 'l', store, parkForApproval: true })).rejects.toThrow(
      /parked/,
    );
    await new Promise((resolve) => setTimeout(resolve, 40));
    const result = await loop.resume('l', { store, parkForApproval: true });
    expect(result.toolLogs[0]?.error).toBe('Not approved: no decision in time');
    expect(ran).toEqual([]);
  });

  it("fails the run with onApprovalTimeout: 'fail', keeping the round's finished records", async () => {
    const ran: string[] = [];
    const loop = loopOf([pay(500), pay(5)], ran, {
      approvalTimeoutMs: 30,
      onApprovalTimeout: 'fail',
    });
    const error = await loop.invoke('Pay', { approve: () => undefined }).catch((e: unknown) => e);
    expect(TimeoutError.isInstance(error)).toBe(true);
    const timeout = error as TimeoutError;
    expect(timeout.message).toMatch(
      /No decision on tool call round1_0 \('pay'\) within its approvalTimeoutMs \(30 ms\)/,
    );
    expect(ran).toEqual(['pay 5']);
    const partial = timeout.partial as ToolLoopPartialResult;
    expect(outcomes(partial.toolLogs)).toEqual([['pay', true, 'paid 5']]);
  });

  it('a durable run failed by a deadline resumes to the same failure, asking no one again', async () => {
    const store = memoryStore();
    const ran: string[] = [];
    const loop = loopOf([pay(500)], ran, { approvalTimeoutMs: 30, onApprovalTimeout: 'fail' });
    const first = await loop
      .invoke('Pay', { runId: 'd1', store, approve: () => undefined })
      .catch((e: unknown) => e);
    expect(TimeoutError.isInstance(first)).toBe(true);
    const asked: string[] = [];
    const again = await loop
      .resume('d1', {
        store,
        approve: (request) => {
          asked.push(request.callId);
          return true;
        },
      })
      .catch((e: unknown) => e);
    expect(TimeoutError.isInstance(again)).toBe(true);
    expect((again as Error).message).toBe((first as Error).message);
    expect(asked).toEqual([]);
    expect(ran).toEqual([]);
  });
});

describe('tool-loop approval options', () => {
  it('refuses a run no one could decide, and bad options, naming them', async () => {
    const loop = loopOf([drop('x')], []);
    await expect(loop.invoke('x')).rejects.toThrow(ConfigError);
    await expect(loop.invoke('x')).rejects.toThrow(/'drop_table', 'pay' needs approval/);
    await expect(loop.invoke('x', { approve: () => true, parkForApproval: true })).rejects.toThrow(
      /`parkForApproval`: a run parks in its journal/,
    );
    expect(() =>
      createToolLoop({
        planner: () => ({}),
        approvalTimeoutMs: -1,
        onApprovalTimeout: 'later' as never,
      }),
    ).toThrow(/approvalTimeoutMs[\s\S]*onApprovalTimeout/);
    expect(() =>
      createToolLoop({ planner: () => ({}), onApprovalTimout: 'fail' } as never),
    ).toThrow(/did you mean `onApprovalTimeout`/);
  });

  it('planOnly executes nothing, so it needs no one to decide', async () => {
    const plan = await loopOf([drop('x')], []).planOnly('x');
    expect(plan.executionCommands.map((c) => c.toolName)).toEqual(['drop_table']);
  });
});

describe('tool-loop approvals from an app machine', () => {
  it('an app that invokes the loop machine answers the approvals with events', async () => {
    const ran: string[] = [];
    const loop = loopOf([drop('users'), drop('tmp')], ran);
    type LoopSnapshot = SnapshotFrom<typeof loop.machine>;
    const app = setup({
      types: { context: {} as { output: unknown } },
      actors: { agent: loop.machine },
    }).createMachine({
      context: { output: undefined },
      initial: 'working',
      states: {
        working: {
          invoke: {
            id: 'agent',
            src: 'agent',
            input: loop.input('Clean up'),
            // The app's own policy: tmp tables may go, others not.
            onSnapshot: {
              guard: ({ event }) =>
                (event.snapshot as LoopSnapshot).context.approvals.awaiting.length > 0,
              actions: enqueueActions(({ event, enqueue }) => {
                for (const request of (event.snapshot as LoopSnapshot).context.approvals.awaiting) {
                  const table = (request.arguments as { table: string }).table;
                  enqueue.sendTo(
                    'agent',
                    table === 'tmp'
                      ? { type: 'APPROVE', callId: request.callId }
                      : { type: 'REJECT', callId: request.callId, reason: `${table} stays` },
                  );
                }
              }),
            },
            onDone: { target: 'done', actions: assign({ output: ({ event }) => event.output }) },
          },
        },
        done: { type: 'final' },
      },
    });
    const actor = createActor(app).start();
    await toPromise(actor);
    const output = actor.getSnapshot().context.output as {
      status: string;
      toolLogs: { toolName: string; success: boolean; error: string | null; result: unknown }[];
    };
    expect(output.status).toBe('done');
    expect(ran).toEqual(['drop tmp']);
    expect(outcomes(output.toolLogs)).toEqual([
      ['drop_table', false, 'Not approved: users stays'],
      ['drop_table', true, 'dropped tmp'],
    ]);
  });
});
