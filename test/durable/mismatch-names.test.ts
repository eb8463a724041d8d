// A resumed run that differs from its journal says what differs: the option, with both values
// when they are short, or the input key, instead of two hashes. Through resume() and invoke()
// with a run id, on memoryStore; a journal from before the start entry kept its fields still
// gives the hashes.
import { createChain, createToolLoop, JournalMismatchError } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import { type Execution, loggingTool, storeWithPrefix, type Turn, turnModel } from './helpers.js';

const turns: Turn[] = [
  { calls: [{ id: 'c1', name: 'charge', arguments: { value: 'a' } }] },
  { text: 'paid' },
];

interface Setup {
  readonly maxIterations?: number;
  readonly systemPrompt?: string;
  readonly tools?: readonly string[];
}

function chainWith({ maxIterations = 5, systemPrompt, tools = ['charge'] }: Setup = {}) {
  const log: Execution[] = [];
  return createChain({
    model: turnModel(turns),
    tools: tools.map((name) => loggingTool(name, log)),
    maxIterations,
    ...(systemPrompt !== undefined && { systemPrompt }),
  });
}

async function mismatch(promise: Promise<unknown>): Promise<JournalMismatchError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(JournalMismatchError.isInstance(error)).toBe(true);
  return error as JournalMismatchError;
}

describe('a resumed chain with other options', () => {
  it('names the option and both values: `maxIterations` (5 → 8)', async () => {
    const store = memoryStore();
    await chainWith().invoke('pay', { runId: 'r', store });
    const error = await mismatch(chainWith({ maxIterations: 8 }).resume('r', { store }));
    expect(error.changes).toEqual([{ option: 'maxIterations', values: '5 → 8' }]);
    expect(error.message).toBe(
      'Journal entry 0: the replayed chain configuration differs from the journaled one: the ' +
        'journal was started with a different `maxIterations` (5 → 8). Resume it with the ones ' +
        'that started it, or start a new run.',
    );
  });

  it('names several at once; a long system prompt is cut, not copied whole', async () => {
    const store = memoryStore();
    const long = `You are a payments agent. ${'Be careful. '.repeat(40)}`;
    await chainWith({ systemPrompt: long }).invoke('pay', { runId: 'r', store });
    const error = await mismatch(
      chainWith({ maxIterations: 8, systemPrompt: 'Be brief.' }).resume('r', { store }),
    );
    expect(error.changes.map((c) => c.option)).toEqual(['maxIterations', 'systemPrompt']);
    expect(error.message).toContain(
      'a different `maxIterations` (5 → 8) and `systemPrompt` ("You are a payments agent. Be careful. B…" → "Be brief.")',
    );
    expect(error.message).not.toContain('Be careful. Be careful. Be careful.');
    // Nor does the journal keep more of it than the preview (its input is the user's).
    const start = JSON.stringify((await store.read('r'))?.[0]);
    expect(start).not.toContain('Be careful. Be careful. Be careful.');
  });

  it('names the tool list with the tools in it', async () => {
    const store = memoryStore();
    await chainWith().invoke('pay', { runId: 'r', store });
    const error = await mismatch(chainWith({ tools: ['charge', 'refund'] }).resume('r', { store }));
    expect(error.changes).toEqual([{ option: 'tools', values: 'charge → charge, refund' }]);
  });
});

describe('a run id given another input', () => {
  it('names the message that differs, with both texts', async () => {
    const store = memoryStore();
    await chainWith().invoke('pay the invoice', { runId: 'r', store });
    const error = await mismatch(chainWith().invoke('refund the invoice', { runId: 'r', store }));
    expect(error.changes).toEqual([
      { option: 'messages[0]', values: '"pay the invoice" → "refund the invoice"' },
    ]);
    expect(error.message).toBe(
      "Journal entry 0: the replayed input of run 'r' differs from the journaled one: the " +
        'journal was started with a different `messages[0]` ("pay the invoice" → "refund the ' +
        'invoice"). A run id starts one run: resume it, or use a new id for this input.',
    );
  });

  it('compares a string input in the shape the journal holds', async () => {
    const store = memoryStore();
    const loop = createToolLoop({ planner: () => ({ nextAction: 'response' }), respond: false });
    await loop.invoke('plan a trip', { runId: 'l', store });
    const error = await mismatch(loop.invoke('plan a holiday', { runId: 'l', store }));
    expect(error.changes).toEqual([
      { option: 'userInput', values: '"plan a trip" → "plan a holiday"' },
    ]);
  });

  it("names a tool loop's input key", async () => {
    const store = memoryStore();
    const loop = createToolLoop({ planner: () => ({ nextAction: 'response' }), respond: false });
    await loop.invoke({ userInput: 'plan a trip' }, { runId: 'l', store });
    const error = await mismatch(
      loop.invoke(
        { userInput: 'plan a trip', extraRequirement: 'by train' },
        { runId: 'l', store },
      ),
    );
    expect(error.changes).toEqual([{ option: 'extraRequirement', values: '(unset) → "by train"' }]);
  });
});

describe('a resumed tool loop with other tools', () => {
  it("names the tools, which are not in the loop's configuration but change its plans", async () => {
    const store = memoryStore();
    const log: Execution[] = [];
    const loopWith = (tools: readonly string[]) =>
      createToolLoop({
        planner: () => ({ nextAction: 'response' }),
        respond: false,
        tools: tools.map((name) => loggingTool(name, log)),
      });
    await loopWith(['search']).invoke('find it', { runId: 'l', store });
    const error = await mismatch(loopWith(['search', 'book']).resume('l', { store }));
    expect(error.changes).toEqual([{ option: 'tools', values: 'search → search, book' }]);
    expect(error.message).toContain('the journal was started with a different `tools`');
  });
});

describe('a journal from before the start entry kept its fields', () => {
  it('still gives the hashes, as before', async () => {
    const store = memoryStore();
    await chainWith().invoke('pay', { runId: 'r', store });
    const entries = (await store.read('r')) ?? [];
    const { configFields: _dropped, ...oldStart } = entries[0] as Record<string, unknown>;
    const old = [{ ...oldStart, type: 'start' }, ...entries.slice(1)];
    const error = await mismatch(
      chainWith({ maxIterations: 8 }).resume('r', {
        store: await storeWithPrefix('r', old, old.length),
      }),
    );
    expect(error.changes).toEqual([]);
    expect(error.message).toMatch(
      /^Journal entry 0: the replayed chain configuration differs from the journaled one \(hash [0-9a-f]{12}…, journaled [0-9a-f]{12}…\)\. The run was journaled by different code, options or tools/,
    );
  });
});
