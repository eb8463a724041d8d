// SPEC H2 (issue 16, part 2): a tool that needs approval parks its call in the chain
// machine's `awaitingApproval` state until a decision comes: from the run's `approve`
// callback, from approvals(store) in any process, from an app machine's event, or from its
// deadline. Approved calls run; rejected ones answer the model with the reason; the step's
// other calls are not held up.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ApprovalPendingError,
  approvals,
  type ChainStreamEvent,
  ConfigError,
  createChain,
  defineTool,
  fileStore,
  memoryStore,
  TimeoutError,
} from 'statecraft';
import { otelObserver } from 'statecraft/otel';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { assign, createActor, enqueueActions, type SnapshotFrom, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { postedDecision } from '../../src/durable/approvals.js';
import { ms, tracing } from '../otel/tracing.js';

function tools(ran: string[]) {
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

const script = (calls: { id: string; name: string; arguments: object }[]) =>
  new ScriptedModel([{ toolCalls: calls }, { text: 'done' }]);

function toolMessages(transcript: readonly { role: string }[]) {
  return transcript.filter((m) => m.role === 'tool') as unknown as {
    toolCallId: string;
    output: unknown;
    success: boolean;
    error?: string;
  }[];
}

describe('approvals with the approve callback', () => {
  it('runs an approved call, answers a rejected one with the reason, runs the rest meanwhile', async () => {
    const ran: string[] = [];
    const asked: string[] = [];
    const chain = createChain({
      model: script([
        { id: 'c1', name: 'drop_table', arguments: { table: 'users' } },
        { id: 'c2', name: 'drop_table', arguments: { table: 'logs' } },
        { id: 'c3', name: 'read_table', arguments: { table: 'users' } },
      ]),
      tools: tools(ran),
    });
    const events: ChainStreamEvent[] = [];
    for await (const event of chain.stream('Clean up', {
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
    expect(asked).toEqual(['c1:drop_table', 'c2:drop_table']);
    // The read ran while the drops waited.
    expect(ran).toEqual(['read users', 'drop logs']);
    const final = events.at(-1);
    if (final?.type !== 'final' || !final.result) throw new Error('no result');
    const results = toolMessages(final.result.transcript);
    expect(results.map((r) => [r.toolCallId, r.success, r.error ?? r.output])).toEqual([
      ['c1', false, 'Not approved: users is production'],
      ['c2', true, 'dropped logs'],
      ['c3', true, 'rows of users'],
    ]);
    const states = events.filter((e) => e.type === 'state').map((e) => e.state);
    expect(states).toContain('awaitingApproval');
    const approvalEvents = events
      .filter((e) => e.type === 'approval-requested' || e.type === 'approval-decided')
      .map((e) =>
        e.type === 'approval-requested'
          ? `asked ${e.request.callId}`
          : `decided ${e.decision.callId} ${e.decision.approved}`,
      );
    expect(approvalEvents).toEqual(['asked c1', 'asked c2', 'decided c1 false', 'decided c2 true']);
    const details = final.details.toolCalls.map((d) => [d.call.id, d.approval?.approved]);
    expect(details).toEqual(
      expect.arrayContaining([
        ['c1', false],
        ['c2', true],
        ['c3', undefined],
      ]),
    );
  });
});

describe('approvals of durable runs (approvals(store))', () => {
  it('parks, lists the pending call, takes a decision from elsewhere and resumes without repeating a call', async () => {
    const ran: string[] = [];
    const store = memoryStore();
    const model = script([
      { id: 'c1', name: 'drop_table', arguments: { table: 'logs' } },
      { id: 'c2', name: 'read_table', arguments: { table: 'logs' } },
    ]);
    const chain = createChain({ model, tools: tools(ran) });
    const parked = await chain
      .invoke('Clean up', { runId: 'r1', store, parkForApproval: true })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(ApprovalPendingError.isInstance(parked)).toBe(true);
    expect((parked as ApprovalPendingError).approvals).toEqual([
      { callId: 'c1', tool: 'drop_table', arguments: { table: 'logs' } },
    ]);
    expect(ran).toEqual(['read logs']);
    const pending = await approvals(store).list();
    expect(pending).toEqual([
      expect.objectContaining({
        runId: 'r1',
        kind: 'chain',
        callId: 'c1',
        tool: 'drop_table',
        arguments: { table: 'logs' },
      }),
    ]);
    expect(await approvals(store).approve('r1', 'c1')).toBe(true);
    // A second decision on the same call counts for nothing.
    expect(await approvals(store).reject('r1', 'c1', 'too late')).toBe(false);
    expect(await approvals(store).list()).toEqual([]);
    const result = await chain.resume('r1', { store });
    expect(result.text).toBe('done');
    expect(ran).toEqual(['read logs', 'drop logs']);
    expect(model.requests).toHaveLength(2);
    const results = toolMessages(result.transcript);
    expect(results.map((r) => r.output)).toEqual(['dropped logs', 'rows of logs']);
    await expect(approvals(store).approve('r1', 'c1')).resolves.toBe(false);
    await expect(approvals(store).approve('r1', 'c9')).rejects.toThrow(
      /never asked for approval of call 'c9'/,
    );
    await expect(approvals(store).approve('nope', 'c1')).rejects.toThrow(/No run 'nope'/);
  });

  it('a waiting run takes a decision posted in the same process at once', async () => {
    const ran: string[] = [];
    const store = memoryStore();
    const chain = createChain({
      model: script([{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }]),
      tools: tools(ran),
    });
    const events: string[] = [];
    const run = (async () => {
      for await (const event of chain.stream('Clean up', { runId: 'r2', store })) {
        events.push(event.type);
        if (event.type === 'approval-requested') {
          await approvals(store).reject('r2', event.request.callId, 'keep it');
        }
        if (event.type === 'final') return event.result;
      }
    })();
    const result = await run;
    expect(ran).toEqual([]);
    expect(toolMessages(result?.transcript ?? [])[0]?.error).toBe('Not approved: keep it');
  });
});

describe('approval deadlines', () => {
  it("rejects a call no one decides in time: the model reads 'no decision in time'", async () => {
    const ran: string[] = [];
    const chain = createChain({
      model: script([{ id: 'c1', name: 'pay', arguments: { cents: 500 } }]),
      tools: tools(ran),
      approvalTimeoutMs: 30,
    });
    const result = await chain.invoke('Pay', { approve: () => undefined });
    expect(ran).toEqual([]);
    expect(toolMessages(result.transcript)[0]?.error).toBe('Not approved: no decision in time');
    expect(result.details().toolCalls[0]?.approval).toMatchObject({
      approved: false,
      timedOut: true,
    });
  });

  it("fails the run with onApprovalTimeout: 'fail', keeping the transcript valid", async () => {
    const ran: string[] = [];
    const chain = createChain({
      model: script([
        { id: 'c1', name: 'pay', arguments: { cents: 500 } },
        { id: 'c2', name: 'pay', arguments: { cents: 5 } },
      ]),
      tools: tools(ran),
      approvalTimeoutMs: 30,
      onApprovalTimeout: 'fail',
    });
    const error = await chain.invoke('Pay', { approve: () => undefined }).catch((e) => e);
    expect(TimeoutError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(
      /No decision on tool call c1 \('pay'\) within its approvalTimeoutMs \(30 ms\)/,
    );
    // The small payment needed no approval and ran.
    expect(ran).toEqual(['pay 5']);
    const tool = toolMessages(error.partial.transcript);
    expect(tool.map((t) => t.toolCallId).sort()).toEqual(['c1', 'c2']);
  });
});

describe('approval options', () => {
  it('refuses a run no one could decide, and bad options, naming them', async () => {
    const chain = createChain({ model: script([]), tools: tools([]) });
    await expect(chain.invoke('x')).rejects.toThrow(ConfigError);
    await expect(chain.invoke('x')).rejects.toThrow(/'drop_table', 'pay' needs approval/);
    await expect(chain.invoke('x', { approve: () => true, parkForApproval: true })).rejects.toThrow(
      /`parkForApproval`: a run parks in its journal/,
    );
    expect(() =>
      createChain({
        model: script([]),
        approvalTimeoutMs: -1,
        onApprovalTimeout: 'later' as never,
      }),
    ).toThrow(/approvalTimeoutMs[\s\S]*onApprovalTimeout/);
    expect(() =>
      defineTool({
        name: 't',
        description: 'd',
        input: z.object({}),
        execute: () => 1,
        needsApproval: 'yes' as never,
      }),
    ).toThrow(/needsApproval must be true, false or a function/);
  });
});

describe('a durable run refused for its approval options', () => {
  it('lets its journal go: the same run id can be taken up at once with options that work', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-approve-'));
    try {
      const store = fileStore(dir);
      const ran: string[] = [];
      const chain = createChain({
        model: script([{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }]),
        tools: tools(ran),
      });
      await expect(
        chain.invoke('Clean', { runId: 'r', store, approve: 'yes' as never }),
      ).rejects.toThrow(/`approve`: must be a function/);
      // Its lock is gone: another process could take the run up now.
      expect(existsSync(path.join(dir, 'r.lock'))).toBe(false);
      const result = await chain.invoke('Clean', { runId: 'r', store, approve: () => true });
      expect(result.text).toBe('done');
      expect(ran).toEqual(['drop tmp']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('approvals from an app machine', () => {
  it('an app that invokes the chain machine answers the approval with an event', async () => {
    const ran: string[] = [];
    const chain = createChain({
      model: script([
        { id: 'c1', name: 'drop_table', arguments: { table: 'users' } },
        { id: 'c2', name: 'drop_table', arguments: { table: 'tmp' } },
      ]),
      tools: tools(ran),
    });
    type AgentSnapshot = SnapshotFrom<typeof chain.machine>;
    const app = setup({
      types: { context: {} as { output: unknown } },
      actors: { agent: chain.machine },
    }).createMachine({
      context: { output: undefined },
      initial: 'working',
      states: {
        working: {
          invoke: {
            id: 'agent',
            src: 'agent',
            input: chain.input('Clean up'),
            // The app's own policy: tmp tables may go, others not.
            onSnapshot: {
              guard: ({ event }) =>
                (event.snapshot as AgentSnapshot).context.approvals.awaiting.length > 0,
              actions: enqueueActions(({ event, enqueue }) => {
                for (const request of (event.snapshot as AgentSnapshot).context.approvals
                  .awaiting) {
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
    const output = actor.getSnapshot().context.output as { status: string; transcript: unknown };
    expect(output.status).toBe('succeeded');
    expect(ran).toEqual(['drop tmp']);
    const results = toolMessages(
      (output.transcript as { toArray(): { role: string }[] }).toArray(),
    );
    expect(results.map((r) => r.error ?? r.output)).toEqual([
      'Not approved: users stays',
      'dropped tmp',
    ]);
  });
});

describe('approvals seen from outside', () => {
  it('observers hear of the wait, and OpenTelemetry records it as an await_approval span', async () => {
    const ran: string[] = [];
    const { tracer, spans } = tracing();
    const heard: string[] = [];
    const chain = createChain({
      model: script([{ id: 'c1', name: 'pay', arguments: { cents: 900 } }]),
      tools: tools(ran),
      name: 'payer',
    });
    await chain.invoke('Pay', {
      approve: async () => {
        await new Promise((resolve) => setTimeout(resolve, 15));
        return { approved: false, reason: 'over budget' };
      },
      observers: [
        otelObserver({ tracer, captureContent: true }),
        {
          onApproval: (_run, approval) =>
            heard.push(
              approval.type === 'requested'
                ? `requested ${approval.request.tool}`
                : `decided ${approval.decision.approved} after ${approval.waitedMs >= 10 ? '>=10' : '<10'} ms`,
            ),
        },
      ],
    });
    expect(heard).toEqual(['requested pay', 'decided false after >=10 ms']);
    const wait = spans().find((span) => span.name === 'await_approval pay');
    expect(wait?.attributes).toMatchObject({
      'gen_ai.tool.name': 'pay',
      'gen_ai.tool.call.id': 'c1',
      'statecraft.approval.approved': false,
      'statecraft.approval.reason': 'over budget',
    });
    const agent = spans().find((span) => span.name === 'invoke_agent payer');
    expect(wait?.parentSpanContext?.spanId).toBe(agent?.spanContext().spanId);
    expect(ms(wait?.duration ?? [0, 0])).toBeGreaterThanOrEqual(10);
  });
});

describe('a resumed wait seen from outside', () => {
  it('observers of the resuming process hear of the wait an earlier process began', async () => {
    const store = memoryStore();
    const chain = createChain({
      model: script([{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }]),
      tools: tools([]),
    });
    await expect(
      chain.invoke('Clean', { runId: 'r', store, parkForApproval: true }),
    ).rejects.toThrow(/parked/);
    const heard: string[] = [];
    const resumed = chain.resume('r', {
      store,
      observers: {
        onApproval: (_run, approval) => {
          heard.push(approval.type === 'requested' ? 'requested' : 'decided');
          if (approval.type === 'requested') void approvals(store).approve('r', 'c1');
        },
      },
    });
    expect((await resumed).text).toBe('done');
    expect(heard).toEqual(['requested', 'decided']);
  });
});

describe('decisions against deadlines and reused call ids', () => {
  it('a decision counts only for the request it names, dated between that request and now', () => {
    const request = { callId: 'c1', at: 5_000 };
    const now = 9_000;
    const decision = (at: number, approved: boolean, requestedAt?: number) => ({
      type: 'decision',
      callId: 'c1',
      approved,
      at,
      ...(requestedAt !== undefined && { requestedAt }),
    });
    const decided = (...messages: ReturnType<typeof decision>[]) =>
      postedDecision(messages, request, now)?.decision.approved;
    expect(decided(decision(6_000, true, 5_000))).toBe(true);
    // Meant for an earlier request of the same id, posted after this one began: not this one's.
    expect(decided(decision(6_000, true, 2_000))).toBeUndefined();
    // A line that names no request never decides one (it could approve a call never asked).
    expect(decided(decision(6_000, true))).toBeUndefined();
    // Dated before the call was asked, or in the future: neither decides it, nor hides the
    // decision posted after it. (approvals(store) dates a decision no earlier than its request.)
    expect(decided(decision(4_000, true, 5_000))).toBeUndefined();
    expect(decided(decision(9_001, true, 5_000))).toBeUndefined();
    expect(decided(decision(9_001, true, 5_000), decision(7_000, false, 5_000))).toBe(false);
  });

  it('a decision posted before the deadline wins over it, even when read only after it', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-deadline-'));
    try {
      const store = fileStore(dir);
      const ran: string[] = [];
      const chain = () =>
        createChain({
          model: script([{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }]),
          tools: tools(ran),
          approvalTimeoutMs: 300,
        });
      await expect(
        chain().invoke('Clean', { runId: 'r', store, parkForApproval: true }),
      ).rejects.toThrow(/parked/);
      expect(await approvals(store).approve('r', 'c1')).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 350)); // the deadline passes, unread
      const result = await chain().resume('r', { store });
      expect(ran).toEqual(['drop tmp']);
      expect(toolMessages(result.transcript)[0]?.output).toBe('dropped tmp');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a decision posted after the deadline is refused: the deadline decided', async () => {
    const store = memoryStore();
    const chain = createChain({
      model: script([{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }]),
      tools: tools([]),
      approvalTimeoutMs: 20,
    });
    await expect(
      chain.invoke('Clean', { runId: 'r', store, parkForApproval: true }),
    ).rejects.toThrow(/parked/);
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(await approvals(store).approve('r', 'c1')).toBe(false);
    const result = await chain.resume('r', { store });
    expect(toolMessages(result.transcript)[0]?.error).toBe('Not approved: no decision in time');
  });

  it('a parked run resumed to park again after its deadline fires the deadline rather than park', async () => {
    const store = memoryStore();
    const ran: string[] = [];
    const chain = createChain({
      model: script([{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }]),
      tools: tools(ran),
      approvalTimeoutMs: 20,
    });
    await expect(
      chain.invoke('Clean', { runId: 'r', store, parkForApproval: true }),
    ).rejects.toThrow(/parked/);
    await new Promise((resolve) => setTimeout(resolve, 40));
    // As a worker resumes a parked run when its deadline's timer wakes it (statecraft/restate).
    const result = await chain.resume('r', { store, parkForApproval: true });
    expect(toolMessages(result.transcript)[0]?.error).toBe('Not approved: no decision in time');
    expect(ran).toEqual([]);
  });

  it('a parked run says when its maxExecutionTime ends, and resumed after it, the limit ends the run', async () => {
    const store = memoryStore();
    const chain = createChain({
      model: script([{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }]),
      tools: tools([]),
      maxExecutionTime: 40,
    });
    const parked = (await chain
      .invoke('Clean', { runId: 'r', store, parkForApproval: true })
      .catch((error: unknown) => error)) as ApprovalPendingError;
    const started = Number((await store.read('r'))?.[0]?.startedAt);
    expect(parked.deadlineAt).toBe(started + 40);
    await new Promise((resolve) => setTimeout(resolve, 60));
    const error = await chain
      .resume('r', { store, parkForApproval: true })
      .catch((caught: unknown) => caught);
    expect(TimeoutError.isInstance(error)).toBe(true);
  });

  it('a call id the model uses again in a later step is asked about again', async () => {
    const ran: string[] = [];
    const store = memoryStore();
    const chain = createChain({
      model: new ScriptedModel([
        { toolCalls: [{ id: 'c1', name: 'drop_table', arguments: { table: 'a' } }] },
        { toolCalls: [{ id: 'c1', name: 'drop_table', arguments: { table: 'b' } }] },
        { text: 'done' },
      ]),
      tools: tools(ran),
    });
    const counted: boolean[] = [];
    for await (const event of chain.stream('Clean', { runId: 'r', store })) {
      if (event.type !== 'approval-requested') continue;
      const { table } = event.request.arguments as { table: string };
      counted.push(
        table === 'a'
          ? await approvals(store).approve('r', event.request.callId)
          : await approvals(store).reject('r', event.request.callId, 'not b'),
      );
    }
    expect(counted).toEqual([true, true]);
    expect(ran).toEqual(['drop a']);
  });

  it('an approve callback that answers something unreadable rejects the call, saying so', async () => {
    const ran: string[] = [];
    const chain = createChain({
      model: script([{ id: 'c1', name: 'drop_table', arguments: { table: 'tmp' } }]),
      tools: tools(ran),
    });
    const result = await chain.invoke('Clean', { approve: () => 'yes' as never });
    expect(ran).toEqual([]);
    expect(toolMessages(result.transcript)[0]?.error).toMatch(
      /^Not approved: the approve callback failed: approve: answer true, false/,
    );
  });
});
