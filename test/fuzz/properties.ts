import fc from 'fast-check';
import { checkScenario, INVARIANTS, type Invariant, type Violation } from './invariants.js';
import { chainScenarioArb, loopScenarioArb, type Scenario } from './scenario.js';

// The two properties and their settings, shared by the vitest suite (fuzz.test.ts) and the
// long-run script (run.ts).

export const DEFAULT_SEED = 20_260_613;

export interface FuzzSettings {
  readonly seed: number;
  readonly chainRuns: number;
  readonly loopRuns: number;
}

/** FUZZ_SEED and FUZZ_RUNS (runs per property) from the environment, else CI's defaults. */
export function settingsFromEnv(env = process.env): FuzzSettings {
  const seed = env.FUZZ_SEED ? Number(env.FUZZ_SEED) : DEFAULT_SEED;
  const runs = env.FUZZ_RUNS ? Number(env.FUZZ_RUNS) : undefined;
  return { seed, chainRuns: runs ?? 200, loopRuns: runs ?? 150 };
}

export const PROPERTIES = {
  chain: chainScenarioArb as fc.Arbitrary<Scenario>,
  loop: loopScenarioArb as fc.Arbitrary<Scenario>,
} as const;
export type PropertyName = keyof typeof PROPERTIES;

export function formatViolations(violations: readonly Violation[]): string {
  return violations
    .map((v) => `invariant ${v.invariant} (${INVARIANTS[v.invariant]}): ${v.message}`)
    .join('\n');
}

/**
 * The property: a run breaks no invariant (or, with `only`, not that one). Its failure
 * message names the invariants, and fast-check adds the shrunk scenario, seed and path.
 */
export function property(name: PropertyName, only?: Invariant) {
  return fc.asyncProperty(PROPERTIES[name], async (scenario) => {
    const violations = (await checkScenario(scenario)).filter(
      (v) => only === undefined || v.invariant === only,
    );
    if (violations.length) throw new Error(formatViolations(violations));
  });
}
