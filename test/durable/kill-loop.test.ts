// kill -9 of a durable tool loop run. A child process (kill-loop-child.ts) runs the loop of
// kill-loop-workload.ts (a planner function, three rounds, a respond function) with a
// fileStore and is killed with SIGKILL at seeded points: during planning, during the round of
// three concurrent commands (all in flight, or some finished and others in flight), during the
// round of one command, between rounds, during the response, and after the run ended. A
// second process then resumes the run (resume(runId), or invoke with the same runId and
// input). Whatever the moment, the run ends as an uncrashed one, no tool call, plan or
// response whose answer was journaled is made again, a call in flight is issued again once
// with the same idempotency key, and details() says which calls are which (kill-harness.ts
// checks what every durable run must do; this file the loop's own).
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import { expectEffectsByIndex, journaled, type KillKind, killHarness } from './kill-harness.js';
import {
  LOOP_CALLS,
  LOOP_RUN_ID,
  type LoopEffectLine,
  type LoopOutput,
  PLAN_ROUNDS,
} from './kill-loop-workload.js';

const SEED = 20_260_413;

/**
 * The kinds of moments, each with the progress lines a kill can follow. Plans last PLAN_MS
 * (60), tools TOOL_MS (round1_0 40, round1_1 90, round1_2 150, round2_0 40), the pause between
 * rounds BETWEEN_ROUNDS_MS (60), the response RESPOND_MS (60): every delay leaves tens of ms
 * before the moment is over.
 */
const KINDS: readonly KillKind[] = [
  {
    kind: 'plan',
    covers: 'during planning (plan request journaled, no answer)',
    count: 3,
    anchors: [0, 1, 2].map((round) => ({ marker: `plan-start ${round}`, delay: [0, 20] })),
  },
  {
    kind: 'concurrent',
    covers: 'in the round of three concurrent commands (round1_0 ends first, then 1, then 2)',
    count: 3,
    anchors: [
      { marker: 'tool-start round1_2', delay: [0, 5] }, // all three in flight
      { marker: 'tool-done round1_0', delay: [3, 15] }, // round1_0 finished, 1 and 2 in flight
      { marker: 'tool-done round1_1', delay: [3, 20] }, // round1_0 and 1 finished, 2 in flight
    ],
  },
  {
    kind: 'tool',
    covers: 'during the only command of round 2 (intent journaled, no result)',
    count: 1,
    anchors: [{ marker: 'tool-start round2_0', delay: [0, 15] }],
  },
  {
    kind: 'tool-end',
    covers: 'as a command returns (its side effect done, its result on its way to the journal)',
    count: 1,
    anchors: [
      { marker: 'tool-done round1_2', delay: [0, 2] },
      { marker: 'tool-done round2_0', delay: [0, 2] },
    ],
  },
  {
    kind: 'between',
    covers: "between rounds (a round's answer on disk, next plan not asked for)",
    count: 2,
    anchors: [1, 2].map((round) => ({ marker: `round-done ${round}`, delay: [0, 20] })),
  },
  {
    kind: 'respond',
    covers: 'during the response (respond request journaled, no answer)',
    count: 1,
    anchors: [{ marker: 'respond-start', delay: [0, 20] }],
  },
  {
    kind: 'handoff',
    covers: "as a plan's or the response's answer is journaled",
    count: 1,
    anchors: [
      ...[0, 1, 2].map((round) => ({ marker: `plan-done ${round}`, delay: [0, 3] as const })),
      { marker: 'respond-done', delay: [0, 3] },
    ],
  },
];

const { describeKillPoints } = killHarness<LoopOutput, LoopEffectLine>({
  child: fileURLToPath(new URL('./kill-loop-child.ts', import.meta.url)),
  runId: LOOP_RUN_ID,
  callIds: LOOP_CALLS,
  toolEffect: 'execute',
  tmpPrefix: 'statecraft-kill-loop-',
});

/** How many lines of plan `round` (any `round` for the response) `lines` hold, of one phase. */
const madeBy =
  (kind: 'plan' | 'respond') =>
  (lines: readonly LoopEffectLine[], round: number, phase: 'start' | 'done') =>
    lines.filter(
      (line) =>
        line.kind === kind &&
        line.phase === phase &&
        (line.kind !== 'plan' || line.round === round),
    ).length;

describeKillPoints({
  title: 'a durable tool loop run killed with SIGKILL',
  seed: SEED,
  kinds: KINDS,
  reference: ({ output, effects }) => {
    expect(output.answer).toBe(
      'done (charge the card: charge:card; email the receipt: email:receipt; notify ops: notify:ops; ship the parcel: ship:parcel)',
    );
    expect(output.plans.map((planned) => planned.plan.nextAction)).toEqual([
      'execute',
      'execute',
      'response',
    ]);
    const made = (kind: 'plan' | 'respond') =>
      Array.from({ length: PLAN_ROUNDS }, (_, round) => madeBy(kind)(effects, round, 'start'));
    expect(made('plan'), 'one plan per round').toEqual([1, 1, 1]);
    expect(madeBy('respond')(effects, 0, 'start'), 'one response').toBe(1);
  },
  check: (outcome) => {
    const { before, output, reference, expect } = outcome;
    // The same final output as the uncrashed run.
    expect(output.answer).toBe(reference.answer);
    expect(output.toolLogs).toEqual(reference.toolLogs);
    expect(output.plans).toEqual(reference.plans);

    // Plans by round, then the response: an answered one is not made again, the one in
    // flight once.
    const plansNotJournaled = expectEffectsByIndex(expect, outcome, {
      what: 'plan',
      count: PLAN_ROUNDS,
      ...journaled(before, 'plan', 'plan.done'),
      made: madeBy('plan'),
    });
    const responseNotJournaled = expectEffectsByIndex(expect, outcome, {
      what: 'response',
      count: 1,
      ...journaled(before, 'respond', 'respond.done'),
      made: madeBy('respond'),
    });
    return (
      (plansNotJournaled > 0 ? '; plan made, not journaled' : '') +
      (responseNotJournaled > 0 ? '; response made, not journaled' : '')
    );
  },
  covered: (has) => {
    expect(has((s) => s.startsWith('in flight: plan'))).toBe(true);
    // The round of three: all in flight; some finished while others were in flight.
    expect(has((s) => s.endsWith('finished [] started [round1_0,round1_1,round1_2]'))).toBe(true);
    expect(has((s) => /execute #2 finished \[round1_.+\] started \[round1_.+\]/.test(s))).toBe(
      true,
    );
    expect(has((s) => /execute #4 finished \[\] started \[round2_0\]/.test(s))).toBe(true);
    expect(has((s) => /^between: execute/.test(s))).toBe(true);
    expect(has((s) => s.startsWith('in flight: respond'))).toBe(true);
    expect(has((s) => s === 'ended')).toBe(true);
  },
});
