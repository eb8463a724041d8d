import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { fmt, median, type Row } from './measure.js';

// What statecraft's types cost an app's type-checking (issue 24 item 6: one defineTool with a
// z.object cost about 77,000 type instantiations). Each fixture under bench/type-cost/ is a
// project of its own that imports 'statecraft' as an app does: no source condition, so the
// name resolves through package.json's exports to dist/*.d.ts (npm run bench builds first).
// `tsc --extendedDiagnostics --singleThreaded` counts the instantiations: one checker, so the
// count is the same on every run (with several, each checker counts the shared types again).
// The baseline fixture declares the quickstart's zod schemas without statecraft; its count is
// subtracted, so a row is what statecraft adds.

const TARGET = 5_000;
const RUNS = 5;
const TSC_TIMEOUT_MS = 120_000;

const execFileAsync = promisify(execFile);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// typescript's exports do not list its bin: find it from its package.json, as npx does.
const require = createRequire(import.meta.url);
const typescriptJson = require.resolve('typescript/package.json');
const tsc = path.join(
  path.dirname(typescriptJson),
  (require('typescript/package.json') as { bin: { tsc: string } }).bin.tsc,
);

interface Diagnostics {
  readonly instantiations: number;
  readonly checkMs: number;
  readonly totalMs: number;
}

function figure(output: string, label: string): string {
  const match = new RegExp(`^${label}:\\s+(\\S+)`, 'm').exec(output);
  if (!match?.[1]) throw new Error(`tsc --extendedDiagnostics printed no "${label}":\n${output}`);
  return match[1];
}

async function diagnose(fixture: string): Promise<Diagnostics> {
  const project = path.join(root, 'bench', 'type-cost', fixture);
  const args = [tsc, '-p', project, '--extendedDiagnostics', '--singleThreaded'];
  // tsc exits non-zero on a type error: the fixture must compile, or its count means nothing.
  const { stdout } = await execFileAsync(process.execPath, args, {
    cwd: root,
    timeout: TSC_TIMEOUT_MS,
  }).catch((error: Error & { stdout?: string }) => {
    throw new Error(`tsc failed on bench/type-cost/${fixture}:\n${error.stdout ?? error.message}`);
  });
  const seconds = (label: string) => Number.parseFloat(figure(stdout, label)) * 1000;
  return {
    instantiations: Number.parseInt(figure(stdout, 'Instantiations'), 10),
    checkMs: seconds('Check time'),
    totalMs: seconds('Total time'),
  };
}

/** The instantiation count (the same every run) and the median times of RUNS runs. */
async function measure(fixture: string): Promise<Diagnostics> {
  const runs: Diagnostics[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await diagnose(fixture));
  return {
    instantiations: (runs[0] as Diagnostics).instantiations,
    checkMs: median(runs.map((r) => r.checkMs)),
    totalMs: median(runs.map((r) => r.totalMs)),
  };
}

const count = (n: number) => n.toLocaleString('en-US');

export async function typeCostRows(): Promise<Row[]> {
  const baseline = await measure('baseline');
  const quickstart = await measure('quickstart');
  const app = await measure('app');
  const net = quickstart.instantiations - baseline.instantiations;
  return [
    {
      measure: 'quickstart: type instantiations statecraft adds',
      value: count(net),
      note: `target ≤ ${count(TARGET)}: ${net <= TARGET ? 'met' : 'MISSED'} (${count(quickstart.instantiations)} less the baseline's ${count(baseline.instantiations)})`,
    },
    {
      measure: 'quickstart: tsc check time / total time',
      value: `${fmt(quickstart.checkMs, 0)} / ${fmt(quickstart.totalMs, 0)} ms`,
      note: `median of ${RUNS}; the baseline: ${fmt(baseline.checkMs, 0)} / ${fmt(baseline.totalMs, 0)} ms`,
    },
    {
      measure: 'app of 7 files: type instantiations statecraft adds',
      value: count(app.instantiations - baseline.instantiations),
      note: '7 tools of nested zod objects, 2 chains (one with an outputSchema), a tool loop',
    },
    {
      measure: 'app of 7 files: tsc check time / total time',
      value: `${fmt(app.checkMs, 0)} / ${fmt(app.totalMs, 0)} ms`,
      note: `median of ${RUNS}; tsc --singleThreaded`,
    },
  ];
}
