import fc from 'fast-check';
import { CRASH_CASES, type CrashCase, checkCrash } from './crash.js';
import { ALL_INVARIANTS, checkScenario, type Invariant, type Violation } from './invariants.js';
import { chainScenarioArb, loopScenarioArb, type Scenario } from './scenario.js';

// The properties and their settings, shared by the vitest suite (fuzz.test.ts) and the
// long-run script (run.ts): a run keeps the invariants; in crash mode (crash.ts), a durable
// run crashed anywhere and resumed keeps them too.

export const DEFAULT_SEED = 20_260_613;

export interface FuzzSettings {
  readonly seed: number;
  readonly chainRuns: number;
  readonly loopRuns: number;
  /** Crash mode: each run is a durable run, its crash and two resumes. */
  readonly chainCrashRuns: number;
  readonly loopCrashRuns: number;
}

/**
 * FUZZ_SEED, FUZZ_RUNS (runs per property) and FUZZ_CRASH_RUNS (per crash property; default
 * FUZZ_RUNS) from the environment, else CI's defaults.
 */
export function settingsFromEnv(env = process.env): FuzzSettings {
  const seed = env.FUZZ_SEED ? Number(env.FUZZ_SEED) : DEFAULT_SEED;
  const runs = env.FUZZ_RUNS ? Number(env.FUZZ_RUNS) : undefined;
  const crashRuns = env.FUZZ_CRASH_RUNS ? Number(env.FUZZ_CRASH_RUNS) : runs;
  return {
    seed,
    chainRuns: runs ?? 200,
    loopRuns: runs ?? 150,
    chainCrashRuns: crashRuns ?? 100,
    loopCrashRuns: crashRuns ?? 80,
  };
}

export const PROPERTIES = {
  chain: chainScenarioArb as fc.Arbitrary<Scenario>,
  loop: loopScenarioArb as fc.Arbitrary<Scenario>,
} as const;
export type PropertyName = keyof typeof PROPERTIES;

export const CRASH_PROPERTIES = {
  chain: CRASH_CASES.chain as fc.Arbitrary<CrashCase>,
  loop: CRASH_CASES.loop as fc.Arbitrary<CrashCase>,
} as const;

export function formatViolations(violations: readonly Violation[]): string {
  return violations
    .map((v) => `invariant ${v.invariant} (${ALL_INVARIANTS[v.invariant]}): ${v.message}`)
    .join('\n');
}

function failOn(violations: readonly Violation[], only: Invariant | undefined): void {
  const kept = violations.filter((v) => only === undefined || v.invariant === only);
  if (kept.length) throw new Error(formatViolations(kept));
}

/**
 * The property: a run breaks no invariant (or, with `only`, not that one). Its failure
 * message names the invariants, and fast-check adds the shrunk scenario, seed and path.
 */
export function property(name: PropertyName, only?: Invariant) {
  return fc.asyncProperty(PROPERTIES[name], async (scenario) => {
    failOn(await checkScenario(scenario), only);
  });
}

/** Crash mode's property: a crashed and resumed durable run breaks no invariant. */
export function crashProperty(name: PropertyName, only?: Invariant) {
  return fc.asyncProperty(CRASH_PROPERTIES[name], async (crashCase) => {
    failOn(await checkCrash(crashCase), only);
  });
}
