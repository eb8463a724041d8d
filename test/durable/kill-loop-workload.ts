// What kill-loop-child.ts runs and kill-loop.test.ts checks, shared by both: the tool loop's
// script (its plans by round, its tools, its response, and how long each lingers), the run's
// id and input, and the lines the child writes (see kill-child-kit.ts).
import type { PlannedRound, ToolExecutionRecord } from 'statecraft';
import type { ToolCallFlags, ToolEffectLine } from './kill-child-kit.js';

export const LOOP_RUN_ID = 'kill-loop-run';
export const LOOP_INPUT = 'book the trip';

/** One command of a plan: a tool call the loop makes as `round<n>_<index>`. */
export interface ScriptedCommand {
  readonly purpose: string;
  readonly toolName: string;
  readonly value: string;
}

/**
 * What the planner answers at each round (by `context.roundIndex`), as a model would from the
 * same context: three concurrent commands that end one after the other (see TOOL_MS), so a kill
 * can land with some finished and some in flight; then one command; then the response.
 */
export const LOOP_ROUNDS: readonly (readonly ScriptedCommand[])[] = [
  [
    { purpose: 'charge the card', toolName: 'charge', value: 'card' },
    { purpose: 'email the receipt', toolName: 'email', value: 'receipt' },
    { purpose: 'notify ops', toolName: 'notify', value: 'ops' },
  ],
  [{ purpose: 'ship the parcel', toolName: 'ship', value: 'parcel' }],
];

/** The number of plans of an uncrashed run: one per round of commands, then the response's. */
export const PLAN_ROUNDS = LOOP_ROUNDS.length + 1;

export const TOOL_NAMES = ['charge', 'email', 'notify', 'ship'] as const;

/** Every tool call of the script, in round and command order: `round<n>_<index>`. */
export const LOOP_CALLS: readonly string[] = LOOP_ROUNDS.flatMap((commands, round) =>
  commands.map((_, index) => `round${round + 1}_${index}`),
);

/** How long a lingering child's tools run, by call id (ms): round1_0 < round1_1 < round1_2. */
export const TOOL_MS: Readonly<Record<string, number>> = {
  round1_0: 40,
  round1_1: 90,
  round1_2: 150,
  round2_0: 40,
};
/** How long a lingering child's planner takes to answer (ms). */
export const PLAN_MS = 60;
/** How long a lingering child's response takes (ms). */
export const RESPOND_MS = 60;
/** How long a lingering child waits between rounds, a round's answer on disk (ms). */
export const BETWEEN_ROUNDS_MS = 60;

/** One line of the side-effect log: a plan, the response or a tool execution. */
export type LoopEffectLine =
  | {
      readonly proc: string;
      readonly kind: 'plan';
      readonly phase: 'start' | 'done';
      /** The planner's `context.roundIndex`. */
      readonly round: number;
    }
  | { readonly proc: string; readonly kind: 'respond'; readonly phase: 'start' | 'done' }
  | ToolEffectLine;

/** The child's last stdout line, after `OUTPUT_PREFIX`: what its run ended with. */
export interface LoopOutput {
  readonly answer: string | undefined;
  readonly toolLogs: readonly ToolExecutionRecord[];
  readonly plans: readonly PlannedRound[];
  /** In call id order (a round's calls finish in any order). */
  readonly toolCalls: readonly ToolCallFlags[];
}
