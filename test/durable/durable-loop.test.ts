// Issue 15: a durable tool loop resumes from any point of its journal without repeating a
// finished plan, tool call or response, and ends as the uncrashed run did.
import { createToolLoop, type LanguageModel, type PlannerContext } from 'statecraft';
import type { ModelRequest, ModelResponse } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import { type Execution, loggingTool, storeWithPrefix } from './helpers.js';

/** Plans by round, as a model would from the same context: a re-issued plan is the same plan. */
function roundPlanner(counter: { plans: number }) {
  return async (context: PlannerContext) => {
    counter.plans++;
    if (context.roundIndex === 0) {
      return {
        nextAction: 'execute',
        executionCommands: ['a', 'b', 'c'].map((value) => ({
          purpose: `charge ${value}`,
          toolName: 'charge',
          toolKwargs: { value },
        })),
      };
    }
    if (context.roundIndex === 1) {
      return {
        nextAction: 'execute',
        executionCommands: [{ purpose: 'email', toolName: 'email', toolKwargs: { value: 'd' } }],
      };
    }
    return { nextAction: 'response', executionCommands: [] };
  };
}

function makeLoop(log: Execution[]) {
  const counter = { plans: 0, responses: 0 };
  const loop = createToolLoop({
    planner: roundPlanner(counter),
    tools: [loggingTool('charge', log), loggingTool('email', log)],
    respond: async ({ actionResults }) => {
      counter.responses++;
      return `done: ${Object.keys(actionResults).sort().join(', ')}`;
    },
  });
  return { loop, counter };
}

describe('a durable tool loop', () => {
  it('ends like a plain run, journals per call, and lists as a tool-loop run', async () => {
    const plain = await makeLoop([]).loop.invoke('pay');
    const log: Execution[] = [];
    const store = memoryStore();
    const durable = await makeLoop(log).loop.invoke('pay', { runId: 'l1', store });
    expect(durable.answer).toBe(plain.answer);
    expect(durable.toolLogs).toEqual(plain.toolLogs);
    expect(log.map((e) => e.key).sort()).toEqual([
      'l1:round1_0',
      'l1:round1_1',
      'l1:round1_2',
      'l1:round2_0',
    ]);
    const entries = (await store.read('l1')) ?? [];
    expect(entries.filter((e) => e.type === 'result')).toHaveLength(4);
    expect(await store.list()).toEqual([
      expect.objectContaining({ runId: 'l1', kind: 'tool-loop', status: 'succeeded' }),
    ]);
  });

  it('resumes after a crash at every entry: same output, no finished call repeated', async () => {
    const full = memoryStore();
    const reference = await makeLoop([]).loop.invoke('pay', { runId: 'r', store: full });
    const entries = (await full.read('r')) ?? [];
    for (let count = 1; count <= entries.length; count++) {
      const prefix = entries.slice(0, count);
      const store = await storeWithPrefix('r', entries, count);
      const log: Execution[] = [];
      const { loop, counter } = makeLoop(log);
      const resumed = await loop.resume('r', { store });
      const where = `crash after ${count} entries`;
      expect(resumed.answer, where).toBe(reference.answer);
      expect(resumed.toolLogs, where).toEqual(reference.toolLogs);
      expect(resumed.plans, where).toEqual(reference.plans);
      const finished = new Set(prefix.filter((e) => e.type === 'result').map((e) => e.callId));
      const started = new Set(prefix.filter((e) => e.type === 'call').map((e) => e.callId));
      for (const execution of log) {
        expect(finished.has(execution.callId), `${where}: ${execution.callId} ran again`).toBe(
          false,
        );
        expect(execution.key).toBe(`r:${execution.callId}`);
      }
      const answered = (effect: string) =>
        prefix.filter((e) => e.type === 'answer' && (e.event as { type: string }).type === effect)
          .length;
      expect(counter.plans, where).toBe(3 - answered('plan.done'));
      expect(counter.responses, where).toBe(1 - answered('respond.done'));
      const repeated = resumed.details().toolCalls.filter((c) => c.possiblyRepeated);
      expect(repeated.map((c) => c.call.id).sort(), where).toEqual(
        [...started].filter((id) => !finished.has(id)).sort(),
      );
      expect(((await store.read('r')) ?? []).at(-1)).toEqual({ type: 'end', status: 'succeeded' });
    }
  });

  it('refuses to resume a chain run, an unknown id, and planOnly with a run id', async () => {
    const store = memoryStore();
    const { loop } = makeLoop([]);
    await expect(loop.resume('nope', { store })).rejects.toThrow(/No run 'nope'/);
    await expect(loop.planOnly('pay', { runId: 'p', store })).rejects.toThrow(/not journaled/);
  });
});

describe('a durable loop planned and answered by a model', () => {
  it('lists the replayed plan in details(), marked replayed, and a plan in flight at the crash as possibly repeated', async () => {
    const makeModel = () => {
      const calls: string[] = [];
      const answer = (request: ModelRequest): ModelResponse => {
        const planning = request.responseFormat !== undefined;
        calls.push(planning ? 'plan' : 'respond');
        return {
          content: [{ type: 'text', text: planning ? '{"nextAction":"response"}' : 'Hello.' }],
          usage: { inputTokens: 3, outputTokens: 2, totalTokens: 5 },
          finishReason: { unified: 'stop', raw: 'stop' },
        };
      };
      const model: LanguageModel = {
        specificationVersion: 'v1',
        provider: 'test',
        modelId: 'planner',
        generate: async (request) => answer(request),
        async *stream(request) {
          const response = answer(request);
          for (const part of response.content) {
            if (part.type === 'text') yield { type: 'text-delta', delta: part.text };
          }
          yield { type: 'usage', usage: response.usage };
          yield { type: 'finish', finishReason: response.finishReason };
        },
      };
      return { model, calls };
    };
    const tools = [loggingTool('charge', [])];
    const full = memoryStore();
    const first = makeModel();
    const reference = await createToolLoop({ model: first.model, tools }).invoke('hi', {
      runId: 'm',
      store: full,
    });
    const entries = (await full.read('m')) ?? [];
    const planned = entries.findIndex(
      (e) => e.type === 'answer' && (e.event as { type: string }).type === 'plan.done',
    );
    const second = makeModel();
    const resumed = await createToolLoop({ model: second.model, tools }).resume('m', {
      store: await storeWithPrefix('m', entries, planned + 1),
    });
    expect(resumed.answer).toBe('Hello.');
    expect(second.calls).toEqual(['respond']);
    const calls = resumed.details().modelCalls;
    expect(calls.map((c) => [c.purpose, c.replayed ?? false])).toEqual([
      ['plan round 1', true],
      ['respond', false],
    ]);
    expect(calls.map((c) => c.usage)).toEqual(reference.details().modelCalls.map((c) => c.usage));
    expect(resumed.usage).toEqual(reference.usage);

    // Crashed with the plan asked for but not answered: the plan is made again, and flagged.
    const asked = entries.findIndex((e) => e.type === 'request');
    const third = makeModel();
    const reissued = await createToolLoop({ model: third.model, tools }).resume('m', {
      store: await storeWithPrefix('m', entries, asked + 1),
    });
    expect(third.calls).toEqual(['plan', 'respond']);
    expect(
      reissued
        .details()
        .modelCalls.map((c) => [c.purpose, c.replayed ?? false, c.possiblyRepeated ?? false]),
    ).toEqual([
      ['plan round 1', false, true],
      ['respond', false, false],
    ]);
  });
});

describe('a durable loop streamed', () => {
  it('streams its rounds, and a stream with the id of a crashed run resumes it', async () => {
    const store = memoryStore();
    const types: string[] = [];
    for await (const event of makeLoop([]).loop.stream('pay', { runId: 'ls', store })) {
      types.push(event.type);
    }
    expect(types).toContain('record');
    expect(types.at(-1)).toBe('final');
    const entries = (await store.read('ls')) ?? [];
    const cut = entries.findIndex((e) => e.type === 'result');
    const log: Execution[] = [];
    let answer: string | undefined;
    const crashed = await storeWithPrefix('ls', entries, cut + 1);
    for await (const event of makeLoop(log).loop.stream('pay', { runId: 'ls', store: crashed })) {
      if (event.type === 'final') answer = event.result?.answer;
    }
    expect(answer).toBe('done: charge a, charge b, charge c, email');
    const firstResult = entries[cut]?.callId;
    expect(firstResult).toBeTypeOf('string');
    expect(log.map((e) => e.callId)).not.toContain(firstResult);
  });
});
