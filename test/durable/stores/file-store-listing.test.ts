// list() reads an index, not every journal; a foreign file in the folder is skipped, a corrupt
// journal is named, and neither breaks the listing of the other runs, nor approvals.
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { approvals, createChain, defineTool, fileStore } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { endEntry, startEntry } from './journal-store-contract.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-listing-'));
  dirs.push(dir);
  return dir;
}

/** Puts a line that is not JSON in the middle of a run's journal. */
function corruptMiddle(dir: string, runId: string): void {
  const file = path.join(dir, `${runId}.jsonl`);
  const [first, ...rest] = readFileSync(file, 'utf8').split('\n');
  writeFileSync(file, [first, 'not json', ...rest].join('\n'));
}

describe('fileStore list()', () => {
  it('answers an ended run from its index, and a run the index misses from its journal', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    for (const [runId, startedAt] of [
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ] as const) {
      await store.append(runId, startEntry(runId, { startedAt }));
    }
    await store.append('a', endEntry('succeeded'));
    await store.append('b', endEntry('failed'));
    const expected = [
      { runId: 'a', kind: 'chain', status: 'succeeded', startedAt: 1 },
      { runId: 'b', kind: 'chain', status: 'failed', startedAt: 2 },
      { runId: 'c', kind: 'chain', status: 'running', startedAt: 3 },
    ];
    expect(await fileStore(dir).list()).toEqual(expected);
    // An ended run's journal is not read again: its index line answers for it.
    corruptMiddle(dir, 'a');
    expect(await fileStore(dir).list()).toEqual(expected);
    // Without the index, every journal is read (and the index written again).
    await rm(path.join(dir, '.statecraft-index.jsonl'));
    const listed = await fileStore(dir).list();
    expect(listed[0]).toMatchObject({
      runId: 'a',
      status: 'unreadable',
      reason: 'corrupt',
      startedAt: 1,
      problem: expect.stringMatching(/a\.jsonl, line 2: it is not JSON$/),
    });
    expect(listed.slice(1)).toEqual(expected.slice(1));
    expect(readFileSync(path.join(dir, '.statecraft-index.jsonl'), 'utf8')).toContain('"run":"b"');
    // A deleted run leaves the listing, and its id may start again.
    await store.delete('b');
    await store.append('b', startEntry('b', { startedAt: 9 }));
    expect((await fileStore(dir).list()).find((run) => run.runId === 'b')).toEqual({
      runId: 'b',
      kind: 'chain',
      status: 'running',
      startedAt: 9,
    });
  });

  it('rewrites the index once dead lines are most of it, listing the same runs', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    const ids = Array.from({ length: 600 }, (_, i) => `r${i}`);
    for (const runId of ids) {
      await store.append(runId, startEntry(runId));
      await store.append(runId, endEntry('succeeded'));
    }
    for (const runId of ids.slice(100)) await store.delete(runId);
    const index = path.join(dir, '.statecraft-index.jsonl');
    const before = readFileSync(index, 'utf8').split('\n').length;
    const listed = await fileStore(dir).list();
    expect(listed.map((run) => run.runId).sort()).toEqual(ids.slice(0, 100).sort());
    const after = readFileSync(index, 'utf8').split('\n').length;
    expect(before).toBeGreaterThan(1_700);
    expect(after).toBeLessThan(210);
    expect(await fileStore(dir).list()).toEqual(listed);
  }, 60_000);

  it('keeps going past a torn or foreign line in the index', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    await store.append('a', startEntry('a'));
    appendFileSync(path.join(dir, '.statecraft-index.jsonl'), '{"run":"a","sta\n[1,2]\n');
    await store.append('a', endEntry('succeeded'));
    expect(await fileStore(dir).list()).toEqual([
      { runId: 'a', kind: 'chain', status: 'succeeded', startedAt: 1_000 },
    ]);
  });

  it('one corrupt journal and one foreign file break neither list() nor approvals', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    const tool = defineTool({
      name: 'refund',
      description: 'Refunds an order.',
      input: z.object({ order: z.string() }),
      needsApproval: true,
      execute: ({ order }) => `refunded ${order}`,
    });
    const chain = createChain({
      model: new ScriptedModel([
        { toolCalls: [{ id: 'r1', name: 'refund', arguments: { order: 'A-1' } }] },
      ]),
      tools: [tool],
    });
    await chain
      .invoke('refund A-1', { runId: 'waiting', store, parkForApproval: true })
      .catch(() => {});
    await store.append('broken', startEntry('broken'));
    await store.append('broken', { type: 'step' });
    corruptMiddle(dir, 'broken');
    writeFileSync(path.join(dir, 'metrics.jsonl'), '{"cpu":0.5}\n');

    const listed = await fileStore(dir).list();
    expect(listed.map((run) => [run.runId, run.status])).toEqual([
      ['broken', 'unreadable'],
      ['waiting', 'running'],
    ]);
    const waiting = await approvals(fileStore(dir)).list();
    expect(waiting.map((pending) => [pending.runId, pending.callId])).toEqual([['waiting', 'r1']]);
  });
});
