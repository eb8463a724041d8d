import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CRASH_COUNTEREXAMPLES } from './counterexamples.js';
import { checkCrash } from './crash.js';
import { crashProperty, formatViolations, property, settingsFromEnv } from './properties.js';

// SPEC Q6: seeded property tests over createChain and createToolLoop. FUZZ_SEED / FUZZ_RUNS
// change the seed and the runs per property; `npm run fuzz -- --runs 10000 --seed N` runs
// long and counts violations per invariant (test/fuzz/run.ts). A failure prints the shrunk
// scenario with the seed and path that replay it.
//
// Crash mode (crash.ts; FUZZ_CRASH_RUNS, `npm run fuzz -- --crash`): each run is a durable
// run crashed at a random point of its journal and resumed by a fresh chain or loop; some
// add a fault on a real fileStore (faults.ts: the store failing or stalling at an append, a
// process killed mid-line while taking the run over, resumers racing). The counterexamples it
// found of bugs in src/ are kept (counterexamples.ts): they fail until fixed.

const settings = settingsFromEnv();

async function checkAll<T>(prop: fc.IAsyncProperty<[T]>, runs: number) {
  const details = await fc.check(prop, {
    seed: settings.seed,
    numRuns: runs,
    // A hung run costs the bound each time shrinking retries it: stop shrinking after a
    // while and report the smallest counterexample found so far.
    skipAllAfterTimeLimit: 60_000,
  });
  if (details.failed) throw new Error(fc.defaultReportMessage(details));
  // Every run was made: a slow machine must not pass the property on a few runs.
  expect(details.numRuns).toBe(runs);
}

describe('fuzz (SPEC Q6)', () => {
  for (const [name, runs] of [
    ['chain', settings.chainRuns],
    ['loop', settings.loopRuns],
  ] as const) {
    it(`${name}: every run keeps the invariants`, async () => {
      console.log(`fuzz ${name}: seed=${settings.seed} runs=${runs}`);
      await checkAll(property(name), runs);
    }, 180_000);
  }
});

describe('fuzz, crash mode: durable runs crashed and resumed', () => {
  for (const [name, runs] of [
    ['chain', settings.chainCrashRuns],
    ['loop', settings.loopCrashRuns],
  ] as const) {
    it(`${name}: crashed anywhere in its journal and resumed, every run keeps the invariants`, async () => {
      console.log(`fuzz ${name} (crash mode): seed=${settings.seed} runs=${runs}`);
      await checkAll(crashProperty(name), runs);
    }, 180_000);
  }
});

describe('fuzz, crash mode: the counterexamples found (src bugs; each fails until fixed)', () => {
  for (const { name, crashCase } of CRASH_COUNTEREXAMPLES) {
    it(name, async () => {
      expect(formatViolations(await checkCrash(crashCase))).toBe('');
    });
  }
});
