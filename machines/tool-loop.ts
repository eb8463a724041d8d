import { and, assign, fromCallback, not, sendTo, setup } from 'xstate';
import type { ApprovalDecision, ApprovalTimeoutPolicy } from '../src/approvals/approval.js';
import { isRecord } from '../src/is-record.js';
import type { ToolSpec } from '../src/model/language-model.js';
import { type Convergence, converge } from '../src/plan/converge.js';
import { normalizePlan, type Plan, type ToolCommand } from '../src/plan/plan.js';
import type { PlannerContext } from '../src/plan/planner-context.js';
import type { ToolExecutionRecord } from '../src/plan/records.js';
import { addUsage, type Usage, ZERO_USAGE } from '../src/usage.js';
import {
  type ApprovalEvent,
  type Approvals,
  approval,
  approvalTimeoutMessage,
  decidesWaitingCall,
  expiry,
  NO_APPROVALS,
  rejection,
  withDecision,
  withinReasonLimit,
  withRequest,
} from './approvals.js';

// The tool loop (seed 001): a planner plans a round of tool commands, an executor runs them
// concurrently, rounds repeat until the planner answers or a stop condition holds (SPEC T7);
// then the records converge into action results (T8) and an optional final response uses
// them. Pure: the machine does no IO. Its three effects — `plan`, `execute`, `respond` — are
// requests it sends to one long-lived actor, `effects`, invoked once on the root for the whole
// run and supplied by the runtime (src/tool-loop/create-tool-loop.ts) with `machine.provide()`,
// or by tests. The host answers with `<effect>.done` / `<effect>.error` events (and
// `execute.record` for each command as it finishes); the timeout and ABORT send `cancel`,
// which aborts what is in flight and drops its late answers. As in the chain: no child actor
// is spawned per state, so a snapshot holds no invoke a restore would run again, every effect
// is an event in the inspector, and the event log is the run's journal.
//
// SPEC H2, as in the chain: a command of a tool that needs approval moves the round from
// `executing` to `awaitingApproval` (the host asks, `approval.requested`) until every such
// command of the round is decided: APPROVE / REJECT from outside, or its deadline
// (`approval.timedOut`). Each decision is forwarded to the host (`decide`), which runs the
// approved command or records the rejected one as failed; the round's other commands run
// meanwhile. The round is handed to the host once, on the way into `executing`: a return
// from `awaitingApproval` is the same round going on. Only the host runs commands, and it
// runs one that needs approval only once the machine forwarded an approval.

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

interface ToolLoopRunData {
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

/** The usage an error's partial result reports (statecraft errors carry one), else none. */
function partialUsage(error: unknown): Usage {
  const usage = (error as { partial?: { usage?: Usage } } | null)?.partial?.usage;
  return usage && typeof usage.totalTokens === 'number' ? usage : ZERO_USAGE;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export const toolLoopMachine = setup({
  types: {
    context: {} as ToolLoopContext,
    input: {} as ToolLoopInput,
    output: {} as ToolLoopOutput,
    events: {} as ToolLoopEvent,
  },
  actors: {
    // A placeholder that answers nothing: the runtime provides the real host.
    effects: fromCallback<ToolLoopEffectRequest>(() => {
      throw new Error('toolLoopMachine: provide the effects actor (createToolLoop does)');
    }),
  },
  delays: {
    // Without a timeout the delayed event fires at once and `hasTimeout` ignores it.
    loopTimeout: ({ context }) => context.config.timeout ?? 0,
  },
  guards: {
    isLoopDisabled: ({ context }) => context.config.enabled === false,
    hasNoTools: ({ context }) => context.availableTools.length === 0,
    isOverRoundLimit: ({ context }) => context.roundIndex >= context.config.maxRounds,
    // SPEC H3: no command can run any more; no planner call is made for a plan that could not run.
    isToolCallBudgetSpent: ({ context }) =>
      context.config.maxToolCalls !== undefined &&
      context.donePlans.length >= context.config.maxToolCalls,
    // The plan's commands would take the run past maxToolCalls: none of them runs.
    isOverToolCallBudget: ({ context }) =>
      context.config.maxToolCalls !== undefined &&
      context.donePlans.length + (context.plan?.executionCommands.length ?? 0) >
        context.config.maxToolCalls,
    isMalformedPlan: (_, params: { outcome: PlanOutcome }) => !isRecord(params.outcome.raw),
    // A malformed plan with attempts left: the planner is asked again, told what was wrong.
    canRetryPlan: ({ context }, params: { outcome: PlanOutcome }) =>
      !isRecord(params.outcome.raw) && context.planAttempts < context.config.planRetries,
    wantsResponse: ({ context }) => context.plan?.nextAction !== 'execute',
    hasNoCommands: ({ context }) => (context.plan?.executionCommands.length ?? 0) === 0,
    shouldExecute: and([not('wantsResponse'), not('hasNoCommands')]),
    wouldPassToolCallBudget: and(['shouldExecute', 'isOverToolCallBudget']),
    shouldRespond: ({ context }) => context.config.respond,
    isPlanOnly: ({ context }) => context.config.planOnly === true,
    hasTimeout: ({ context }) => context.config.timeout !== undefined,
    // A decision counts for a command that waits for one; a second decision on it is ignored.
    // An APPROVE / REJECT of another shape is an InputError (decidesWaitingCall).
    isAwaitingDecision: ({ context, event }) => decidesWaitingCall(context.approvals, event),
    hasNoPendingApprovals: ({ context }) => context.approvals.awaiting.length === 0,
    shouldFailOnApprovalTimeout: and([
      'isAwaitingDecision',
      ({ context }) => context.config.approvalTimeout === 'fail',
    ]),
  },
  actions: {
    requestPlan: sendTo('effects', ({ context }) => ({
      type: 'plan' as const,
      input: {
        userInput: context.userInput,
        extraRequirement: context.extraRequirement,
        availableTools: context.availableTools,
        donePlans: context.donePlans,
        lastRoundResult: context.lastRoundRecords,
        roundIndex: context.roundIndex,
        maxRounds: context.config.maxRounds,
        ...(context.planError !== undefined && { planError: context.planError }),
      } satisfies PlannerContext,
    })),
    // On the way into `executing` only: a return from `awaitingApproval` is the same round.
    requestExecution: sendTo('effects', ({ context }) => ({
      type: 'execute' as const,
      input: {
        roundIndex: context.roundIndex,
        commands: context.plan?.executionCommands ?? [],
      } satisfies ExecuteInput,
    })),
    requestResponse: sendTo('effects', ({ context }) => ({
      type: 'respond' as const,
      input: {
        userInput: context.userInput,
        extraRequirement: context.extraRequirement,
        convergence: context.convergence,
      } satisfies RespondInput,
    })),
    // The host aborts what is in flight and drops its answer: the loop has stopped.
    cancelEffects: sendTo('effects', (_, params: { reason: 'timeout' | 'abort' }) => ({
      type: 'cancel' as const,
      reason: params.reason,
    })),
    recordApprovalRequest: assign(({ context, event }) => {
      const { request } = event as Extract<ToolLoopEvent, { type: 'approval.requested' }>;
      return { approvals: withRequest(context.approvals, request) };
    }),
    forgetWaitingCalls: assign(({ context }) => ({
      approvals: { ...context.approvals, awaiting: [] },
    })),
    // A reason is cut to the run's limit before it is kept, journaled or read by the model.
    recordDecision: assign(({ context }, params: { decision: ApprovalDecision }) => ({
      approvals: withDecision(
        context.approvals,
        withinReasonLimit(params.decision, context.config),
      ),
    })),
    // The host journals the decision and runs, or records as rejected, the command.
    forwardDecision: sendTo('effects', ({ context }, params: { decision: ApprovalDecision }) => ({
      type: 'decide' as const,
      decision: withinReasonLimit(params.decision, context.config),
    })),
    failOnApprovalTimeout: assign(({ context }, params: { callId: string; timeoutMs: number }) => ({
      failure: {
        code: 'TIMEOUT' as const,
        message: approvalTimeoutMessage(context.approvals, params),
        limit: params.timeoutMs,
      },
    })),
    stopWith: assign((_, params: { reason: StopReason }) => ({ stopReason: params.reason })),
    recordPlan: assign(({ context }, params: { outcome: PlanOutcome }) => {
      const plan = normalizePlan(params.outcome.raw);
      return {
        plan,
        plans: [
          ...context.plans,
          { roundIndex: context.roundIndex, plan, shortCircuited: params.outcome.shortCircuited },
        ],
        planAttempts: 0,
        planError: undefined,
        usage: addUsage(context.usage, params.outcome.usage),
      };
    }),
    // A malformed answer is data for the planner's next attempt, not a silent empty plan.
    recordPlanError: assign(({ context }, params: { outcome: PlanOutcome }) => ({
      planAttempts: context.planAttempts + 1,
      planError: params.outcome.error ?? 'Your answer was not a JSON object.',
      usage: addUsage(context.usage, params.outcome.usage),
    })),
    recordFinishedCommand: assign(
      ({ context }, params: { index: number; record: ToolExecutionRecord }) => ({
        roundRecords: [...context.roundRecords, params],
      }),
    ),
    recordRound: assign(({ context }, params: { records: readonly ToolExecutionRecord[] }) => ({
      donePlans: [...context.donePlans, ...params.records],
      lastRoundRecords: params.records,
      roundIndex: context.roundIndex + 1,
      roundRecords: [],
    })),
    converge: assign({ convergence: ({ context }) => converge(context.donePlans) }),
    recordResponse: assign(({ context }, params: { response: ResponseOutcome }) => ({
      response: params.response,
      usage: addUsage(context.usage, params.response.usage),
    })),
    fail: assign(({ context }, params: { code: ToolLoopFailure['code']; error: unknown }) => ({
      failure: { code: params.code, message: errorMessage(params.error), cause: params.error },
      // A failed chain responder reports what it spent: the loop's usage keeps it.
      usage: addUsage(context.usage, partialUsage(params.error)),
    })),
    failOnMalformedPlan: assign(({ context }, params: { outcome: PlanOutcome }) => ({
      failure: {
        code: 'PROTOCOL_ERROR' as const,
        message: `The planner did not return a plan in round ${context.roundIndex + 1} after ${context.planAttempts + 1} attempt(s): ${params.outcome.error ?? 'the answer was not a JSON object'}`,
      },
      usage: addUsage(context.usage, params.outcome.usage),
    })),
    failOnTimeout: assign({
      failure: ({ context }) => ({
        code: 'TIMEOUT' as const,
        message: `The tool loop did not finish within its timeout of ${context.config.timeout} ms (${context.roundIndex} round(s) executed)`,
        limit: context.config.timeout,
      }),
    }),
    failOnAbort: assign((_, params: { reason: string | undefined }) => ({
      failure: {
        code: 'ABORTED' as const,
        message: params.reason
          ? `The run was cancelled: ${params.reason}`
          : 'The run was cancelled',
      },
    })),
  },
}).createMachine({
  id: 'toolLoop',
  context: ({ input }) => ({
    config: input.config,
    userInput: input.userInput,
    extraRequirement: input.extraRequirement ?? '',
    availableTools: input.availableTools,
    donePlans: [],
    lastRoundRecords: [],
    roundIndex: 0,
    roundRecords: [],
    plan: undefined,
    plans: [],
    planAttempts: 0,
    planError: undefined,
    usage: ZERO_USAGE,
    stopReason: undefined,
    convergence: undefined,
    response: undefined,
    failure: undefined,
    approvals: NO_APPROVALS,
  }),
  initial: 'running',
  invoke: { id: 'effects', src: 'effects' },
  on: {
    ABORT: {
      target: '.failed',
      actions: [
        { type: 'failOnAbort', params: ({ event }) => ({ reason: event.reason }) },
        { type: 'cancelEffects', params: { reason: 'abort' } },
      ],
    },
  },
  states: {
    running: {
      initial: 'nextRound',
      after: {
        loopTimeout: {
          guard: 'hasTimeout',
          target: 'failed',
          actions: ['failOnTimeout', { type: 'cancelEffects', params: { reason: 'timeout' } }],
        },
      },
      states: {
        // Before every planner call: the stop conditions that need no plan (SPEC T7), and a
        // loop turned off (`enabled: false`, T4), so it never plans. At the round limit the
        // seed still calls its planner once and discards the answer; here no call is made,
        // since nothing it could say would run.
        nextRound: {
          always: [
            {
              guard: 'hasNoTools',
              target: 'converging',
              actions: { type: 'stopWith', params: { reason: 'tools-off' } },
            },
            {
              guard: 'isLoopDisabled',
              target: 'converging',
              actions: { type: 'stopWith', params: { reason: 'disabled' } },
            },
            {
              guard: 'isOverRoundLimit',
              target: 'converging',
              actions: { type: 'stopWith', params: { reason: 'max-rounds' } },
            },
            {
              guard: 'isToolCallBudgetSpent',
              target: 'converging',
              actions: { type: 'stopWith', params: { reason: 'max-tool-calls' } },
            },
            { target: 'planning' },
          ],
        },
        planning: {
          entry: 'requestPlan',
          on: {
            'plan.done': [
              {
                guard: { type: 'canRetryPlan', params: ({ event }) => ({ outcome: event.output }) },
                target: 'planning',
                reenter: true,
                actions: {
                  type: 'recordPlanError',
                  params: ({ event }) => ({ outcome: event.output }),
                },
              },
              {
                guard: {
                  type: 'isMalformedPlan',
                  params: ({ event }) => ({ outcome: event.output }),
                },
                target: '#toolLoop.failed',
                actions: {
                  type: 'failOnMalformedPlan',
                  params: ({ event }) => ({ outcome: event.output }),
                },
              },
              {
                target: 'planned',
                actions: { type: 'recordPlan', params: ({ event }) => ({ outcome: event.output }) },
              },
            ],
            'plan.error': {
              target: '#toolLoop.failed',
              actions: {
                type: 'fail',
                params: ({ event }) => ({ code: 'MODEL_ERROR', error: event.error }),
              },
            },
          },
        },
        // The stop conditions a plan decides (SPEC T7). The round limit was checked in
        // `nextRound`, so `executing` is unreachable once roundIndex reaches maxRounds (D3).
        planned: {
          always: [
            {
              guard: 'isPlanOnly',
              target: '#toolLoop.done',
              actions: { type: 'stopWith', params: { reason: 'plan-only' } },
            },
            {
              guard: 'wouldPassToolCallBudget',
              target: 'converging',
              actions: { type: 'stopWith', params: { reason: 'max-tool-calls' } },
            },
            { guard: 'shouldExecute', target: 'executing', actions: 'requestExecution' },
            {
              guard: 'wantsResponse',
              target: 'converging',
              actions: { type: 'stopWith', params: { reason: 'response' } },
            },
            {
              target: 'converging',
              actions: { type: 'stopWith', params: { reason: 'no-commands' } },
            },
          ],
        },
        // The round was handed to the host on the way in (requestExecution): a return from
        // `awaitingApproval` is the same round going on, not a new one.
        executing: {
          on: {
            'approval.requested': { target: 'awaitingApproval', actions: 'recordApprovalRequest' },
            'execute.record': {
              actions: {
                type: 'recordFinishedCommand',
                params: ({ event }) => ({ index: event.index, record: event.record }),
              },
            },
            'execute.done': {
              target: 'nextRound',
              actions: { type: 'recordRound', params: ({ event }) => ({ records: event.output }) },
            },
            'execute.error': {
              target: '#toolLoop.failed',
              actions: {
                type: 'fail',
                params: ({ event }) => ({ code: 'CHAIN_ERROR', error: event.error }),
              },
            },
          },
        },
        // SPEC H2: some commands of the round wait for a person; the others run (and finish)
        // meanwhile. The round cannot end here: the host answers it once all are decided.
        awaitingApproval: {
          always: { guard: 'hasNoPendingApprovals', target: 'executing' },
          on: {
            'approval.requested': { actions: 'recordApprovalRequest' },
            APPROVE: {
              guard: 'isAwaitingDecision',
              actions: [
                {
                  type: 'recordDecision',
                  params: ({ event }) => ({ decision: approval(event) }),
                },
                {
                  type: 'forwardDecision',
                  params: ({ event }) => ({ decision: approval(event) }),
                },
              ],
            },
            REJECT: {
              guard: 'isAwaitingDecision',
              actions: [
                { type: 'recordDecision', params: ({ event }) => ({ decision: rejection(event) }) },
                {
                  type: 'forwardDecision',
                  params: ({ event }) => ({ decision: rejection(event) }),
                },
              ],
            },
            'approval.timedOut': [
              {
                guard: 'shouldFailOnApprovalTimeout',
                target: '#toolLoop.failed',
                actions: [
                  {
                    type: 'failOnApprovalTimeout',
                    params: ({ event }) => ({ callId: event.callId, timeoutMs: event.timeoutMs }),
                  },
                  { type: 'recordDecision', params: ({ event }) => ({ decision: expiry(event) }) },
                  { type: 'forwardDecision', params: ({ event }) => ({ decision: expiry(event) }) },
                  // The round is over: nothing of it waits for anyone.
                  'forgetWaitingCalls',
                ],
              },
              {
                guard: 'isAwaitingDecision',
                actions: [
                  { type: 'recordDecision', params: ({ event }) => ({ decision: expiry(event) }) },
                  { type: 'forwardDecision', params: ({ event }) => ({ decision: expiry(event) }) },
                ],
              },
            ],
            'execute.record': {
              actions: {
                type: 'recordFinishedCommand',
                params: ({ event }) => ({ index: event.index, record: event.record }),
              },
            },
            // Only if the host broke: it answers a round once every command in it is decided.
            'execute.error': {
              target: '#toolLoop.failed',
              actions: {
                type: 'fail',
                params: ({ event }) => ({ code: 'CHAIN_ERROR', error: event.error }),
              },
            },
          },
        },
        // SPEC T8: the records become action results, then the final response, if any.
        converging: {
          entry: 'converge',
          always: [{ guard: 'shouldRespond', target: 'responding' }, { target: '#toolLoop.done' }],
        },
        responding: {
          entry: 'requestResponse',
          on: {
            'respond.done': {
              target: '#toolLoop.done',
              actions: {
                type: 'recordResponse',
                params: ({ event }) => ({ response: event.output }),
              },
            },
            'respond.error': {
              target: '#toolLoop.failed',
              actions: {
                type: 'fail',
                params: ({ event }) => ({ code: 'MODEL_ERROR', error: event.error }),
              },
            },
          },
        },
      },
    },
    done: { type: 'final' },
    failed: { type: 'final' },
  },
  output: ({ context }): ToolLoopOutput => {
    const data: ToolLoopRunData = {
      rounds: context.roundIndex,
      plans: context.plans,
      toolLogs: toolLogsOf(context),
      usage: context.usage,
    };
    if (context.failure) return { ...data, status: 'failed', failure: context.failure };
    return {
      ...data,
      status: 'done',
      stopReason: context.stopReason ?? 'response',
      convergence: context.convergence,
      response: context.response,
    };
  },
});

/**
 * Every record of the run: the executed rounds', then those of a round cut short (a timeout,
 * an abort, a failed hook or deadline, an app's machine stopping the loop) that finished, in
 * command order: a command that ran keeps its record (SPEC Q8).
 */
export function toolLogsOf(context: ToolLoopContext): ToolExecutionRecord[] {
  const round = [...context.roundRecords].sort((a, b) => a.index - b.index);
  return [...context.donePlans, ...round.map((r) => r.record)];
}
