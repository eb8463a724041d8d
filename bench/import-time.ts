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

async function importMillis(specifiers: readonly string[]): Promise<number> {
  const imports = specifiers.map((s) => `await import(${JSON.stringify(s)});`).join(' ');
  const script = `const t = performance.now(); ${imports} console.log(performance.now() - t);`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return Number(stdout.trim());
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
): Promise<{ statecraft: number; baseline: number }> {
  const statecraft: number[] = [];
  const baseline: number[] = [];
  for (let i = 0; i < processes; i++) {
    baseline.push(await importMillis(['xstate', 'zod']));
    statecraft.push(await importMillis(['statecraft']));
  }
  return { statecraft: median(statecraft), baseline: median(baseline) };
}

export async function importTimeRows(): Promise<Row[]> {
  const { statecraft, baseline } = await importTimes();
  const ratio = statecraft / baseline;
  const [ownModules, baselineModules] = [
    await modulesLoaded(['statecraft']),
    await modulesLoaded(['xstate', 'zod']),
  ];
  return [
    {
      measure: "import('statecraft')",
      value: `${fmt(statecraft, 0)} ms`,
      note: `median of ${PROCESSES} fresh processes, from dist`,
    },
    {
      measure: "import('xstate') + import('zod') alone",
      value: `${fmt(baseline, 0)} ms`,
      note: 'same processes, alternating',
    },
    {
      measure: 'statecraft ÷ xstate + zod',
      value: `${fmt(ratio, 2)}×`,
      note: `target ≤ ${TARGET_RATIO}× (${ratio <= TARGET_RATIO ? 'met' : 'NOT met'})`,
    },
    {
      measure: "modules import('statecraft') loads",
      value: `${ownModules}`,
      note: `xstate + zod alone: ${baselineModules}; node's loader costs per module`,
    },
  ];
}
