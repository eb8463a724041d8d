// What kill-chain-child.ts runs and kill-chain.test.ts checks, shared by both: the chain's
// script (its model's turns, its tools and how long each lingers), the run's id and input,
// and the lines the child writes (progress on stdout, side effects in a log file).
import type { Turn } from './helpers.js';
import type { ToolCallFlags, ToolEffectLine } from './kill-child-kit.js';

export const KILL_RUN_ID = 'kill-chain-run';
export const KILL_INPUT = 'book the trip';

/**
 * Four model calls, three tool steps; step 1 runs three calls at once that end one after the
 * other (see TOOL_MS), so a kill can land with some of them finished and some in flight.
 */
export const KILL_TURNS: readonly Turn[] = [
  { calls: [{ id: 'c1', name: 'reserve', arguments: { value: 'seat' } }] },
  {
    calls: [
      { id: 'c2', name: 'charge', arguments: { value: 'card' } },
      { id: 'c3', name: 'email', arguments: { value: 'receipt' } },
      { id: 'c4', name: 'notify', arguments: { value: 'ops' } },
    ],
  },
  { calls: [{ id: 'c5', name: 'ship', arguments: { value: 'parcel' } }] },
  { text: 'all done' },
];

export const TOOL_NAMES = ['reserve', 'charge', 'email', 'notify', 'ship'] as const;

/** Every tool call of the script, in order, with the step (model call index) that made it. */
export const KILL_CALLS: readonly { readonly id: string; readonly step: number }[] =
  KILL_TURNS.flatMap((turn, step) =>
    'calls' in turn ? turn.calls.map((call) => ({ id: call.id, step })) : [],
  );

/** The number of model calls of an uncrashed run. */
export const MODEL_STEPS = KILL_TURNS.length;

/** How long a lingering child's tools run, by call id (ms): c2 < c3 < c4 in step 1. */
export const TOOL_MS: Readonly<Record<string, number>> = {
  c1: 40,
  c2: 20,
  c3: 60,
  c4: 110,
  c5: 40,
};
/** How long a lingering child's model takes to answer (ms). */
export const MODEL_MS = 60;
/** How long a lingering child waits between steps, its tool step's answer on disk (ms). */
export const BETWEEN_STEPS_MS = 60;

/** One line of the side-effect log: a model call or a tool execution starting or finishing. */
export type EffectLine =
  | {
      readonly proc: string;
      readonly kind: 'model';
      readonly phase: 'start' | 'done';
      readonly step: number;
    }
  | ToolEffectLine;

/** The child's last stdout line, after `OUTPUT_PREFIX`: what its run ended with. */
export interface ChildOutput {
  readonly text: string;
  readonly transcript: unknown;
  readonly toolCalls: readonly ToolCallFlags[];
  readonly modelCalls: readonly {
    readonly replayed: boolean;
    readonly possiblyRepeated: boolean;
  }[];
}
