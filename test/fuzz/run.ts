import fc from 'fast-check';
import { type CrashCase, checkCrash } from './crash.js';
import {
  ALL_INVARIANTS,
  checkScenario,
  INVARIANTS,
  type Invariant,
  type Violation,
} from './invariants.js';
import {
  CRASH_PROPERTIES,
  crashProperty,
  PROPERTIES,
  type PropertyName,
  property,
  settingsFromEnv,
} from './properties.js';
import type { Scenario } from './scenario.js';

// `npm run fuzz -- --runs 10000 --seed N [--only chain|loop] [--no-shrink] [--crash]`: runs
// both properties long, counts violations per invariant (every run, not stopping at the
// first), prints a summary line per invariant, then for each broken invariant the first
// failing run shrunk to a small counterexample (replayed from its seed and path). Exits 1 on
// any violation. `--crash`: crash mode (crash.ts), each run a durable run crashed at a random
// point of its journal and resumed, with the crash invariants counted too.

function parseArgs(argv: readonly string[]) {
  const env = settingsFromEnv();
  const args = {
    runs: undefined as number | undefined,
    seed: env.seed,
    only: undefined as PropertyName | undefined,
    shrink: true,
    crash: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) throw new Error(`${arg} needs a value`);
      return next;
    };
    if (arg === '--runs') args.runs = Number(value());
    else if (arg === '--seed') args.seed = Number(value());
    else if (arg === '--only') args.only = value() as PropertyName;
    else if (arg === '--no-shrink') args.shrink = false;
    else if (arg === '--crash') args.crash = true;
    else
      throw new Error(
        `unknown argument ${arg}; use --runs N --seed N [--only chain|loop] [--no-shrink] [--crash]`,
      );
  }
  for (const [name, n] of [
    ['--runs', args.runs],
    ['--seed', args.seed],
  ] as const) {
    if (n !== undefined && !Number.isInteger(n)) throw new Error(`${name} must be an integer`);
  }
  if (args.only && !(args.only in PROPERTIES)) throw new Error('--only must be chain or loop');
  return {
    ...args,
    chainRuns: args.runs ?? (args.crash ? env.chainCrashRuns : env.chainRuns),
    loopRuns: args.runs ?? (args.crash ? env.loopCrashRuns : env.loopRuns),
  };
}

interface Tally {
  count: number;
  /** The index of the first run that broke it: fast-check's path to replay that run. */
  firstRun: number;
  messages: Map<string, number>;
}

async function tally(name: PropertyName, runs: number, seed: number, crash: boolean) {
  const tallies = new Map<Invariant, Tally>();
  const outcomes = new Map<string, number>();
  const onOutcome = (o: string) => outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
  let index = 0;
  const started = performance.now();
  const check = async (violations: Promise<Violation[]>) => {
    const run = index++;
    for (const v of await violations) {
      const t = tallies.get(v.invariant) ?? { count: 0, firstRun: run, messages: new Map() };
      tallies.set(v.invariant, t);
      t.count++;
      // Counted per run, by the message's wording without numbers (ids, times, tokens).
      const key = v.message.replace(/\d+/g, 'N');
      t.messages.set(key, (t.messages.get(key) ?? 0) + 1);
    }
    if ((run + 1) % 500 === 0) console.error(`  ${name}: ${run + 1}/${runs} runs`);
    return true;
  };
  const settings = { seed, numRuns: runs };
  if (crash) {
    const each = (c: CrashCase) => check(checkCrash(c, onOutcome));
    await fc.check(fc.asyncProperty(CRASH_PROPERTIES[name], each), settings);
  } else {
    const each = (s: Scenario) => check(checkScenario(s, onOutcome));
    await fc.check(fc.asyncProperty(PROPERTIES[name], each), settings);
  }
  return { tallies, outcomes, ms: performance.now() - started };
}

async function shrink(
  name: PropertyName,
  invariant: Invariant,
  seed: number,
  run: number,
  crash: boolean,
) {
  const settings = { seed, path: String(run), interruptAfterTimeLimit: 60_000 };
  const details = crash
    ? await fc.check(crashProperty(name, invariant), settings)
    : await fc.check(property(name, invariant), settings);
  if (!details.failed) return '  (did not reproduce when replayed: timing-dependent)';
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : '';
  return [
    `  replay: FUZZ_SEED=${seed} with fast-check { seed: ${seed}, path: "${details.counterexamplePath}" }`,
    `  counterexample: ${fc.stringify(details.counterexample?.[0])}`,
    `  ${error.split('\n').join('\n  ')}`,
  ].join('\n');
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const names = (Object.keys(PROPERTIES) as PropertyName[]).filter(
    (n) => !args.only || n === args.only,
  );
  let total = 0;
  const reports: string[] = [];
  for (const name of names) {
    const runs = name === 'chain' ? args.chainRuns : args.loopRuns;
    const mode = args.crash ? ' (crash mode)' : '';
    console.log(`fuzz ${name}${mode}: seed=${args.seed} runs=${runs}`);
    const { tallies, outcomes, ms } = await tally(name, runs, args.seed, args.crash);
    const seen = [...outcomes].sort((a, b) => b[1] - a[1]).map(([o, n]) => `${o} ${n}`);
    console.log(`outcomes: ${seen.join(', ')}`);
    const invariants = Object.keys(args.crash ? ALL_INVARIANTS : INVARIANTS) as Invariant[];
    for (const invariant of invariants) {
      const t = tallies.get(invariant);
      console.log(
        `invariant ${name}/${invariant}: ${t?.count ?? 0} violations in ${runs} runs (seed ${args.seed})`,
      );
      if (!t) continue;
      total += t.count;
      // Crash mode's messages also say where the crash fell: more kinds of them.
      const top = [...t.messages].sort((a, b) => b[1] - a[1]).slice(0, args.crash ? 10 : 5);
      let report = `${name}/${invariant} (${ALL_INVARIANTS[invariant]}), first in run ${t.firstRun}:\n`;
      report += top.map(([m, n]) => `  ${n}× ${m}`).join('\n');
      if (args.shrink)
        report += `\n${await shrink(name, invariant, args.seed, t.firstRun, args.crash)}`;
      reports.push(report);
    }
    console.log(`(${name}: ${(ms / 1000).toFixed(1)} s)`);
  }
  if (reports.length) console.log(`\n${reports.join('\n\n')}`);
  console.log(`\n${total} violation(s) in total`);
  // Leaked timers or tools of a broken run must not keep the process alive.
  process.exit(total > 0 ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(2);
});
