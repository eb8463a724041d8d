import { and, assign, fromCallback, not, sendTo, setup } from 'xstate';
import { converge } from '../src/plan/converge.js';
import * as approvals from './approvals.js';
import { approval, expiry, rejection } from './approvals.js';
import { initialContext } from './tool-loop-context.js';
import * as requests from './tool-loop-effect-requests.js';
import * as failures from './tool-loop-failures.js';
import { toolLoopOutput, withResponse } from './tool-loop-output.js';
import * as rounds from './tool-loop-rounds.js';
import type {
  StopReason,
  ToolLoopContext,
  ToolLoopEffectRequest,
  ToolLoopEvent,
  ToolLoopInput,
  ToolLoopOutput,
} from './tool-loop-types.js';

export { toolLogsOf } from './tool-loop-output.js';
export type {
  ExecuteEvent,
  ExecuteInput,
  PlannedRound,
  PlanOutcome,
  RespondInput,
  ResponseOutcome,
  StopReason,
  ToolLoopApprovals,
  ToolLoopConfig,
  ToolLoopContext,
  ToolLoopEffectRequest,
  ToolLoopEvent,
  ToolLoopFailure,
  ToolLoopInput,
  ToolLoopOutput,
} from './tool-loop-types.js';

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
//
// This file is the policy: setup() names every guard, action and delay, then the states say
// which follows which, under which guard. Bodies longer than a line live in sibling modules by
// concern: tool-loop-rounds.ts (plans, rounds, the tool call budget), tool-loop-effect-requests.ts
// (what the host is asked), approvals.ts, tool-loop-failures.ts and tool-loop-output.ts (how a
// run ends); the context it starts with in tool-loop-context.ts, types in tool-loop-types.ts.

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
    isToolCallBudgetSpent: rounds.isToolCallBudgetSpent,
    isOverToolCallBudget: rounds.isOverToolCallBudget,
    isMalformedPlan: rounds.isMalformedPlan,
    canRetryPlan: rounds.canRetryPlan,
    wantsResponse: ({ context }) => context.plan?.nextAction !== 'execute',
    hasNoCommands: ({ context }) => (context.plan?.executionCommands.length ?? 0) === 0,
    shouldExecute: and([not('wantsResponse'), not('hasNoCommands')]),
    wouldPassToolCallBudget: and(['shouldExecute', 'isOverToolCallBudget']),
    shouldRespond: ({ context }) => context.config.respond,
    isPlanOnly: ({ context }) => context.config.planOnly === true,
    hasTimeout: ({ context }) => context.config.timeout !== undefined,
    // A decision counts for a command that waits for one; a second decision on it is ignored.
    // An APPROVE / REJECT of another shape is an InputError (decidesWaitingCall).
    isAwaitingDecision: ({ context, event }) =>
      approvals.decidesWaitingCall(context.approvals, event),
    hasNoPendingApprovals: ({ context }) => context.approvals.awaiting.length === 0,
    shouldFailOnApprovalTimeout: and([
      'isAwaitingDecision',
      ({ context }) => context.config.approvalTimeout === 'fail',
    ]),
  },
  actions: {
    requestPlan: sendTo('effects', requests.planRequest),
    requestExecution: sendTo('effects', requests.executionRequest),
    requestResponse: sendTo('effects', requests.responseRequest),
    cancelEffects: sendTo('effects', requests.cancelRequest),
    recordApprovalRequest: assign(approvals.withApprovalRequest<ToolLoopContext>),
    forgetWaitingCalls: assign(({ context }) => ({
      approvals: { ...context.approvals, awaiting: [] },
    })),
    recordDecision: assign(approvals.withDecisionRecorded<ToolLoopContext>),
    forwardDecision: sendTo('effects', approvals.decisionRequest),
    failOnApprovalTimeout: assign(approvals.withApprovalTimeoutFailure<ToolLoopContext>),
    stopWith: assign((_, params: { reason: StopReason }) => ({ stopReason: params.reason })),
    recordPlan: assign(rounds.withPlan),
    recordPlanError: assign(rounds.withPlanError),
    recordFinishedCommand: assign(rounds.withFinishedCommand),
    recordRound: assign(rounds.withRound),
    converge: assign({ convergence: ({ context }) => converge(context.donePlans) }),
    recordResponse: assign(withResponse),
    fail: assign(failures.withErrorFailure),
    failOnMalformedPlan: assign(failures.withMalformedPlanFailure),
    failOnTimeout: assign({ failure: failures.timeoutFailure }),
    failOnAbort: assign(failures.withAbortFailure),
  },
}).createMachine({
  id: 'toolLoop',
  context: initialContext,
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
  output: toolLoopOutput,
});
