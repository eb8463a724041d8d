import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { property, settingsFromEnv } from './properties.js';

// SPEC Q6: seeded property tests over createChain and createToolLoop. FUZZ_SEED / FUZZ_RUNS
// change the seed and the runs per property; `npm run fuzz -- --runs 10000 --seed N` runs
// long and counts violations per invariant (test/fuzz/run.ts). A failure prints the shrunk
// scenario with the seed and path that replay it.

const settings = settingsFromEnv();

describe('fuzz (SPEC Q6)', () => {
  for (const [name, runs] of [
    ['chain', settings.chainRuns],
    ['loop', settings.loopRuns],
  ] as const) {
    it(`${name}: every run keeps the invariants`, async () => {
      console.log(`fuzz ${name}: seed=${settings.seed} runs=${runs}`);
      const details = await fc.check(property(name), {
        seed: settings.seed,
        numRuns: runs,
        // A hung run costs the bound each time shrinking retries it: stop shrinking after a
        // while and report the smallest counterexample found so far.
        skipAllAfterTimeLimit: 60_000,
      });
      if (details.failed) throw new Error(fc.defaultReportMessage(details));
      // Every run was made: a slow machine must not pass the property on a few runs.
      expect(details.numRuns).toBe(runs);
    }, 180_000);
  }
});
