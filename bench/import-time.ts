import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fmt, median, type Row } from './measure.js';

// How long `import('statecraft')` takes in a fresh process, against importing its two big
// dependencies (xstate and zod) alone: the part of the wait statecraft adds is the ratio. Each
// figure is the median of PROCESSES fresh node processes, the two kinds alternating so a busy
// moment on the machine slows both alike. Timed inside each process from just before the import
// to just after, so node's own start-up is in neither figure. `statecraft` resolves through
// the package's own `exports`, to the built dist.

const PROCESSES = 10;
const TARGET_RATIO = 1.3;

const run = promisify(execFile);

interface ImportTime {
  /** Wall-clock milliseconds from just before the import to just after. */
  readonly wall: number;
  /** CPU milliseconds (user + system) the process spent meanwhile: steadier on a busy machine. */
  readonly cpu: number;
}

async function importTime(specifiers: readonly string[]): Promise<ImportTime> {
  const imports = specifiers.map((s) => `await import(${JSON.stringify(s)});`).join(' ');
  const script = `const t = performance.now(); const c = process.cpuUsage(); ${imports}
    const u = process.cpuUsage(c);
    console.log(JSON.stringify({ wall: performance.now() - t, cpu: (u.user + u.system) / 1000 }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return JSON.parse(stdout) as ImportTime;
}

// A resolve hook that writes every module URL the import resolves to LOAD_LOG, one a line.
const LOG_HOOK = `data:text/javascript,${encodeURIComponent(
  `import { appendFileSync } from 'node:fs';
   export async function resolve(specifier, context, next) {
     const resolved = await next(specifier, context);
     appendFileSync(process.env.LOAD_LOG, resolved.url + '\\n');
     return resolved;
   }`,
)}`;

/** How many modules (node: built-ins aside) importing `specifiers` loads, untimed. */
async function modulesLoaded(specifiers: readonly string[]): Promise<number> {
  const dir = await mkdtemp(path.join(tmpdir(), 'statecraft-bench-'));
  const log = path.join(dir, 'loaded.log');
  try {
    const imports = specifiers.map((s) => `await import(${JSON.stringify(s)});`).join(' ');
    const register = `import { register } from 'node:module'; register(${JSON.stringify(LOG_HOOK)});`;
    await run(process.execPath, ['--input-type=module', '-e', `${register} ${imports}`], {
      env: { ...process.env, LOAD_LOG: log },
    });
    const urls = new Set((await readFile(log, 'utf8')).split('\n'));
    return [...urls].filter((url) => url !== '' && !url.startsWith('node:')).length;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Median import times of `statecraft` and of xstate + zod, in ms, over fresh processes. */
export async function importTimes(
  processes = PROCESSES,
): Promise<{ statecraft: ImportTime; baseline: ImportTime }> {
  const statecraft: ImportTime[] = [];
  const baseline: ImportTime[] = [];
  for (let i = 0; i < processes; i++) {
    baseline.push(await importTime(['xstate', 'zod']));
    statecraft.push(await importTime(['statecraft']));
  }
  const medians = (times: readonly ImportTime[]): ImportTime => ({
    wall: median(times.map((t) => t.wall)),
    cpu: median(times.map((t) => t.cpu)),
  });
  return { statecraft: medians(statecraft), baseline: medians(baseline) };
}

export async function importTimeRows(): Promise<Row[]> {
  const { statecraft, baseline } = await importTimes();
  const ratio = statecraft.wall / baseline.wall;
  const [ownModules, baselineModules] = [
    await modulesLoaded(['statecraft']),
    await modulesLoaded(['xstate', 'zod']),
  ];
  return [
    {
      measure: "import('statecraft')",
      value: `${fmt(statecraft.wall, 0)} ms`,
      note: `median of ${PROCESSES} fresh processes, from dist; ${fmt(statecraft.cpu, 0)} ms of CPU`,
    },
    {
      measure: "import('xstate') + import('zod') alone",
      value: `${fmt(baseline.wall, 0)} ms`,
      note: `same, alternating with the above; ${fmt(baseline.cpu, 0)} ms of CPU`,
    },
    {
      measure: 'statecraft ÷ xstate + zod',
      value: `${fmt(ratio, 2)}×`,
      note: `target ≤ ${TARGET_RATIO}× (${ratio <= TARGET_RATIO ? 'met' : 'NOT met'}); in CPU time ${fmt(statecraft.cpu / baseline.cpu, 2)}×`,
    },
    {
      measure: "modules import('statecraft') loads",
      value: `${ownModules}`,
      note: `xstate + zod alone: ${baselineModules}; node's loader costs per module`,
    },
  ];
}
