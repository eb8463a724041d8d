// The types a tool loop's run gives and takes (its input, options, result, stream events and
// partial result): shared by createToolLoop and the helpers that build its results and events,
// in a module of their own so the helpers never import the factory.
import type { InspectionEvent, Observer } from 'xstate';
import type { PlannedRound, StopReason, ToolLoopOutput } from '../../machines/tool-loop.js';
import type { ApprovalRunOptions } from '../approvals/approval.js';
import type { PartialResult } from '../errors.js';
import type { DurableRunOptions } from '../host/durable-run.js';
import type { RunDetails } from '../host/run-details.js';
import type { RUN_OPTION_KEYS } from '../host/run-options.js';
import type { RunObserver } from '../observe/run-observer.js';
import type { EveryKeyListed } from '../options/keys.js';
import type { Plan } from '../plan/plan.js';
import type { ToolExecutionRecord } from '../plan/records.js';
import type { ApprovalStreamEvent } from '../tool-calls/approval-stream-events.js';
import type { ToolCallHooks } from '../tools/hooks.js';
import type { Usage } from '../usage.js';

export interface ToolLoopRunInput {
  readonly userInput: string;
  /** A requirement the planner and the final response should meet (SPEC T3). */
  readonly extraRequirement?: string;
}

export interface ToolLoopRunOptions extends DurableRunOptions, ToolCallHooks, ApprovalRunOptions {
  /** Aborting ends the run with an AbortError; the planner, every running tool and the responder see it. */
  readonly signal?: AbortSignal;
  /** XState's inspection hook, besides the inspectors `inspectRuns` registered. */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Told of this run as it happens (SPEC X4), besides the observers `observeRuns` registered. */
  readonly observers?: RunObserver | readonly RunObserver[];
  /** The run that started this one, for observers' tree of runs (a Runnable's RunConfig has it). */
  readonly parentRunId?: string;
}

// tsc fails here, naming the option, when ToolLoopRunOptions gains one that runs do not check.
const _everyRunOptionChecked: EveryKeyListed<ToolLoopRunOptions, typeof RUN_OPTION_KEYS> = true;

export interface ToolLoopResult {
  readonly status: 'done';
  /** The final response's text; undefined when the loop makes none (`respond: false`). */
  readonly answer: string | undefined;
  /** The final response's result: a chain responder's validated result, else the text. */
  readonly result: unknown;
  readonly stopReason: StopReason;
  /** Rounds executed. */
  readonly rounds: number;
  /** Every round's normalized plan, the last one (which stopped the loop) included. */
  readonly plans: readonly PlannedRound[];
  /** Keyed by purpose (SPEC T8); {} when no tool ran. */
  readonly actionResults: Readonly<Record<string, unknown>>;
  /** The quote-your-sources instruction the response saw; undefined when no tool ran. */
  readonly extraInstruction: string | undefined;
  /** Every execution record, in round and command order. */
  readonly toolLogs: readonly ToolExecutionRecord[];
  /** Tokens spent by the planner and the final response. */
  readonly usage: Usage;
  /** Every model call (compiled request, response, usage, latency) and tool call of the run (SPEC A5). */
  details(): RunDetails;
}

export type ToolLoopStreamEvent =
  | { readonly type: 'state'; readonly state: string }
  | { readonly type: 'round-started'; readonly roundIndex: number }
  | {
      readonly type: 'commands-planned';
      readonly roundIndex: number;
      readonly plan: Plan;
      readonly shortCircuited: boolean;
    }
  | {
      readonly type: 'record';
      readonly roundIndex: number;
      /** The command's position in its round. */
      readonly index: number;
      readonly record: ToolExecutionRecord;
    }
  | { readonly type: 'text-delta'; readonly delta: string }
  /** A command waits for a decision (SPEC H2); `approval-decided` follows when it is taken. */
  | ApprovalStreamEvent
  | {
      readonly type: 'final';
      readonly output: ToolLoopOutput;
      readonly details: RunDetails;
      /** What `invoke` resolves with; undefined when the run failed (the stream then throws). */
      readonly result: ToolLoopResult | undefined;
    };

/** A failed loop keeps what it did: the records so far, usage, and the machine's output. */
export interface ToolLoopPartialResult extends PartialResult {
  readonly toolLogs: readonly ToolExecutionRecord[];
  /** The machine's output; absent only when the machine itself crashed. */
  readonly output?: ToolLoopOutput;
  /** Every model call and tool call made before the failure (SPEC A5), as on a result. */
  details(): RunDetails;
}
