// restateStore's batching (src/restate/append-batches.ts) under every interleaving fast-check's
// scheduler draws: appends to three runs arriving between the steps of requests that take
// any time and that the server may refuse. What a journal must never get: an entry out of
// order, an entry acknowledged but not kept (or kept but refused), or a hole, a later entry
// kept after an earlier one was refused while it waited.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppendBatches } from '../../src/restate/append-batches.js';
import { settingsFromEnv } from './properties.js';

const settings = settingsFromEnv();

const operation = fc.record({
  run: fc.constantFrom('a', 'b', 'c'),
  /** The server refuses any request that carries this line. */
  refused: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
  /** Scheduler steps to let happen before this append. */
  stepsBefore: fc.nat({ max: 3 }),
});

describe('fuzz: restateStore append batching (SPEC Q6)', () => {
  it('keeps each run in order, acknowledges exactly what was kept, and leaves no hole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        fc.array(operation, { maxLength: 40 }),
        async (scheduler, operations) => {
          const kept = new Map<string, string[]>();
          const refusedLines = new Set<string>();
          let clock = 0;
          const addedAt = new Map<string, number>();
          const rejectedAt = new Map<string, number>();
          // Each request takes as long as the scheduler says (its task never fails: the
          // refusal comes after it, as the server's answer).
          const send = async (runId: string, lines: readonly string[]) => {
            await scheduler.schedule(Promise.resolve(), `send ${runId} ${lines.join(',')}`);
            if (lines.some((line) => refusedLines.has(line))) throw new Error('refused');
            kept.set(runId, [...(kept.get(runId) ?? []), ...lines]);
          };
          const batches = new AppendBatches(send, () => scheduler.schedule(Promise.resolve()));
          const outcomes: Promise<'acked' | 'rejected'>[] = [];
          const calls: { run: string; line: string }[] = [];
          for (const [index, op] of operations.entries()) {
            for (let step = 0; step < op.stepsBefore && scheduler.count() > 0; step++) {
              await scheduler.waitOne();
            }
            const line = `${op.run}${index}`;
            if (op.refused) refusedLines.add(line);
            addedAt.set(line, ++clock);
            calls.push({ run: op.run, line });
            outcomes.push(
              batches.add(op.run, line).then(
                () => 'acked',
                () => {
                  rejectedAt.set(line, ++clock);
                  return 'rejected';
                },
              ),
            );
          }
          // Until every append is answered: a request's continuation may schedule the next
          // one a few promise hops after the scheduler released the last task.
          let answered = false;
          const all = Promise.all(outcomes).finally(() => {
            answered = true;
          });
          while (!answered) {
            if (scheduler.count() > 0) await scheduler.waitAll();
            else await new Promise((resolve) => setTimeout(resolve, 0));
          }
          const results = await all;

          for (const run of ['a', 'b', 'c']) {
            const ofRun = calls.filter((call) => call.run === run);
            const keptLines = kept.get(run) ?? [];
            // In call order, and acknowledged exactly when kept.
            expect(keptLines).toEqual(
              ofRun.filter((call) => keptLines.includes(call.line)).map((call) => call.line),
            );
            for (const call of ofRun) {
              const acked = results[calls.indexOf(call)] === 'acked';
              expect(acked, `${call.line} acknowledged iff kept`).toBe(
                keptLines.includes(call.line),
              );
            }
            // No hole: a line kept after a refused earlier one was appended after the refusal.
            for (const [k, later] of ofRun.entries()) {
              if (!keptLines.includes(later.line)) continue;
              for (const earlier of ofRun.slice(0, k)) {
                if (keptLines.includes(earlier.line)) continue;
                expect(
                  (addedAt.get(later.line) ?? 0) > (rejectedAt.get(earlier.line) ?? Infinity),
                  `${later.line} kept though ${earlier.line} before it was refused after it was appended`,
                ).toBe(true);
              }
            }
          }
        },
      ),
      { seed: settings.seed, numRuns: 300, timeout: 2_000 },
    );
  }, 60_000);
});
