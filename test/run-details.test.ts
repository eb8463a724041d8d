// SPEC A5: result.details() lists every model call (compiled request, response, usage,
// latency) and every tool call with its result; formatRunDetails prints it for a terminal.
import {
  type ChainPartialResult,
  createChain,
  createToolLoop,
  defineTool,
  formatRunDetails,
  ModelError,
  ProtocolError,
  type RunDetails,
  type ToolLoopPartialResult,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decode, encode } from '../src/durable/codec.js';
import { failed, type RunOutcome, settle } from '../src/restate/run-outcome.js';
import { rejectionOf } from './chain/helpers.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => {
    await new Promise((resolve) => setTimeout(resolve, 20));
    return a + b;
  },
});

function script() {
  return new ScriptedModel([
    {
      toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }],
      usage: { inputTokens: 30, outputTokens: 10 },
    },
    { text: 'The sum is 5.', usage: { inputTokens: 50, outputTokens: 5 }, latencyMs: 15 },
  ]);
}

describe('chain: result.details()', () => {
  it('lists each model call with the request it was sent, its response, usage and latency', async () => {
    const model = script();
    const result = await createChain({ model, tools: [add] }).invoke('What is 2 + 3?');
    const details = result.details();
    expect(details.modelCalls.map((c) => [c.index, c.purpose, c.usage.totalTokens])).toEqual([
      [1, 'generation 1', 40],
      [2, 'generation 2', 55],
    ]);
    // The request as compiled and sent: the same messages the model received.
    expect(details.modelCalls[1]?.request.messages).toEqual(model.requests[1]?.messages.toArray());
    expect(details.modelCalls[0]?.request.tools).toEqual(['add']);
    expect(details.modelCalls[1]?.response?.content).toEqual([
      { type: 'text', text: 'The sum is 5.' },
    ]);
    expect(details.modelCalls[1]?.latencyMs).toBeGreaterThanOrEqual(10);
    expect(details.usage).toEqual(result.usage);
    expect(details.toolCalls).toHaveLength(1);
    expect(details.toolCalls[0]).toMatchObject({
      call: { id: 'c1', name: 'add', arguments: { a: 2, b: 3 } },
      result: { success: true, output: 5 },
      executor: 'local',
    });
    expect(details.toolCalls[0]?.latencyMs).toBeGreaterThanOrEqual(15);
    // Ordered in time: the tool ran between the two model calls.
    const [first, second] = details.modelCalls;
    expect(details.toolCalls[0]?.startedAtMs).toBeGreaterThanOrEqual(
      first?.startedAtMs ?? Infinity,
    );
    expect(details.toolCalls[0]?.startedAtMs).toBeLessThanOrEqual(second?.startedAtMs ?? -1);
    expect(details.durationMs).toBeGreaterThanOrEqual(details.toolCalls[0]?.latencyMs ?? Infinity);
  });

  it('keeps the result plain data: details is not an enumerable key', async () => {
    const result = await createChain({ model: script(), tools: [add] }).invoke('go');
    expect(Object.keys(result)).not.toContain('details');
    expect(JSON.parse(JSON.stringify(result)).details).toBeUndefined();
  });

  it('names the executor of a remote call', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'lookup', arguments: {} }] },
      { text: 'ok' },
    ]);
    const remote = {
      name: 'remote-box',
      listTools: () => [
        { name: 'lookup', description: 'Looks up.', inputSchema: { type: 'object' } },
      ],
      execute: async (call: { id: string; name: string }) => ({
        toolCallId: call.id,
        name: call.name,
        output: 'found',
        success: true,
      }),
    };
    const result = await createChain({ model, remote }).invoke('go');
    expect(result.details().toolCalls[0]?.executor).toBe('remote-box');
  });

  it('is on a failed run too, with the failed model call', async () => {
    const model = new ScriptedModel([{ error: new Error('overloaded') }]);
    const error = await rejectionOf(
      {
        name: 'Error',
        isInstance: (e: unknown): e is Error & { partial: ChainPartialResult } =>
          e instanceof Error,
      },
      createChain({ model }).invoke('go'),
    );
    const details = error.partial.details();
    expect(details.modelCalls).toHaveLength(1);
    expect(details.modelCalls[0]).toMatchObject({ error: 'overloaded', usage: { totalTokens: 0 } });
    expect(details.modelCalls[0]?.response).toBeUndefined();
  });

  it('comes with the final stream event', async () => {
    let details: RunDetails | undefined;
    for await (const event of createChain({ model: script(), tools: [add] }).stream('go')) {
      if (event.type === 'final') details = event.details;
    }
    expect(details?.modelCalls).toHaveLength(2);
    expect(details?.toolCalls).toHaveLength(1);
  });
});

describe('tool loop: result.details()', () => {
  it('lists the planner calls, the tools and the final response', async () => {
    const model = new ScriptedModel([
      {
        text: JSON.stringify({
          nextAction: 'execute',
          executionCommands: [{ purpose: 'Sum', toolName: 'add', toolKwargs: { a: 1, b: 2 } }],
        }),
      },
      { chunks: ['{"nextAction": "response",', ' "executionCommands": []}'] },
      { text: 'It is 3 [Sum].' },
    ]);
    const result = await createToolLoop({ model, tools: [add] }).invoke('1 + 2?');
    const details = result.details();
    expect(details.modelCalls.map((c) => c.purpose)).toEqual([
      'plan round 1',
      'plan round 2',
      'respond',
    ]);
    expect(details.modelCalls[1]?.response?.finishReason.unified).toBe('other');
    expect(details.modelCalls[0]?.request.responseFormat).toMatchObject({
      type: 'json_schema',
      name: 'tool_loop_plan',
    });
    expect(details.toolCalls.map((t) => [t.call.name, t.result.output])).toEqual([['add', 3]]);
  });

  it('is on the partial result of a failed loop', async () => {
    const loop = createToolLoop({ planner: () => 'no plan', tools: [add], planRetries: 0 });
    const error = await rejectionOf(ProtocolError, loop.invoke('go'));
    expect((error.partial as ToolLoopPartialResult).details().modelCalls).toEqual([]);
  });
});

// The README says a failed run's `partial` holds `details()`: it was an object there and a
// method on results. One shape now, the results' method, wherever a partial goes.
describe("a failed run's partial: details() as on a result", () => {
  async function failedChain() {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }] },
      { error: new Error('overloaded') },
    ]);
    const error = await rejectionOf(ModelError, createChain({ model, tools: [add] }).invoke('go'));
    return { error, partial: error.partial as ChainPartialResult };
  }

  it('is a method, not an enumerable key, on a chain and a tool loop partial alike', async () => {
    const { partial } = await failedChain();
    expect(typeof partial.details).toBe('function');
    expect(partial.details().toolCalls.map((t) => t.result.output)).toEqual([5]);
    expect(partial.details().modelCalls.map((c) => c.error)).toEqual([undefined, 'overloaded']);
    expect(Object.keys(partial)).not.toContain('details');
    expect(JSON.parse(JSON.stringify(partial)).details).toBeUndefined();
    const loop = createToolLoop({ planner: () => 'no plan', tools: [add], planRetries: 0 });
    const loopError = await rejectionOf(ProtocolError, loop.invoke('go'));
    const loopPartial = loopError.partial as ToolLoopPartialResult;
    expect(typeof loopPartial.details).toBe('function');
    expect(Object.keys(loopPartial)).not.toContain('details');
  });

  it('crosses the journal and the Restate outcome as data, and comes back a method', async () => {
    const { error, partial } = await failedChain();
    const wire = JSON.parse(JSON.stringify(failed(error))) as RunOutcome;
    const back = (() => {
      try {
        settle(wire);
      } catch (revived) {
        return revived as ModelError;
      }
      throw new Error('a failed outcome settled');
    })();
    expect(ModelError.isInstance(back)).toBe(true);
    const revived = back.partial as ChainPartialResult;
    expect(typeof revived.details).toBe('function');
    expect(Object.keys(revived)).not.toContain('details');
    expect(revived.details()).toEqual(partial.details());
    expect(revived.transcript).toEqual(partial.transcript);
  });

  it('revives from a journal written while details were an object', () => {
    const details: RunDetails = {
      modelCalls: [],
      toolCalls: [],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      durationMs: 1,
    };
    const partial = { transcript: [], usage: details.usage, details };
    const older = encode(new ProtocolError('stopped', { partial }));
    const back = decode(JSON.parse(JSON.stringify(older))) as ProtocolError;
    const revived = back.partial as ChainPartialResult;
    expect(revived.details()).toEqual(details);
    expect(Object.keys(revived)).toEqual(['transcript', 'usage']);
  });
});

describe('formatRunDetails', () => {
  it('prints one line per call in time order, then the totals', async () => {
    const result = await createChain({ model: script(), tools: [add] }).invoke('What is 2 + 3?');
    const lines = formatRunDetails(result.details()).split('\n');
    expect(lines[0]).toMatch(
      /^\[ +\d+\.\d ms\] model #1 generation 1: 2 message\(s\) → tool-calls in [\d.]+ ms, 30\+10 tokens$/,
    );
    expect(lines[1]).toBe('    call add({"a":2,"b":3})');
    expect(lines[2]).toMatch(
      /^\[ +[\d.]+ ms\] tool add\(\{"a":2,"b":3\}\) on local, [\d.]+ ms ✓ 5$/,
    );
    expect(lines[3]).toMatch(
      /model #2 generation 2: 4 message\(s\) → stop in [\d.]+ ms, 50\+5 tokens$/,
    );
    expect(lines[4]).toBe('    text "The sum is 5."');
    expect(lines[5]).toMatch(
      /^2 model call\(s\), 1 tool call\(s\), 95 tokens \(80 in, 15 out\), [\d.]+ ms$/,
    );
  });
});
