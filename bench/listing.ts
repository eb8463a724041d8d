import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileStore } from 'statecraft';
import { JOURNAL_FORMAT_VERSION } from 'statecraft/durable';
import { fmt, median, type Row } from './measure.js';

// fileStore's list() over 10,000 runs (issue 23: "10,000 runs listed in well under a second";
// it took 6.3 s when list() read every journal). The journals are written as a finished run
// leaves them (a start, a few entries, an end), 1 % of them still running, and listed by a
// fresh store, as another process would: first with no index (every journal read, the index
// written as it goes), then from the index.

const RUNS = 10_000;
const RUNNING_EVERY = 100;

function journal(runId: string, index: number): string {
  const entries = [
    {
      type: 'start',
      version: JOURNAL_FORMAT_VERSION,
      runId,
      kind: 'chain',
      startedAt: 1_700_000_000_000 + index,
      input: `Question ${index}: ${'words '.repeat(40)}`,
    },
    { type: 'request', seq: 1, effect: 'callModel', hash: 'a'.repeat(64) },
    { type: 'answer', seq: 1, event: { type: 'callModel.done', output: 'x'.repeat(400) } },
    ...(index % RUNNING_EVERY === 0 ? [] : [{ type: 'end', status: 'succeeded' }]),
  ];
  return entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
}

async function timedList(dir: string): Promise<{ ms: number; runs: number }> {
  const start = process.hrtime.bigint();
  const runs = await fileStore(dir).list();
  return { ms: Number(process.hrtime.bigint() - start) / 1e6, runs: runs.length };
}

export async function listingRows(): Promise<Row[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'statecraft-bench-list-'));
  try {
    for (let from = 0; from < RUNS; from += 500) {
      await Promise.all(
        Array.from({ length: Math.min(500, RUNS - from) }, (_, i) => {
          const runId = `run-${from + i}`;
          return writeFile(path.join(dir, `${runId}.jsonl`), journal(runId, from + i));
        }),
      );
    }
    const cold = await timedList(dir);
    if (cold.runs !== RUNS) throw new Error(`list() found ${cold.runs} of ${RUNS} runs`);
    const warm: number[] = [];
    for (let i = 0; i < 5; i++) warm.push((await timedList(dir)).ms);
    const running = RUNS / RUNNING_EVERY;
    return [
      {
        measure: `fileStore list() of ${RUNS} runs, no index yet`,
        value: `${fmt(cold.ms)} ms`,
        note: 'every journal read once; the index is written as it goes',
      },
      {
        measure: `fileStore list() of ${RUNS} runs, from the index`,
        value: `${fmt(median(warm))} ms`,
        note: `median of 5, a fresh store each; the ${running} running runs are still read from their journals`,
      },
    ];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
