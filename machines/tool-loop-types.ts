// The tool loop machine's types: its config and input, its context, the effects it requests
// and the events that answer them, and its output. Their own module, so the machine's helpers
// read them without importing the machine, and tool-loop.ts opens on its policy.

import type { ApprovalDecision, ApprovalTimeoutPolicy } from '../src/approvals/approval.js';
import type { ToolSpec } from '../src/model/language-model.js';
import type { Convergence } from '../src/plan/converge.js';
import type { Plan, ToolCommand } from '../src/plan/plan.js';
import type { PlannerContext } from '../src/plan/planner-context.js';
import type { ToolExecutionRecord } from '../src/plan/records.js';
import type { Usage } from '../src/usage.js';
import type { ApprovalEvent, Approvals } from './approvals.js';

/** Everything the machine decides with; fixed for a run. Plain JSON. */
export interface ToolLoopConfig {
  /**
   * `false` turns the loop off (the seed's `tool.loop.enabled`): no planner call, no tool;
   * the final response is still made. Undefined: on.
   */
  readonly enabled?: boolean;
  /** A hard bound on executed rounds (SPEC T2). */
  readonly maxRounds: number;
  /**
   * SPEC H3: commands executed per run, over all rounds; undefined: no limit. A plan whose
   * commands would pass it runs none of them: the loop stops, as at maxRounds.
   */
  readonly maxToolCalls?: number;
  /** Milliseconds for the whole loop, final response included; undefined: no limit. */
  readonly timeout?: number;
  /** How many times a round's planner may answer with something that is not a plan. */
  readonly planRetries: number;
  /** Whether a final response call follows the loop. */
  readonly respond: boolean;
  /** Stop after the first plan, executing nothing (`planOnly()`). */
  readonly planOnly?: boolean;
  /** What a command's approval deadline does when it passes (SPEC H2); undefined: 'reject'. */
  readonly approvalTimeout?: ApprovalTimeoutPolicy;
  /** Characters of a rejection's reason kept (SPEC H2); undefined: DEFAULT_MAX_REASON_LENGTH. */
  readonly maxApprovalReasonLength?: number;
}

export interface ToolLoopInput {
  readonly config: ToolLoopConfig;
  readonly userInput: string;
  readonly extraRequirement?: string;
  /** The tools the planner may use; none means tools are off (SPEC T7). */
  readonly availableTools: readonly ToolSpec[];
}

/** What the `plan` actor returns: the planner's raw answer, normalized by the machine. */
export interface PlanOutcome {
  /** The parsed plan as the planner wrote it; anything but an object is not a plan. */
  readonly raw: unknown;
  /** Why `raw` is missing, e.g. the answer held no JSON. */
  readonly error?: string;
  readonly usage: Usage;
  /** True when the plan was decided from the first field of a stream (SPEC T5). */
  readonly shortCircuited: boolean;
}

export interface ExecuteInput {
  readonly roundIndex: number;
  readonly commands: readonly ToolCommand[];
}

export interface RespondInput {
  readonly userInput: string;
  readonly extraRequirement: string;
  /** Undefined when no tool ran: nothing is injected then (SPEC T8). */
  readonly convergence: Convergence | undefined;
}

export interface ResponseOutcome {
  readonly text: string;
  /** The responder's result: a chain's validated result, else the text. */
  readonly result: unknown;
  readonly usage: Usage;
}

/** Why the loop stopped planning (SPEC T7). */
export type StopReason =
  | 'response'
  | 'no-commands'
  | 'tools-off'
  | 'max-rounds'
  | 'max-tool-calls'
  | 'plan-only'
  | 'disabled';

export interface PlannedRound {
  readonly roundIndex: number;
  readonly plan: Plan;
  readonly shortCircuited: boolean;
}

export interface ToolLoopFailure {
  readonly code: 'TIMEOUT' | 'ABORTED' | 'PROTOCOL_ERROR' | 'MODEL_ERROR' | 'CHAIN_ERROR';
  readonly message: string;
  readonly cause?: unknown;
  /** The timeout that was reached, for TIMEOUT. */
  readonly limit?: number;
}

/** The commands of the round in progress that wait for a decision, and the run's decisions. */
export type ToolLoopApprovals = Approvals;

/**
 * 18 top-level keys: keep it under 20 (see ChainContext: XState's assign copies the context,
 * and V8 makes a copy of 20 or more properties a dictionary-mode object, much slower).
 */
export interface ToolLoopContext {
  readonly config: ToolLoopConfig;
  readonly userInput: string;
  readonly extraRequirement: string;
  readonly availableTools: readonly ToolSpec[];
  /** SPEC T2's round state. */
  readonly donePlans: readonly ToolExecutionRecord[];
  readonly lastRoundRecords: readonly ToolExecutionRecord[];
  readonly roundIndex: number;
  /** The records of the executing round, in the order they finished. */
  readonly roundRecords: readonly {
    readonly index: number;
    readonly record: ToolExecutionRecord;
  }[];
  readonly plan: Plan | undefined;
  readonly plans: readonly PlannedRound[];
  /** Answers in this round that were not plans, and why the last one was not. */
  readonly planAttempts: number;
  readonly planError: string | undefined;
  readonly usage: Usage;
  readonly stopReason: StopReason | undefined;
  readonly convergence: Convergence | undefined;
  readonly response: ResponseOutcome | undefined;
  readonly failure: ToolLoopFailure | undefined;
  /** SPEC H2: the round's commands waiting for a decision, and every decision of the run. */
  readonly approvals: ToolLoopApprovals;
}

export interface ToolLoopRunData {
  readonly rounds: number;
  readonly plans: readonly PlannedRound[];
  /** Every record, including those of a round cut short by a timeout or abort. */
  readonly toolLogs: readonly ToolExecutionRecord[];
  readonly usage: Usage;
}

/**
 * How a loop ended. A failed run is an output too (`status: 'failed'`), never an error of the
 * actor: an app's machine gets it on `onDone` from `loop.machine` and `loop.durable(store)` alike.
 */
export type ToolLoopOutput =
  | (ToolLoopRunData & {
      readonly status: 'done';
      readonly stopReason: StopReason;
      /** `actionResults` and the extra instruction; undefined when no tool ran. */
      readonly convergence: Convergence | undefined;
      /** The final response, when the loop makes one. */
      readonly response: ResponseOutcome | undefined;
    })
  | (ToolLoopRunData & { readonly status: 'failed'; readonly failure: ToolLoopFailure });

/** Requests the machine sends to its `effects` actor. */
export type ToolLoopEffectRequest =
  | { readonly type: 'plan'; readonly input: PlannerContext }
  | { readonly type: 'execute'; readonly input: ExecuteInput }
  | { readonly type: 'respond'; readonly input: RespondInput }
  /** Abort what is in flight and drop its late answers: the loop has stopped. */
  | { readonly type: 'cancel'; readonly reason: 'timeout' | 'abort' }
  /** A command of the round was decided (SPEC H2): run it, or record it as not approved. */
  | { readonly type: 'decide'; readonly decision: ApprovalDecision };

/** Events the loop reacts to: the effects' answers, and ABORT, APPROVE, REJECT from outside. */
export type ToolLoopEvent =
  | { readonly type: 'ABORT'; readonly reason?: string }
  /** SPEC H2: the host asks, and a deadline passes; APPROVE / REJECT from outside. */
  | ApprovalEvent
  | { readonly type: 'plan.done'; readonly output: PlanOutcome }
  | { readonly type: 'plan.error'; readonly error: unknown }
  | {
      readonly type: 'execute.record';
      readonly index: number;
      readonly record: ToolExecutionRecord;
    }
  | { readonly type: 'execute.done'; readonly output: readonly ToolExecutionRecord[] }
  | { readonly type: 'execute.error'; readonly error: unknown }
  | { readonly type: 'respond.done'; readonly output: ResponseOutcome }
  | { readonly type: 'respond.error'; readonly error: unknown };

/** Events the host sends back for an `execute` request. */
export type ExecuteEvent = Extract<ToolLoopEvent, { type: `execute.${string}` }>;

/**
 * What a guard or an action of the tool loop reads: the context, and the event being taken.
 * Implementations in the sibling modules take it, so setup() can name them as they are.
 */
export interface ToolLoopArgs {
  readonly context: ToolLoopContext;
  readonly event: ToolLoopEvent;
}
