// `npm run bench:restate` (issue 17): statecraft on Restate, started for real on 127.0.0.1.
// Runs per second over 500 runs with 1 and 2 worker processes, run latency under that load
// and alone, and how long a worker's runs take to continue elsewhere after its kill -9. For
// scale, the same 500 runs in one process on a fileStore. Run from source (tsx): the workers
// and their agents are the Restate tests' own (test/restate/).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileStore } from 'statecraft';
import type { RestateRuns } from 'statecraft/restate';
import { type Deployment, startDeployment } from '../test/restate/deployment.js';
import { inputOf, surveyLoop, tripChain } from '../test/restate/workload.js';
import { fmt, median, printTable } from './measure.js';

const RUNS = 500;
const KILL_ROUNDS = 3;

type Agent = 'trip' | 'survey';
const agentOf = (i: number): Agent => (i % 2 === 0 ? 'trip' : 'survey');

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

/** Submits `count` runs at once and waits for all: runs/s, and each run's submit-to-result ms. */
async function load(runs: RestateRuns, prefix: string, count: number) {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const begin = performance.now();
      await runs.submit(`${prefix}-${i}`, agentOf(i), inputOf(agentOf(i), i));
      await runs.result(`${prefix}-${i}`, { timeoutMs: 300_000 });
      latencies.push(performance.now() - begin);
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { perSecond: count / seconds, latencies };
}

/** One run at a time: what a run costs with nothing else going on. */
async function alone(runs: RestateRuns, prefix: string, count: number): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i++) {
    const begin = performance.now();
    await runs.submit(`${prefix}-${i}`, agentOf(i), inputOf(agentOf(i), i));
    await runs.result(`${prefix}-${i}`);
    latencies.push(performance.now() - begin);
  }
  return latencies;
}

async function throughput(processes: number) {
  const deployment = await startDeployment({ processes });
  try {
    const runs = deployment.runs();
    await load(runs, 'warm', 40);
    const loaded = await load(runs, 'load', RUNS);
    const single = await alone(runs, 'alone', 30);
    return { ...loaded, single };
  } finally {
    await deployment.stop();
  }
}

/**
 * Kills a worker with calls in flight and times how long until a run that was on it makes its
 * next tool call on another worker: Restate noticing the dead connection, re-dispatching, and
 * the segment resuming its journal. Median over KILL_ROUNDS kills.
 */
async function killToContinuation(
  runsPerRound: number,
  effectMs: number,
): Promise<{ ms: number[]; repeated: number; overRepeated: number }> {
  const deployment = await startDeployment({ processes: 2, effectMs });
  const gaps: number[] = [];
  let repeated = 0;
  let overRepeated = 0;
  try {
    const runs = deployment.runs();
    for (let round = 0; round < KILL_ROUNDS; round++) {
      const prefix = `kill${round}`;
      const ids = Array.from({ length: runsPerRound }, (_, i) => i);
      const submitted = Promise.all(
        ids.map((i) => runs.submit(`${prefix}-${i}`, 'trip', inputOf('trip', 1000 * round + i))),
      );
      const { victim, killedAt } = await killBusyWorker(deployment, prefix, runsPerRound);
      await submitted;
      await Promise.all(ids.map((i) => runs.result(`${prefix}-${i}`, { timeoutMs: 120_000 })));
      const lines = deployment.effects().filter((line) => line.key.startsWith(`${prefix}-`));
      const runOf = (key: string) => key.split(':')[0] ?? key;
      const onVictim = new Set(lines.filter((l) => l.pid === victim).map((l) => runOf(l.key)));
      const continued = lines.filter(
        (l) =>
          l.phase === 'start' && l.at >= killedAt && l.pid !== victim && onVictim.has(runOf(l.key)),
      );
      const first = Math.min(...continued.map((l) => l.at));
      if (Number.isFinite(first)) gaps.push(first - killedAt);
      const starts = new Map<string, number>();
      for (const l of lines)
        if (l.phase === 'start') starts.set(l.key, (starts.get(l.key) ?? 0) + 1);
      repeated += [...starts.values()].filter((n) => n > 1).length;
      overRepeated += [...starts.values()].filter((n) => n > 2).length;
    }
    return { ms: gaps, repeated, overRepeated };
  } finally {
    await deployment.stop();
  }
}

async function killBusyWorker(deployment: Deployment, prefix: string, runsPerRound: number) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const lines = deployment.effects().filter((line) => line.key.startsWith(`${prefix}-`));
    const open = new Map<string, number>();
    for (const line of lines) {
      if (line.phase === 'start') open.set(line.key, line.pid);
      else open.delete(line.key);
    }
    const victim = lines.length > runsPerRound ? [...open.values()][0] : undefined;
    if (victim !== undefined) {
      const killedAt = Date.now();
      process.kill(victim, 'SIGKILL');
      return { victim, killedAt };
    }
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error('no worker had a call in flight');
}

/** The same 500 runs in this process, journaled in a fileStore: one machine, no Restate. */
async function oneProcessFileStore(): Promise<number> {
  const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-bench-file-'));
  try {
    const store = fileStore(dir);
    const trip = tripChain();
    const survey = surveyLoop();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: RUNS }, (_, i) => {
        const options = { runId: `file-${i}`, store };
        return agentOf(i) === 'trip'
          ? trip.invoke(inputOf('trip', i), options)
          : survey.invoke(inputOf('survey', i), options);
      }),
    );
    return RUNS / ((performance.now() - started) / 1000);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const one = await throughput(1);
const two = await throughput(2);
const light = await killToContinuation(10, 100);
const loaded = await killToContinuation(60, 20);
const file = await oneProcessFileStore();

const ms = (value: number) => `${fmt(value)} ms`;
printTable(
  `Restate (issue 17): ${RUNS} runs submitted at once (half 3-step chains, half tool loops), scripted model`,
  [
    { measure: 'runs/s, 1 worker process', value: fmt(one.perSecond) },
    { measure: 'runs/s, 2 worker processes', value: fmt(two.perSecond) },
    { measure: 'scaling, 2 processes over 1', value: `${fmt(two.perSecond / one.perSecond)}×` },
    {
      measure: 'run latency under that load, p50 / p99 (2 processes)',
      value: `${ms(percentile(two.latencies, 0.5))} / ${ms(percentile(two.latencies, 0.99))}`,
    },
    {
      measure: 'run latency alone, p50 / p99 (2 processes, 30 runs one at a time)',
      value: `${ms(percentile(two.single, 0.5))} / ${ms(percentile(two.single, 0.99))}`,
    },
    ...[
      { kills: light, load: '10 runs in flight' },
      { kills: loaded, load: '60 runs in flight, CPU saturated' },
    ].flatMap(({ kills, load }) => [
      {
        measure: `kill -9 of a busy worker → its runs' next call elsewhere, ${load} (median of ${kills.ms.length})`,
        value: `${ms(median(kills.ms))} (each: ${kills.ms.map((m) => fmt(m, 0)).join(', ')})`,
      },
      {
        measure: `  tool calls in flight at those ${kills.ms.length} kills, run once more elsewhere (run more than once more)`,
        value: `${kills.repeated} (${kills.overRepeated})`,
      },
    ]),
    {
      measure: `same ${RUNS} runs, one process, fileStore (no Restate)`,
      value: `${fmt(file)} runs/s`,
    },
  ],
);
