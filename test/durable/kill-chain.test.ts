// kill -9 of a durable chain run. A child process (kill-chain-child.ts) runs the chain of
// kill-chain-workload.ts with a fileStore and is killed with SIGKILL at seeded points: during
// model calls, during tool calls (in the step of three concurrent calls too, some finished and
// some in flight), between steps, and after the run ended. A second process then resumes the
// run (resume(runId), or invoke with the same runId and input). Whatever the moment, the run
// ends as an uncrashed one, no call whose answer was journaled is made again, a call in flight
// is issued again once with the same idempotency key, and details() says which calls are which
// (kill-harness.ts checks what every durable run must do; this file the chain's own).
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import {
  type ChildOutput,
  type EffectLine,
  KILL_CALLS,
  KILL_RUN_ID,
  MODEL_STEPS,
} from './kill-chain-workload.js';
import { expectEffectsByIndex, journaled, type KillKind, killHarness } from './kill-harness.js';

const SEED = 20_260_412;

/**
 * The kinds of moments, each with the progress lines a kill can follow. Model calls last
 * MODEL_MS (60), tools TOOL_MS (c2 20, c3 60, c4 110, c1 and c5 40), the pause between steps
 * BETWEEN_STEPS_MS (60): every delay leaves tens of ms before the moment is over.
 */
const KINDS: readonly KillKind[] = [
  {
    kind: 'model',
    covers: 'during a model call (request journaled, no answer)',
    count: 3,
    anchors: [0, 1, 2, 3].map((step) => ({ marker: `model-start ${step}`, delay: [0, 20] })),
  },
  {
    kind: 'tool',
    covers: 'during the only tool call of a step (intent journaled, no result)',
    count: 2,
    anchors: [
      { marker: 'tool-start c1', delay: [0, 15] },
      { marker: 'tool-start c5', delay: [0, 15] },
    ],
  },
  {
    kind: 'tool-end',
    covers: 'as a tool call returns (side effect done, its result being journaled)',
    count: 1,
    anchors: [
      { marker: 'tool-done c1', delay: [0, 2] },
      { marker: 'tool-done c5', delay: [0, 2] },
    ],
  },
  {
    kind: 'concurrent',
    covers: 'in the step of three concurrent calls (c2 ends first, then c3, then c4)',
    count: 3,
    anchors: [
      { marker: 'tool-start c4', delay: [0, 5] }, // all three in flight
      { marker: 'tool-done c2', delay: [3, 15] }, // c2 finished, c3 and c4 in flight
      { marker: 'tool-done c3', delay: [3, 20] }, // c2 and c3 finished, c4 in flight
    ],
  },
  {
    kind: 'between',
    covers: "between steps (a tool step's answer on disk, next model call not made)",
    count: 3,
    anchors: [0, 1, 2].map((step) => ({ marker: `step-done ${step}`, delay: [0, 20] })),
  },
  {
    kind: 'handoff',
    covers: "as a model call's answer is journaled and its tool step starts",
    count: 1,
    anchors: [0, 1, 2].map((step) => ({ marker: `model-done ${step}`, delay: [0, 5] })),
  },
];

const { describeKillPoints } = killHarness<ChildOutput, EffectLine>({
  child: fileURLToPath(new URL('./kill-chain-child.ts', import.meta.url)),
  runId: KILL_RUN_ID,
  callIds: KILL_CALLS.map((call) => call.id),
  toolEffect: 'executeTools',
  tmpPrefix: 'statecraft-kill-chain-',
});

describeKillPoints({
  title: 'a durable chain run killed with SIGKILL',
  seed: SEED,
  kinds: KINDS,
  reference: ({ output }) => {
    expect(output.text).toBe('all done');
    expect(output.modelCalls.filter((call) => call.replayed || call.possiblyRepeated)).toEqual([]);
  },
  check: (outcome) => {
    const { before, output, reference, expect } = outcome;
    // The same final output as the uncrashed run.
    expect(output.text).toBe(reference.text);
    expect(output.transcript).toEqual(reference.transcript);

    // Model calls, by step: an answered one is not made again, the one in flight once.
    const steps = journaled(before, 'callModel', 'callModel.done');
    const answeredNotJournaled = expectEffectsByIndex(expect, outcome, {
      what: 'model call',
      count: MODEL_STEPS,
      ...steps,
      made: (lines, step, phase) =>
        lines.filter((line) => line.kind === 'model' && line.phase === phase && line.step === step)
          .length,
    });
    expect(output.modelCalls).toEqual(
      Array.from({ length: MODEL_STEPS }, (_, step) => ({
        replayed: step < steps.answered,
        possiblyRepeated: step >= steps.answered && step < steps.requested,
      })),
    );
    return answeredNotJournaled > 0 ? '; model call done, not journaled' : '';
  },
  covered: (has) => {
    expect(has((s) => s.startsWith('in flight: callModel'))).toBe(true);
    expect(has((s) => /executeTools #(2|6) finished \[\] started \[c[15]\]/.test(s))).toBe(true);
    // Some calls of the concurrent step finished, others were in flight.
    expect(has((s) => /executeTools #4 finished \[c.+\] started \[c.+\]/.test(s))).toBe(true);
    expect(has((s) => /^between: executeTools/.test(s))).toBe(true);
    expect(has((s) => s === 'ended')).toBe(true);
  },
});
