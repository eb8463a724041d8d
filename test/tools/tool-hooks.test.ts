// SPEC H1 (issue 16, part 1): beforeToolCall / afterToolCall around every tool call of a
// chain or tool loop — cancel a call, replace its arguments, see its result; a hook that
// throws fails the run with the partial result kept.
import {
  ChainError,
  type ChainPartialResult,
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  memoryStore,
  type ToolCall,
  ToolHookError,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

function tools(ran: string[]) {
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an amount.',
    input: z.object({ cents: z.number().int().positive() }),
    execute: ({ cents }) => {
      ran.push(`pay ${cents}`);
      return `paid ${cents}`;
    },
  });
  const slow = defineTool({
    name: 'slow',
    description: 'Takes a while.',
    input: z.object({}),
    execute: async () => {
      await new Promise((resolve) => setTimeout(resolve, 30));
      ran.push('slow');
      return 'slow done';
    },
  });
  return [pay, slow];
}

const payThenAnswer = (calls: { id: string; name: string; arguments: object }[]) =>
  new ScriptedModel([{ toolCalls: calls }, { text: 'done' }]);

function toolMessages(transcript: readonly { role: string }[]) {
  return transcript.filter((m) => m.role === 'tool') as unknown as {
    toolCallId: string;
    output: unknown;
    error?: string;
  }[];
}

describe('beforeToolCall / afterToolCall on a chain', () => {
  it('cancels a call: the model reads why, the tool never runs, afterToolCall is not called', async () => {
    const ran: string[] = [];
    const after: string[] = [];
    const chain = createChain({
      model: payThenAnswer([{ id: 'c1', name: 'pay', arguments: { cents: 500 } }]),
      tools: tools(ran),
      beforeToolCall: (call) =>
        (call.arguments as { cents: number }).cents > 100
          ? { cancel: 'over the limit' }
          : undefined,
      afterToolCall: (call) => {
        after.push(call.id);
      },
    });
    const result = await chain.invoke('pay 5 dollars');
    expect(ran).toEqual([]);
    expect(after).toEqual([]);
    expect(toolMessages(result.transcript)[0]?.error).toBe('Cancelled: over the limit');
    expect(result.details().toolCalls[0]?.hook).toEqual({ cancelled: 'over the limit' });
  });

  it('replaces arguments, which the tool schema checks again; afterToolCall sees the result', async () => {
    const ran: string[] = [];
    const seen: [string, unknown, unknown][] = [];
    const chain = createChain({
      model: payThenAnswer([
        { id: 'c1', name: 'pay', arguments: { cents: 900 } },
        { id: 'c2', name: 'pay', arguments: { cents: 5 } },
      ]),
      tools: tools(ran),
      beforeToolCall: (call) =>
        call.id === 'c1' ? { arguments: { cents: 100 } } : { arguments: { cents: -1 } },
      afterToolCall: (call, tool, result) => {
        seen.push([call.id, tool?.name, result.success ? result.output : result.error]);
      },
    });
    const result = await chain.invoke('pay');
    expect(ran).toEqual(['pay 100']);
    const byId = new Map(seen.map(([id, ...rest]) => [id, rest]));
    expect(byId.get('c1')).toEqual(['pay', 'paid 100']);
    expect(String(byId.get('c2')?.[1])).toMatch(/Invalid arguments for tool 'pay'/);
    const details = [...result.details().toolCalls].sort((a, b) =>
      a.call.id.localeCompare(b.call.id),
    );
    expect(details.map((c) => c.hook)).toEqual([
      { replacedArguments: { cents: 100 } },
      { replacedArguments: { cents: -1 } },
    ]);
  });

  it('is called for an unknown tool too (tool undefined), and async hooks are awaited', async () => {
    const calls: [string, string | undefined][] = [];
    const chain = createChain({
      model: payThenAnswer([{ id: 'c1', name: 'refund', arguments: {} }]),
      tools: tools([]),
      beforeToolCall: async (call, tool) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        calls.push([call.name, tool?.name]);
      },
    });
    const result = await chain.invoke('refund');
    expect(calls).toEqual([['refund', undefined]]);
    expect(toolMessages(result.transcript)[0]?.error).toMatch(/Unknown tool 'refund'/);
  });

  it("runs the chain's hooks first, then the run's: a cancel stops there, arguments carry on", async () => {
    const order: string[] = [];
    const ran: string[] = [];
    const model = payThenAnswer([
      { id: 'c1', name: 'pay', arguments: { cents: 1 } },
      { id: 'c2', name: 'pay', arguments: { cents: 2 } },
    ]);
    const withModel = createChain({
      model,
      tools: tools(ran),
      beforeToolCall: (call) => {
        order.push(`chain before ${call.id}`);
        return call.id === 'c2' ? { cancel: 'chain says no' } : { arguments: { cents: 7 } };
      },
      afterToolCall: (call) => {
        order.push(`chain after ${call.id}`);
      },
    });
    await withModel.invoke('pay', {
      beforeToolCall: (call: ToolCall) => {
        order.push(`run before ${call.id} ${JSON.stringify(call.arguments)}`);
      },
      afterToolCall: (call: ToolCall) => {
        order.push(`run after ${call.id}`);
      },
    });
    expect(order.filter((line) => line.includes('c1'))).toEqual([
      'chain before c1',
      'run before c1 {"cents":7}',
      'chain after c1',
      'run after c1',
    ]);
    expect(order.filter((line) => line.includes('c2'))).toEqual(['chain before c2']);
    expect(ran).toEqual(['pay 7']);
  });

  it('a hook that throws fails the run with its partial, after the step’s other calls settle', async () => {
    const ran: string[] = [];
    const chain = createChain({
      model: payThenAnswer([
        { id: 'c1', name: 'slow', arguments: {} },
        { id: 'c2', name: 'pay', arguments: { cents: 3 } },
      ]),
      tools: tools(ran),
      afterToolCall: (call) => {
        if (call.id === 'c2') throw new Error('audit log is down');
      },
    });
    const error = await chain.invoke('go').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainError);
    expect((error as Error).message).toMatch(
      /afterToolCall failed for tool call c2 \('pay'\): audit log is down/,
    );
    const cause = (error as ChainError).cause;
    expect(cause).toBeInstanceOf(ToolHookError);
    expect((cause as ToolHookError).hook).toBe('afterToolCall');
    expect(ran.sort()).toEqual(['pay 3', 'slow']);
    const partial = (error as ChainError).partial as ChainPartialResult;
    expect(partial.details().toolCalls).toHaveLength(2);
  });

  it('refuses hooks that are not functions, naming each', () => {
    let error: unknown;
    try {
      createChain({
        model: new ScriptedModel([]),
        beforeToolCall: 'no' as never,
        afterToolCall: 1 as never,
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems?.map((p) => p.option)).toEqual([
      'beforeToolCall',
      'afterToolCall',
    ]);
  });

  it('in a durable run: a cancelled call is journaled, and a resume does not ask again', async () => {
    const asked: string[] = [];
    const make = () =>
      createChain({
        model: new ScriptedModel((request) =>
          request.messages.toArray().some((m) => m.role === 'tool')
            ? { text: 'done' }
            : { toolCalls: [{ id: 'c1', name: 'pay', arguments: { cents: 500 } }] },
        ),
        tools: tools([]),
        beforeToolCall: (call) => {
          asked.push(call.id);
          return { cancel: 'needs a person' };
        },
      });
    const store = memoryStore();
    await make().invoke('pay', { runId: 'h', store });
    const resumed = await make().resume('h', { store });
    expect(asked).toEqual(['c1']);
    expect(toolMessages(resumed.transcript)[0]?.error).toBe('Cancelled: needs a person');
  });
});

describe('beforeToolCall / afterToolCall on a tool loop', () => {
  const planner = (commands: { toolName: string; toolKwargs: object }[]) => {
    let round = 0;
    return () =>
      round++ === 0
        ? {
            nextAction: 'execute',
            executionCommands: commands.map((c) => ({ ...c, purpose: c.toolName })),
          }
        : { nextAction: 'response' };
  };

  it("cancels and rewrites commands, the loop's hooks before the run's", async () => {
    const ran: string[] = [];
    const order: string[] = [];
    const loop = createToolLoop({
      planner: planner([
        { toolName: 'pay', toolKwargs: { cents: 1 } },
        { toolName: 'pay', toolKwargs: { cents: 2 } },
      ]),
      tools: tools(ran),
      respond: false,
      beforeToolCall: (call) => {
        order.push(`loop ${call.id}`);
        return call.id === 'round1_1' ? { cancel: 'not today' } : undefined;
      },
    });
    const result = await loop.invoke('pay', {
      beforeToolCall: (call) => {
        order.push(`run ${call.id}`);
        return { arguments: { cents: 40 } };
      },
    });
    expect(ran).toEqual(['pay 40']);
    expect(order.sort()).toEqual(['loop round1_0', 'loop round1_1', 'run round1_0']);
    expect(result.toolLogs.map((r) => r.success)).toEqual([true, false]);
    expect(result.toolLogs[1]?.error).toBe('Cancelled: not today');
    expect(result.details().toolCalls.find((c) => c.call.id === 'round1_1')?.hook).toEqual({
      cancelled: 'not today',
    });
  });

  it('a command whose afterToolCall threw ran: the failed loop keeps its record', async () => {
    const ran: string[] = [];
    const loop = createToolLoop({
      planner: planner([{ toolName: 'pay', toolKwargs: { cents: 9 } }]),
      tools: tools(ran),
      respond: false,
      afterToolCall: () => {
        throw new Error('ledger closed');
      },
    });
    const error = (await loop.invoke('pay').catch((e: unknown) => e)) as ChainError;
    expect(ran).toEqual(['pay 9']);
    const partial = error.partial as unknown as { toolLogs: { success: boolean }[] };
    expect(partial.toolLogs.map((r) => r.success)).toEqual([true]);
  });

  it('a hook that throws fails the loop with a ToolHookError cause', async () => {
    const loop = createToolLoop({
      planner: planner([{ toolName: 'pay', toolKwargs: { cents: 1 } }]),
      tools: tools([]),
      respond: false,
      beforeToolCall: () => {
        throw new Error('policy service unreachable');
      },
    });
    const error = await loop.invoke('pay').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChainError);
    expect((error as ChainError).cause).toBeInstanceOf(ToolHookError);
    expect((error as Error).message).toMatch(/policy service unreachable/);
  });
});
