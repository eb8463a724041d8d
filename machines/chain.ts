import { and, assign, fromCallback, not, or, sendTo, setup, stateIn } from 'xstate';
import * as approvals from './approvals.js';
import { approval, expiry, rejection } from './approvals.js';
import * as answers from './chain-answers.js';
import { initialContext } from './chain-context.js';
import * as requests from './chain-effect-requests.js';
import * as failures from './chain-failures.js';
import * as limits from './chain-limits.js';
import { chainOutput, forcedStopResult, withResult } from './chain-output.js';
import { cutShortStep, stepOf } from './chain-steps.js';
import * as transcript from './chain-transcript-actions.js';
import type {
  ChainContext,
  ChainEffectRequest,
  ChainEvent,
  ChainInput,
  ChainOutput,
  WithOutput,
} from './chain-types.js';
import type { StopLimit } from './early-stopping.js';

export { failure } from './chain-failures.js';
export type {
  CallModelInput,
  ChainApprovals,
  ChainConfig,
  ChainContext,
  ChainEffectRequest,
  ChainEvent,
  ChainFailure,
  ChainInput,
  ChainOutput,
  ChainRunData,
  ChainStep,
  ChainWarning,
  ExecuteToolsInput,
  ExecuteToolsOutput,
  StreamBatch,
  ValidateResultInput,
  ValidationOutcome,
} from './chain-types.js';

// The chain (seed 000): idle → preparing → thinking → doing → preparing → thinking … →
// validating → succeeded, or failed. Pure: the machine does no IO. Its three effects —
// `callModel`, `executeTools`, `validateResult` — are requests it sends to one long-lived
// actor, `effects`, invoked for the whole run and supplied by the runtime
// (src/chain/create-chain.ts) with `machine.provide()`, or by tests. The effect answers with
// `<effect>.done` / `<effect>.error` events (and `executeTools.result` for each call of a tool
// step as it finishes, so that a step cut short keeps what ran: chain-steps.ts); a `cancel`
// request (the time limit) makes the host abort what is in flight and drop its answers. Why
// one host instead of an invoke per state: spawning a child actor per step costs XState
// ~75 µs, most of a step's budget (DESIGN.md, `npm run bench`); events keep every effect
// visible in the inspector, make the event log the run's journal, and let traversal drive
// the machine with plain events. Guards and actions carry the seed's names, so the inspector
// shows the seed's lifecycle: canThink → beforeThink → onEnterThinking, canDo → beforeDo →
// onEnterDoing (which hands the calls to the effects actor), canSucceed / canFail → afterSucceed.
//
// This file is the policy: setup() names every guard, action and delay, then the states say
// which follows which, under which guard. Bodies longer than a line live in sibling modules by
// concern: chain-answers.ts (what an effect answered), chain-limits.ts (limits, budgets,
// warnings), chain-transcript-actions.ts, chain-effect-requests.ts (what the host is asked),
// approvals.ts, chain-failures.ts and chain-output.ts (how a run ends); types in chain-types.ts.
//
// SPEC R4 (LangChain's AgentExecutor): every way a run reaches maxIterations, and the
// `maxExecutionTime` timer, goes through the transient `stopping`, which fails the run, or
// with `earlyStopping` ends it with a stop message ('force') or one last model call without
// tools in `concluding` ('generate'). A single successful call of a returnDirect tool goes
// from `doing` straight to `validating`, its output the answer.
//
// SPEC H2: a call of a tool that needs approval moves the run from `doing` to
// `awaitingApproval` (the host asks, `approval.requested`) until every such call of the step
// is decided: APPROVE / REJECT from outside, or its deadline (`approval.timedOut`). Each
// decision is forwarded to the host (`decide`), which runs the approved call or answers the
// rejected one; the step's other calls run meanwhile. Only the host runs calls, and it runs
// a call that needs approval only once the machine forwarded an approval.
//
// SPEC H3, budgets (machines/budgets.ts): `preparing` checks maxTokens and maxCost before
// each model call, by an estimate, and a call that would cross one goes to `stopping` instead;
// a response whose calls would pass maxToolCalls runs none of them and goes to `stopping`,
// whose final call without tools answers. Every final call is made only if it fits. With
// earlyStopping, the last generation's tools run (`doing`) before the iteration limit stops
// the run. Cost is never kept: it is the price of the usage (config.prices).

export const chainMachine = setup({
  types: {
    context: {} as ChainContext,
    input: {} as ChainInput,
    output: {} as ChainOutput,
    events: {} as ChainEvent,
  },
  actors: {
    // A placeholder that answers nothing: the runtime provides the real host.
    effects: fromCallback<ChainEffectRequest>(() => {
      throw new Error('chainMachine: provide the effects actor (createChain does)');
    }),
  },
  delays: {
    // Without a limit the delayed event fires at once and `hasExecutionTimeLimit` ignores it.
    maxExecutionTime: ({ context }) => context.config.maxExecutionTime ?? 0,
  },
  guards: {
    isOverIterationLimit: limits.isOverIterationLimit,
    isOverTokenLimit: limits.isOverTokenLimit,
    canThink: limits.canThink,
    canFail: limits.canFail,
    shouldWarnIterations: limits.shouldWarnIterations,
    shouldWarnTokens: limits.shouldWarnTokens,
    hasToolCalls: answers.hasToolCalls,
    hasEarlyStopping: limits.hasEarlyStopping,
    // SPEC D3: without earlyStopping, `doing` is unreachable once the generations reach
    // maxIterations: the calls of the last allowed generation are not run, because no
    // generation could read their results. With earlyStopping they run (LangChain's
    // AgentExecutor: an iteration is a model call and its tools), and the final answer of
    // 'generate' reads them.
    mayRunTools: and(['hasToolCalls', or([not('isOverIterationLimit'), 'hasEarlyStopping'])]),
    isOverToolCallBudget: limits.isOverToolCallBudget,
    // The seed-002 semantics: none of the calls runs, and a final call without tools answers.
    shouldAnswerWithoutTools: and(['mayRunTools', 'isOverToolCallBudget']),
    canDo: and(['mayRunTools', not('isOverToolCallBudget')]),
    isOverCostLimit: limits.isOverCostLimit,
    isNextCallOverBudget: limits.isNextCallOverBudget,
    // maxIterations 0 with 'force': no model call, the stop message.
    shouldForceStopAtStart: and(['isOverIterationLimit', 'shouldForceStop']),
    hasNoTimeToStart: limits.hasNoTimeToStart,
    shouldForceStopOutOfTime: and(['hasNoTimeToStart', 'shouldForceStop']),
    canSucceed: answers.canSucceed,
    hasExecutionTimeLimit: limits.hasExecutionTimeLimit,
    // The time limit cut a tool step short: its generation is still a step, so that the
    // steps' usage sums to the run's, and its calls are the ones to close.
    isCutShortInDoing: and(['hasExecutionTimeLimit', 'isRunningTools']),
    // A step's tools are running (some may wait for a decision): a stop now cuts it short.
    isRunningTools: or([stateIn('doing'), stateIn('awaitingApproval')]),
    // A decision counts for a call that waits for one; a second decision on it is ignored.
    // An APPROVE / REJECT of another shape is an InputError (decidesWaitingCall).
    isAwaitingDecision: ({ context, event }) =>
      approvals.decidesWaitingCall(context.approvals, event),
    hasNoPendingApprovals: ({ context }) => context.approvals.awaiting.length === 0,
    isOpenCallResult: answers.isOpenCallResult,
    shouldFailOnApprovalTimeout: and([
      'isAwaitingDecision',
      ({ context }) => context.config.approvalTimeout === 'fail',
    ]),
    isOutOfIterations: limits.isOutOfIterations,
    isDirectReturn: answers.isDirectReturn,
    shouldForceStop: limits.shouldForceStop,
    shouldGenerateFinalAnswer: limits.shouldGenerateFinalAnswer,
    // The answer of the final call early stopping made: it is never corrected, so it never loops.
    isFinalAnswer: ({ context }) => context.limitReached !== undefined,
    isConfigurationError: answers.isConfigurationError,
    hasAnswerText: answers.hasAnswerText,
  },
  actions: {
    insertIterationWarning: assign(limits.withIterationWarning),
    insertTokenWarning: assign(limits.withTokenWarning),
    beforeThink: assign(transcript.compiledTurn),
    // The seed's on_enter_thinking: count the generation about to be made.
    onEnterThinking: assign({ iterations: ({ context }) => context.iterations + 1 }),
    requestModelCall: sendTo('effects', requests.modelCallRequest),
    onEnterDoing: sendTo('effects', requests.toolStepRequest),
    requestValidation: sendTo('effects', requests.validationRequest),
    recordResponse: assign(transcript.withResponse),
    recordOverBudgetResponse: assign(transcript.withOverBudgetResponse),
    recordFinalAnswer: assign(transcript.withFinalAnswer),
    beforeDo: assign(transcript.withDuplicatesAnswered),
    recordCallResult: assign(transcript.withCallResult),
    recordToolResults: assign(transcript.withToolResults),
    // A generation whose calls are not run (an answer, or a limit reached) is a step too.
    recordStep: assign({ steps: ({ context }) => [...context.steps, stepOf(context, [])] }),
    // The time limit, an abort, a hook or the host failing, or a decision's deadline cut a
    // step short (SPEC Q8): the calls that finished keep their results (chain-steps.ts).
    recordCutShortStep: assign(({ context }) => cutShortStep(context)),
    reachLimit: assign((_, params: { limit: StopLimit }) => ({ limitReached: params.limit })),
    recordApprovalRequest: assign(approvals.withApprovalRequest<ChainContext>),
    recordDecision: assign(approvals.withDecisionRecorded<ChainContext>),
    forwardDecision: sendTo('effects', approvals.decisionRequest),
    failOnApprovalTimeout: assign(approvals.withApprovalTimeoutFailure<ChainContext>),
    reachBudgetLimit: assign(limits.withBudgetLimitReached),
    cancelEffects: sendTo('effects', requests.cancelRequest),
    closeCallsLeftOpen: assign(transcript.withCallsLeftOpenClosed),
    closeOpenCalls: assign(transcript.withOpenCallsCancelled),
    insertConclusionNote: assign(transcript.withConclusionNote),
    requestFinalAnswer: sendTo('effects', requests.finalAnswerRequest),
    // LangChain's 'force': the run ends with a stop message, which is text, never validated.
    forceStop: assign({ result: forcedStopResult }),
    appendCorrection: assign(transcript.withCorrection),
    afterSucceed: assign(withResult),
    // How the run fails (chain-failures.ts).
    failOnTokenLimit: assign({ failure: failures.tokenLimitFailure }),
    failOnTimeLimit: assign({ failure: failures.timeLimitFailure }),
    failOnCostLimit: assign({ failure: failures.costLimitFailure }),
    failOnLimits: assign({ failure: failures.limitsFailure }),
    // The limit that stopped the run is the failure, with or without earlyStopping: a run
    // that also spent its budget exactly did not exceed it. That budget is why 'generate'
    // made no final call here, and the message says so.
    failOnStop: assign({ failure: failures.stopFailure }),
    failOnFinalAnswer: assign(failures.withFinalAnswerFailure),
    failOnError: assign(failures.withErrorFailure),
    failOnAbort: assign(failures.withAbortFailure),
  },
}).createMachine({
  id: 'chain',
  context: initialContext,
  initial: 'idle',
  invoke: { id: 'effects', src: 'effects' },
  // On the root, so it bounds the whole run from its start, whatever state it is in.
  after: {
    maxExecutionTime: [
      {
        guard: 'isCutShortInDoing',
        target: '.stopping',
        actions: [
          'recordCutShortStep',
          { type: 'reachLimit', params: { limit: 'maxExecutionTime' } },
          'cancelEffects',
        ],
      },
      {
        guard: 'hasExecutionTimeLimit',
        target: '.stopping',
        actions: [{ type: 'reachLimit', params: { limit: 'maxExecutionTime' } }, 'cancelEffects'],
      },
    ],
  },
  on: {
    ABORT: [
      // The generation whose tools were running is a step (as when maxExecutionTime cuts it
      // short): the steps' usage must add up to the run's, and its calls are the ones to close.
      {
        guard: 'isRunningTools',
        target: '.failed',
        actions: [
          'recordCutShortStep',
          { type: 'failOnAbort', params: ({ event }) => ({ reason: event.reason }) },
        ],
      },
      {
        target: '.failed',
        actions: { type: 'failOnAbort', params: ({ event }) => ({ reason: event.reason }) },
      },
    ],
  },
  states: {
    idle: {
      always: [
        // maxExecutionTime 0: no model call; 'force' answers with its stop message, and
        // 'generate' makes no final call either (it would be the run's first).
        {
          guard: 'shouldForceStopOutOfTime',
          target: 'stopping',
          actions: { type: 'reachLimit', params: { limit: 'maxExecutionTime' } },
        },
        { guard: 'hasNoTimeToStart', target: 'failed', actions: 'failOnTimeLimit' },
        { guard: 'canThink', target: 'preparing' },
        // maxIterations 0 (SPEC H3): no model call; 'force' answers with its stop message.
        {
          guard: 'shouldForceStopAtStart',
          target: 'stopping',
          actions: { type: 'reachLimit', params: { limit: 'maxIterations' } },
        },
        { target: 'failed', actions: 'failOnLimits' },
      ],
    },
    // The seed's before_think, as a transient state so each warning shows in the graph:
    // a warning is inserted once, as a system note before the next model call (SPEC C4).
    preparing: {
      always: [
        { guard: 'shouldWarnIterations', actions: 'insertIterationWarning' },
        { guard: 'shouldWarnTokens', actions: 'insertTokenWarning' },
        // SPEC H3: a call that would cross maxTokens or maxCost is not made.
        { guard: 'isNextCallOverBudget', target: 'stopping', actions: 'reachBudgetLimit' },
        { target: 'thinking', actions: 'beforeThink' },
      ],
    },
    thinking: {
      entry: ['onEnterThinking', 'requestModelCall'],
      on: {
        // The seed's condition_do: each way out of a model call, decided on its response.
        'callModel.done': [
          {
            guard: 'isOverTokenLimit',
            target: 'failed',
            actions: ['recordResponse', 'recordStep', 'failOnTokenLimit'],
          },
          {
            guard: 'isOverCostLimit',
            target: 'failed',
            actions: ['recordResponse', 'recordStep', 'failOnCostLimit'],
          },
          {
            guard: 'shouldAnswerWithoutTools',
            target: 'stopping',
            actions: [
              'recordOverBudgetResponse',
              { type: 'reachLimit', params: { limit: 'maxToolCalls' } },
            ],
          },
          {
            guard: 'canDo',
            target: 'doing',
            actions: ['recordResponse', 'beforeDo', 'onEnterDoing'],
          },
          {
            guard: 'hasToolCalls',
            target: 'stopping',
            actions: [
              'recordResponse',
              'recordStep',
              { type: 'reachLimit', params: { limit: 'maxIterations' } },
            ],
          },
          { target: 'validating', actions: ['recordResponse', 'recordStep'] },
        ],
        'callModel.error': [
          {
            guard: 'isConfigurationError',
            target: 'failed',
            actions: {
              type: 'failOnError',
              params: ({ event }) => ({ code: 'CONFIG_ERROR', error: event.error }),
            },
          },
          {
            target: 'failed',
            actions: {
              type: 'failOnError',
              params: ({ event }) => ({ code: 'MODEL_ERROR', error: event.error }),
            },
          },
        ],
      },
    },
    // The calls were handed to the host on the way in (onEnterDoing): a return from
    // `awaitingApproval` is the same step going on, not a new one.
    doing: {
      on: {
        'approval.requested': { target: 'awaitingApproval', actions: 'recordApprovalRequest' },
        'executeTools.result': {
          guard: { type: 'isOpenCallResult', params: ({ event }) => ({ result: event.result }) },
          actions: { type: 'recordCallResult', params: ({ event }) => ({ result: event.result }) },
        },
        'executeTools.done': [
          {
            guard: { type: 'isDirectReturn', params: ({ event }) => ({ output: event.output }) },
            target: 'validating',
            actions: {
              type: 'recordToolResults',
              params: ({ event }) => ({ output: event.output }),
            },
          },
          {
            guard: 'canThink',
            target: 'preparing',
            actions: {
              type: 'recordToolResults',
              params: ({ event }) => ({ output: event.output }),
            },
          },
          // The last generation's tools ran, with earlyStopping (SPEC H3): now the run stops,
          // at the limit that fired even when the budget is spent too.
          {
            guard: 'isOverIterationLimit',
            target: 'stopping',
            actions: [
              { type: 'recordToolResults', params: ({ event }) => ({ output: event.output }) },
              { type: 'reachLimit', params: { limit: 'maxIterations' } },
            ],
          },
          // Only when the last answer spent exactly the rest of the token budget.
          {
            target: 'failed',
            actions: [
              { type: 'recordToolResults', params: ({ event }) => ({ output: event.output }) },
              'failOnLimits',
            ],
          },
        ],
        'executeTools.error': {
          target: 'failed',
          actions: [
            'recordCutShortStep',
            {
              type: 'failOnError',
              params: ({ event }) => ({ code: 'CHAIN_ERROR', error: event.error }),
            },
          ],
        },
      },
    },
    // SPEC H2: some calls of the step wait for a person; the others run meanwhile.
    awaitingApproval: {
      always: { guard: 'hasNoPendingApprovals', target: 'doing' },
      on: {
        'approval.requested': { actions: 'recordApprovalRequest' },
        // The step's other calls, and the approved ones, finish meanwhile.
        'executeTools.result': {
          guard: { type: 'isOpenCallResult', params: ({ event }) => ({ result: event.result }) },
          actions: { type: 'recordCallResult', params: ({ event }) => ({ result: event.result }) },
        },
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
            { type: 'forwardDecision', params: ({ event }) => ({ decision: rejection(event) }) },
          ],
        },
        'approval.timedOut': [
          {
            guard: 'shouldFailOnApprovalTimeout',
            target: 'failed',
            actions: [
              {
                type: 'failOnApprovalTimeout',
                params: ({ event }) => ({ callId: event.callId, timeoutMs: event.timeoutMs }),
              },
              { type: 'recordDecision', params: ({ event }) => ({ decision: expiry(event) }) },
              { type: 'forwardDecision', params: ({ event }) => ({ decision: expiry(event) }) },
              'recordCutShortStep',
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
        // Only if the host broke: it answers a step once every call in it is decided.
        'executeTools.error': {
          target: 'failed',
          actions: [
            'recordCutShortStep',
            {
              type: 'failOnError',
              params: ({ event }) => ({ code: 'CHAIN_ERROR', error: event.error }),
            },
          ],
        },
      },
    },
    // The seed's condition_succeed: structured output and validateResult, on final answers.
    validating: {
      entry: 'requestValidation',
      on: {
        'validateResult.done': [
          {
            guard: { type: 'canSucceed', params: ({ event }) => ({ outcome: event.output }) },
            target: 'succeeded',
            actions: {
              type: 'afterSucceed',
              params: ({ event }) => ({ value: event.output.ok ? event.output.value : undefined }),
            },
          },
          {
            guard: 'isFinalAnswer',
            target: 'failed',
            actions: {
              type: 'failOnFinalAnswer',
              params: ({ event }) => ({
                problem: `failed validation: ${event.output.ok ? '' : event.output.message}`,
              }),
            },
          },
          {
            guard: 'canThink',
            target: 'preparing',
            actions: {
              type: 'appendCorrection',
              params: ({ event }) => ({ message: event.output.ok ? '' : event.output.message }),
            },
          },
          {
            guard: 'isOutOfIterations',
            target: 'stopping',
            actions: [
              {
                type: 'appendCorrection',
                params: ({ event }) => ({ message: event.output.ok ? '' : event.output.message }),
              },
              { type: 'reachLimit', params: { limit: 'maxIterations' } },
            ],
          },
          {
            guard: 'canFail',
            target: 'failed',
            actions: [
              {
                type: 'appendCorrection',
                params: ({ event }) => ({ message: event.output.ok ? '' : event.output.message }),
              },
              'failOnTokenLimit',
            ],
          },
        ],
        'validateResult.error': {
          target: 'failed',
          actions: {
            type: 'failOnError',
            params: ({ event }) => ({ code: 'CHAIN_ERROR', error: event.error }),
          },
        },
      },
    },
    // Where every limit leads (SPEC R4, H3), but a call that crossed a budget: fail, stop
    // early, or, at maxToolCalls, make the final call without tools.
    stopping: {
      always: [
        {
          guard: 'shouldGenerateFinalAnswer',
          target: 'concluding',
          actions: ['closeOpenCalls', 'insertConclusionNote', 'beforeThink'],
        },
        { guard: 'shouldForceStop', target: 'succeeded', actions: ['closeOpenCalls', 'forceStop'] },
        { target: 'failed', actions: 'failOnStop' },
      ],
    },
    // 'generate': one last model call, without tools. It must answer; it never loops.
    concluding: {
      entry: ['onEnterThinking', 'requestFinalAnswer'],
      on: {
        'callModel.done': [
          {
            guard: 'isOverTokenLimit',
            target: 'failed',
            actions: ['recordFinalAnswer', 'recordStep', 'failOnTokenLimit'],
          },
          {
            guard: 'isOverCostLimit',
            target: 'failed',
            actions: ['recordFinalAnswer', 'recordStep', 'failOnCostLimit'],
          },
          {
            guard: 'hasAnswerText',
            target: 'validating',
            actions: ['recordFinalAnswer', 'recordStep'],
          },
          {
            target: 'failed',
            actions: [
              'recordFinalAnswer',
              'recordStep',
              { type: 'failOnFinalAnswer', params: { problem: 'has no text' } },
            ],
          },
        ],
        'callModel.error': [
          {
            guard: 'isConfigurationError',
            target: 'failed',
            actions: {
              type: 'failOnError',
              params: ({ event }) => ({ code: 'CONFIG_ERROR', error: event.error }),
            },
          },
          {
            target: 'failed',
            actions: {
              type: 'failOnError',
              params: ({ event }) => ({ code: 'MODEL_ERROR', error: event.error }),
            },
          },
        ],
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final', entry: 'closeCallsLeftOpen' },
  },
  output: chainOutput,
});

/**
 * The chain machine with its output's `result` typed `T` (SPEC R5): what `createChain<T>`
 * hands out as `chain.machine`. The machine itself cannot know T; the chain's validation
 * (outputSchema, or the answer text) is what makes the type true.
 */
export type ChainMachine<T = unknown> = WithOutput<typeof chainMachine, ChainOutput<T>>;
