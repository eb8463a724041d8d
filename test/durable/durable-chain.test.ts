// Issue 15: a durable chain run resumes from any point of its journal without repeating a
// finished model or tool call, and ends as the uncrashed run did.
import { createChain, defineTool } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import { type Execution, loggingTool, storeWithPrefix, type Turn, turnModel } from './helpers.js';

const turns: Turn[] = [
  { calls: [{ id: 'c1', name: 'charge', arguments: { value: 'a' } }] },
  {
    calls: [
      { id: 'c2', name: 'charge', arguments: { value: 'b' } },
      { id: 'c3', name: 'email', arguments: { value: 'c' } },
    ],
  },
  { text: 'all done' },
];

function makeChain(log: Execution[]) {
  const model = turnModel(turns);
  const chain = createChain({
    model,
    tools: [loggingTool('charge', log), loggingTool('email', log)],
  });
  return { chain, model };
}

describe('a durable chain run', () => {
  it('ends like a plain run and journals start to end', async () => {
    const plainLog: Execution[] = [];
    const plain = await makeChain(plainLog).chain.invoke('pay');
    const log: Execution[] = [];
    const store = memoryStore();
    const durable = await makeChain(log).chain.invoke('pay', { runId: 'r1', store });
    expect(durable.text).toBe(plain.text);
    expect(durable.transcript).toEqual(plain.transcript);
    expect(log.map((e) => e.key)).toEqual(['r1:c1', 'r1:c2', 'r1:c3']);
    const entries = (await store.read('r1')) ?? [];
    expect(entries[0]?.type).toBe('start');
    expect(entries.at(-1)).toEqual({ type: 'end', status: 'succeeded' });
    expect(await store.list()).toEqual([
      expect.objectContaining({ runId: 'r1', kind: 'chain', status: 'succeeded' }),
    ]);
  });

  it('resumes after a crash at every entry: same output, no finished call repeated', async () => {
    const fullLog: Execution[] = [];
    const full = memoryStore();
    const reference = await makeChain(fullLog).chain.invoke('pay', { runId: 'r', store: full });
    const entries = (await full.read('r')) ?? [];
    expect(entries.length).toBeGreaterThan(8);
    for (let count = 1; count <= entries.length; count++) {
      const prefix = entries.slice(0, count);
      const store = await storeWithPrefix('r', entries, count);
      const log: Execution[] = [];
      const { chain, model } = makeChain(log);
      const resumed = await chain.resume('r', { store });
      expect(resumed.text, `crash after ${count} entries`).toBe(reference.text);
      expect(resumed.transcript).toEqual(reference.transcript);
      const finished = new Set(prefix.filter((e) => e.type === 'result').map((e) => e.callId));
      const started = new Set(prefix.filter((e) => e.type === 'call').map((e) => e.callId));
      for (const execution of log) {
        expect(finished.has(execution.callId), `${execution.callId} ran again`).toBe(false);
        expect(execution.key).toBe(`r:${execution.callId}`);
      }
      expect(new Set(log.map((e) => e.callId)).size).toBe(log.length);
      const answeredModelCalls = prefix.filter(
        (e) => e.type === 'answer' && (e.event as { type: string }).type === 'callModel.done',
      ).length;
      expect(model.calls, `model calls after ${count}`).toBe(3 - answeredModelCalls);
      const repeated = resumed.details().toolCalls.filter((c) => c.possiblyRepeated);
      expect(repeated.map((c) => c.call.id).sort()).toEqual(
        [...started].filter((id) => !finished.has(id)).sort(),
      );
      const after = (await store.read('r')) ?? [];
      expect(after.at(-1)).toEqual({ type: 'end', status: 'succeeded' });
    }
  });
});

describe('a stream open when the process died', () => {
  const numbers = defineTool({
    name: 'numbers',
    description: 'Streams numbers.',
    input: z.object({}),
    execute: async function* () {
      for (let i = 1; i <= 12; i++) yield i;
    },
  });
  const streamTurns: Turn[] = [
    { calls: [{ id: 's1', name: 'numbers', arguments: {} }] },
    { calls: [{ id: 'n1', name: 'note', arguments: { value: 'x' } }] },
    { text: 'counted' },
  ];
  const streamChain = () =>
    createChain({
      model: turnModel(streamTurns),
      tools: [numbers, loggingTool('note', [])],
      streamBatchSize: 5,
    });

  it('answers as lost on resume: the model reads why, and can call the tool again', async () => {
    const full = memoryStore();
    const reference = await streamChain().invoke('count', { runId: 's', store: full });
    const entries = (await full.read('s')) ?? [];
    const firstStep = entries.findIndex(
      (e) => e.type === 'answer' && (e.event as { type: string }).type === 'executeTools.done',
    );
    const store = await storeWithPrefix('s', entries, firstStep + 1);
    const resumed = await streamChain().resume('s', { store });
    expect(resumed.text).toBe(reference.text);
    expect(JSON.stringify(resumed.transcript)).toMatch(/stream error: lost: the run was resumed/);
    expect(JSON.stringify(reference.transcript)).not.toMatch(/lost/);
  });
});

describe('a durable run streamed', () => {
  it('streams as a plain run does, and a stream with the id of a crashed run resumes it', async () => {
    const store = memoryStore();
    const events: string[] = [];
    for await (const event of makeChain([]).chain.stream('pay', { runId: 's1', store })) {
      events.push(event.type);
      if (event.type === 'final') expect(event.result?.text).toBe('all done');
    }
    expect(events).toContain('tool-call');
    expect(events.at(-1)).toBe('final');

    const entries = (await store.read('s1')) ?? [];
    const crashed = await storeWithPrefix('s1', entries, 5);
    const log: Execution[] = [];
    let final: { result?: { text: string } } | undefined;
    for await (const event of makeChain(log).chain.stream('pay', { runId: 's1', store: crashed })) {
      if (event.type === 'final') final = event as typeof final;
    }
    expect(final?.result?.text).toBe('all done');
    const finished = new Set(
      entries
        .slice(0, 5)
        .filter((e) => e.type === 'result')
        .map((e) => e.callId),
    );
    expect(log.filter((e) => finished.has(e.callId))).toEqual([]);
  });

  it('a stream of a run already going on in this process attaches to it: its final event', async () => {
    const store = memoryStore();
    const log: Execution[] = [];
    const { chain } = makeChain(log);
    const running = chain.invoke('pay', { runId: 'a', store });
    const types: string[] = [];
    for await (const event of chain.stream('pay', { runId: 'a', store })) types.push(event.type);
    expect(types).toEqual(['final']);
    expect((await running).text).toBe('all done');
    expect(log).toHaveLength(3);
  });
});
