import { mkdtemp, rm, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type ChainResult, fileStore, type JournalStore, memoryStore } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { benchChain, chainRun } from './chain.js';
import { fmt, median, medianMicros, medianMicrosAround, type Row } from './measure.js';
import { ANSWER, STEPS, WorkloadModel } from './workload.js';

// Durable runs (issue 15): what journaling costs a chain step with each store, against the
// same run not journaled, and what resuming a run from its journal costs. Every durable run
// gets its own id and is deleted once timed, so the stores stay empty from run to run.

const LONG_STEPS = 50; // 49 steps that each call one tool, then the answer
const TMPFS_MAGIC = 0x01021994;

/** µs per model step of the loop workload's chain run, with `store` (durable) or without. */
interface Way {
  readonly name: string;
  readonly runsPerRound: number;
  readonly store: JournalStore | undefined;
}

/**
 * µs per model step of each way, interleaved as measureLoops does: a warm-up round, then five
 * rounds in which the ways take turns, the median of all of a way's runs.
 */
async function perStepMicros(ways: readonly Way[]): Promise<Map<string, number>> {
  const model = new WorkloadModel();
  let next = 0;
  const timedRun = async (store: JournalStore | undefined) => {
    const runId = `step-${next++}`;
    const start = process.hrtime.bigint();
    await chainRun(model, store && { runId, store });
    const micros = Number(process.hrtime.bigint() - start) / 1000 / STEPS;
    await store?.delete(runId);
    return micros;
  };
  for (const way of ways) for (let i = 0; i < way.runsPerRound; i++) await timedRun(way.store);
  const samples = new Map<string, number[]>(ways.map((way) => [way.name, []]));
  for (let round = 0; round < 5; round++) {
    for (const way of ways) {
      const times = samples.get(way.name) as number[];
      for (let i = 0; i < way.runsPerRound; i++) times.push(await timedRun(way.store));
    }
  }
  return new Map(ways.map((way) => [way.name, median(samples.get(way.name) as number[])]));
}

/** Entries one run of the loop workload journals (each one a write, and for fileStore an fsync). */
async function entriesPerRun(): Promise<number> {
  const store = memoryStore();
  await chainRun(new WorkloadModel(), { runId: 'count', store });
  return ((await store.read('count')) ?? []).length;
}

const ratio = (durable: number, plain: number) =>
  `${fmt(durable / plain)}× (${durable >= plain ? '+' : ''}${fmt((durable / plain - 1) * 100, 0)} %)`;

export async function durableRows(): Promise<Row[]> {
  const dir = await mkdtemp(path.join(tmpdir(), 'statecraft-bench-'));
  try {
    const onTmpfs = (await statfs(dir)).type === TMPFS_MAGIC;
    const where = onTmpfs ? `${tmpdir()} is tmpfs: its fsyncs cost nothing` : `in ${tmpdir()}`;
    return [...(await stepRows(dir, where)), ...(await resumeRows(dir, where))];
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Rows 1–2: a chain step plain, durable in memory, durable on disk. */
async function stepRows(dir: string, where: string): Promise<Row[]> {
  const entries = await entriesPerRun();
  const PLAIN = 'plain run';
  const MEMORY = 'durable, memoryStore()';
  const FILE = 'durable, fileStore(tmpdir), one fsync per journal entry';
  const perStep = await perStepMicros([
    { name: PLAIN, runsPerRound: 100, store: undefined },
    { name: MEMORY, runsPerRound: 100, store: memoryStore() },
    { name: FILE, runsPerRound: 20, store: fileStore(dir) },
  ]);
  const plain = perStep.get(PLAIN) as number;
  const memory = perStep.get(MEMORY) as number;
  const file = perStep.get(FILE) as number;
  return [
    {
      measure: `chain per step, ${PLAIN}`,
      value: `${fmt(plain)} µs`,
      note: `median of 500 runs of ${STEPS} steps, interleaved with the durable ones`,
    },
    {
      measure: `chain per step, ${MEMORY}`,
      value: `${fmt(memory)} µs`,
      note: `median of 500 runs; ${entries} journal entries per run`,
    },
    {
      measure: 'memoryStore() run ÷ plain run, per step',
      value: ratio(memory, plain),
      note: 'issue 15 target: at most 10 % over a plain run',
    },
    {
      measure: `chain per step, ${FILE}`,
      value: `${fmt(file)} µs`,
      note: `median of 100 runs; ${entries} fsyncs per run, ${where}`,
    },
    {
      measure: 'fileStore run ÷ plain run, per step (fsyncs included)',
      value: ratio(file, plain),
      note: 'dominated by the disk: compare on the same machine only',
    },
    {
      measure: 'fileStore: µs per journal entry (open, append, fsync, close)',
      value: `${fmt(((file - plain) * STEPS) / entries, 1)} µs`,
      note: `(fileStore run − plain run) ÷ ${entries} entries`,
    },
  ];
}

/** Row 3: a 50-step run fresh, and resumed from its journal when finished and when crashed. */
async function resumeRows(dir: string, where: string): Promise<Row[]> {
  const model = new WorkloadModel(undefined, LONG_STEPS - 1);
  const chain = benchChain(model, LONG_STEPS + 1);
  const input = `Echo ${LONG_STEPS - 1} numbers.`;
  const checked = (result: ChainResult<{ done: boolean }>) => {
    if (JSON.stringify(result.result) !== ANSWER)
      throw new Error('the bench chain did not finish its 50-step workload');
  };
  const plain = await medianMicros(async () => checked(await chain.invoke(input)), 100);
  const rows: Row[] = [
    {
      measure: `${LONG_STEPS}-step run, plain`,
      value: `${fmt(plain / 1000)} ms`,
      note: `median of 100 runs; ${fmt(plain / LONG_STEPS)} µs per step`,
    },
  ];
  const stores = [
    { name: 'memoryStore()', store: memoryStore(), reopen: (s: JournalStore) => s, samples: 50 },
    // A resumed run is a new process's: a new fileStore over the same directory.
    { name: 'fileStore(tmpdir)', store: fileStore(dir), reopen: () => fileStore(dir), samples: 15 },
  ];
  for (const { name, store, reopen, samples } of stores) {
    let next = 0;
    const freshId = async () => `long-${next++}`;
    const fresh = await medianMicrosAround(
      freshId,
      async (runId) => checked(await chain.invoke(input, { runId, store })),
      (runId) => store.delete(runId),
      samples,
    );
    await chain.invoke(input, { runId: 'finished', store });
    const journal = (await store.read('finished')) ?? [];
    const finished = await medianMicros(
      async () => checked(await chain.resume('finished', { store })),
      50,
    );
    // The crash: while the run's middle tool call ran (its intent journaled, not its result).
    const middleCall = Math.ceil((LONG_STEPS - 1) / 2);
    const cut = indexOfNth(journal, (entry) => entry.type === 'call', middleCall) + 1;
    const crashed = await medianMicrosAround(
      async () => {
        const runId = `crashed-${next++}`;
        await appendAll(store, runId, journal.slice(0, cut));
        return runId;
      },
      async (runId) => checked(await chain.resume(runId, { store: reopen(store) })),
      (runId) => store.delete(runId),
      samples,
    );
    rows.push(
      {
        measure: `${LONG_STEPS}-step run, durable, ${name}`,
        value: `${fmt(fresh / 1000)} ms`,
        note: `median of ${samples} runs; ${journal.length} journal entries${name.startsWith('file') ? `, each fsynced, ${where}` : ''}`,
      },
      {
        measure: `resume a finished ${LONG_STEPS}-step run, ${name}`,
        value: `${fmt(finished / 1000)} ms`,
        note: `median of 50; replays all ${journal.length} entries, no call: ${fmt(finished / LONG_STEPS)} µs per step, ${fmt(finished / plain)}× the plain run`,
      },
      {
        measure: `resume a ${LONG_STEPS}-step run crashed in tool call ${middleCall}, ${name}`,
        value: `${fmt(crashed / 1000)} ms`,
        note: `median of ${samples}; replays ${cut} of ${journal.length} entries, reissues that call, runs ${LONG_STEPS - middleCall} model steps live (${fmt(crashed / fresh)}× the fresh durable run)`,
      },
    );
  }
  return rows;
}

function indexOfNth(
  entries: readonly JournalEntry[],
  matches: (entry: JournalEntry) => boolean,
  n: number,
): number {
  let seen = 0;
  const index = entries.findIndex((entry) => matches(entry) && ++seen === n);
  if (index < 0) throw new Error(`the journal has fewer than ${n} such entries`);
  return index;
}

/** A journal prefix copied under another run id: what a crash after its last entry leaves. */
async function appendAll(
  store: JournalStore,
  runId: string,
  entries: readonly JournalEntry[],
): Promise<void> {
  for (const entry of entries)
    await store.append(runId, entry.type === 'start' ? { ...entry, runId } : entry);
}
