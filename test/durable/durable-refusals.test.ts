// Issue 15: what a durable run refuses, each with an error that says what to do.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  ConfigError,
  createChain,
  createToolLoop,
  fileStore,
  JournalError,
  JournalMismatchError,
} from 'statecraft';
import { describe, expect, it } from 'vitest';
import { JOURNAL_FORMAT_VERSION } from '../../src/durable/journal-entry.js';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import { type Execution, loggingTool, storeWithPrefix, type Turn, turnModel } from './helpers.js';

const turns: Turn[] = [
  { calls: [{ id: 'c1', name: 'charge', arguments: { value: 'a' } }] },
  { text: 'paid' },
];

function chainWith(log: Execution[] = [], systemPrompt?: string) {
  return createChain({
    model: turnModel(turns),
    tools: [loggingTool('charge', log)],
    ...(systemPrompt && { systemPrompt }),
  });
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('durable run refusals', () => {
  it('needs runId and store together', async () => {
    const chain = chainWith();
    const noStore = await rejection(chain.invoke('pay', { runId: 'x' }));
    expect(noStore).toBeInstanceOf(ConfigError);
    expect((noStore as ConfigError).option).toBe('store');
    const noId = await rejection(chain.invoke('pay', { store: memoryStore() }));
    expect((noId as ConfigError).option).toBe('runId');
    await expect(chain.invoke('pay', { runId: 'bad id!', store: memoryStore() })).rejects.toThrow(
      JournalError,
    );
  });

  it('resuming an unknown id, a run of the other kind, or a newer journal', async () => {
    const store = memoryStore();
    const chain = chainWith();
    const unknown = await rejection(chain.resume('missing', { store }));
    expect(unknown).toBeInstanceOf(JournalError);
    expect((unknown as JournalError).reason).toBe('unknown-run');
    expect((unknown as Error).message).toMatch(/No run 'missing' in this store/);

    await chain.invoke('pay', { runId: 'c', store });
    const loop = createToolLoop({ planner: () => ({ nextAction: 'response' }), respond: false });
    const wrongKind = await rejection(loop.resume('c', { store }));
    expect((wrongKind as JournalError).reason).toBe('wrong-kind');
    expect((wrongKind as Error).message).toMatch(/is a chain run: resume it with a chain/);

    const entries = (await store.read('c')) ?? [];
    const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-newer-'));
    try {
      const start = { ...entries[0], version: JOURNAL_FORMAT_VERSION + 1 };
      const lines = [start, ...entries.slice(1)].map((entry) => JSON.stringify(entry));
      writeFileSync(path.join(dir, 'c.jsonl'), `${lines.join('\n')}\n`);
      const refused = await rejection(chain.resume('c', { store: fileStore(dir) }));
      expect(refused).toBeInstanceOf(JournalError);
      expect((refused as JournalError).reason).toBe('newer-version');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a run started under other options, or attached to with another input, is a mismatch', async () => {
    const store = memoryStore();
    await chainWith().invoke('pay', { runId: 'r', store });
    const otherOptions = await rejection(chainWith([], 'Be brief.').resume('r', { store }));
    expect(otherOptions).toBeInstanceOf(JournalMismatchError);
    expect((otherOptions as JournalMismatchError).entry).toBe(0);
    expect((otherOptions as Error).message).toMatch(/chain configuration/);

    const otherInput = await rejection(chainWith().invoke('refund', { runId: 'r', store }));
    expect(otherInput).toBeInstanceOf(JournalMismatchError);
    expect((otherInput as Error).message).toMatch(/input of run 'r'/);
  });

  it('a replayed request that differs from the journaled one names the entry; nothing runs', async () => {
    const store = memoryStore();
    await chainWith().invoke('pay', { runId: 'r', store });
    const entries = (await store.read('r')) ?? [];
    const index = entries.findIndex((e) => e.type === 'request' && e.effect === 'executeTools');
    const edited = entries.map((entry, i) =>
      i === index ? { ...entry, hash: 'f'.repeat(64) } : entry,
    );
    const log: Execution[] = [];
    const error = await rejection(
      chainWith(log).resume('r', { store: await storeWithPrefix('r', edited, edited.length) }),
    );
    expect(error).toBeInstanceOf(JournalMismatchError);
    expect((error as JournalMismatchError).entry).toBe(index);
    expect((error as Error).message).toMatch(/tool step/);
    expect(log).toEqual([]);
  });

  it('starting an id that exists attaches to it: a finished run settles again, running nothing', async () => {
    const store = memoryStore();
    const log: Execution[] = [];
    const first = await chainWith(log).invoke('pay', { runId: 'r', store });
    const again = await chainWith(log).invoke('pay', { runId: 'r', store });
    expect(again.text).toBe(first.text);
    expect(log).toHaveLength(1);
    expect(again.details().toolCalls.every((call) => call.replayed)).toBe(true);
  });

  it('two starts of one id in one process make one run', async () => {
    const store = memoryStore();
    const log: Execution[] = [];
    const chain = chainWith(log);
    const [a, b] = await Promise.all([
      chain.invoke('pay', { runId: 'r', store }),
      chain.invoke('pay', { runId: 'r', store }),
    ]);
    expect(a.text).toBe(b.text);
    expect(log).toHaveLength(1);
  });
});

describe('observers of a durable run whose journal refuses it', () => {
  it('see the run end with the journal error, for chains and tool loops alike', async () => {
    const ends: unknown[] = [];
    const observers = { onRunEnd: (_run: unknown, outcome: unknown) => ends.push(outcome) };
    const store = memoryStore();
    const loop = createToolLoop({
      planner: () => ({ nextAction: 'response' }),
      tools: [loggingTool('charge', [])],
      respond: false,
    });
    await expect(loop.invoke('go', { runId: 'bad id!', store, observers })).rejects.toThrow(
      JournalError,
    );
    await expect(chainWith().invoke('go', { runId: 'bad id!', store, observers })).rejects.toThrow(
      JournalError,
    );
    expect(ends).toHaveLength(2);
    for (const end of ends) expect((end as { error: unknown }).error).toBeInstanceOf(JournalError);
  });
});
