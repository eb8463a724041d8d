import {
  and,
  assign,
  fromCallback,
  not,
  or,
  type StateMachine,
  sendTo,
  setup,
  stateIn,
} from 'xstate';
import type { ApprovalDecision } from '../src/approvals/approval.js';
import { compileTurn } from '../src/compile/compile-turn.js';
import { type ContextMutation, mutate } from '../src/compile/mutations.js';
import { pendingToolCalls } from '../src/compile/tool-linkage.js';
import { ConfigError, InputError } from '../src/errors.js';
import type { ToolResult } from '../src/messages.js';
import { responseText, responseToolCalls } from '../src/model/language-model.js';
import { Transcript } from '../src/transcript.js';
import { addUsage, type Usage, ZERO_USAGE } from '../src/usage.js';
import {
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
import {
  budgetCrossed,
  type CallEstimate,
  isOverCostLimit,
  isOverToolCallBudget,
  nextCallEstimate,
  runCost,
  toolCallsMade,
} from './budgets.js';
import { runDataOf, settledTranscript } from './chain-output.js';
import {
  callKey,
  duplicateCallResult,
  hasTokenBudget,
  isOverIterationLimit,
  isOverTokenLimit,
  planDuplicateCalls,
  warningPoint,
  withUniqueIds,
} from './chain-policy.js';
import { answersOpenCall, cutShortStep, stepOf } from './chain-steps.js';
import {
  answerText,
  callsLeftByFailure,
  cancelledCalls,
  conclusionNote,
  directReturn,
  directReturnCall,
  earlyStopMessage,
  type StopLimit,
} from './early-stopping.js';

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

import type {
  ChainContext,
  ChainEffectRequest,
  ChainEvent,
  ChainFailure,
  ChainInput,
  ChainOutput,
  ExecuteToolsOutput,
  ValidationOutcome,
} from './chain-types.js';

// The chain (seed 000): idle → preparing → thinking → doing → preparing → thinking … →
// validating → succeeded, or failed. Pure: the machine does no IO. Its three effects —
// `callModel`, `executeTools`, `validateResult` — are requests it sends to one long-lived
// actor, `effects`, invoked for the whole run and supplied by the runtime
// (src/chain/create-chain.ts) with `machine.provide()`, or by tests. The effect answers
// with `<effect>.done` / `<effect>.error` events (and `executeTools.result` for each call of a
// tool step as it finishes, so that a step cut short keeps what ran: chain-steps.ts); a
// `cancel` request (the time limit) makes the host abort what is in flight and drop its
// answers. Why one host instead of an invoke per
// state: spawning a child actor per step costs XState ~75 µs, most of a step's budget
// (DESIGN.md, `npm run bench`); events keep every effect visible in the inspector, make
// the event log the run's journal, and let traversal drive the machine with plain events.
// Guards and actions carry the seed's names, so the inspector shows the seed's lifecycle:
// canThink → beforeThink → onEnterThinking, canDo → beforeDo → onEnterDoing (which hands the
// calls to the effects actor), canSucceed / canFail → afterSucceed.
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

const NO_DUPLICATES: ChainContext['duplicates'] = { history: [], warned: [] };

/** Tokens spent once this event's model response is counted (guards run before actions). */
function tokensAfter(context: ChainContext, event: ChainEvent): number {
  return (
    context.usage.totalTokens +
    (event.type === 'callModel.done' ? event.output.usage.totalTokens : 0)
  );
}

/** The run's usage once this event's model response is counted. */
function usageAfter(context: ChainContext, event: ChainEvent): Usage {
  return event.type === 'callModel.done'
    ? addUsage(context.usage, event.output.usage)
    : context.usage;
}

/** How many calls the response being decided on asks for: this event's, or the recorded one. */
function callsRequested(context: ChainContext, event: ChainEvent): number {
  if (event.type !== 'callModel.done') return context.toolCalls.length;
  let calls = 0;
  for (const part of event.output.content) if (part.type === 'tool-call') calls++;
  return calls;
}

/**
 * What the next model call is expected to spend (SPEC H3), before it is compiled: `extra` are
 * texts it will get that are not pending yet (the final call's note).
 */
function nextCall(context: ChainContext, extra?: readonly string[]): CallEstimate {
  return nextCallEstimate({
    steps: context.steps,
    transcript: context.transcript,
    pending: context.pending,
    contract: context.config.contract,
    maxOutputTokens: context.config.maxOutputTokens,
    ...(extra && { extra }),
  });
}

/** The budget the next call would cross; undefined when it fits. */
function nextCallCrosses(context: ChainContext, extra?: readonly string[]) {
  return budgetCrossed(context.usage, nextCall(context, extra), context.config);
}

/** The note of the final call, which the check before that call counts. */
function finalCallNote(context: ChainContext): string {
  return conclusionNote(context.limitReached ?? 'maxIterations');
}

/** Whether the response being decided on asks for tools: this event's, or the recorded one. */
function hasCallsAfter(context: ChainContext, event: ChainEvent): boolean {
  // Checked without building the call list: guards run on every model answer.
  return event.type === 'callModel.done'
    ? event.output.content.some((part) => part.type === 'tool-call')
    : context.toolCalls.length > 0;
}

export function failure(
  code: ChainFailure['code'],
  message: string,
  cause?: unknown,
): ChainFailure {
  return cause === undefined ? { code, message } : { code, message, cause };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

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
    isOverIterationLimit: ({ context }) =>
      isOverIterationLimit(context.iterations, context.config.maxIterations),
    isOverTokenLimit: ({ context, event }) =>
      isOverTokenLimit(tokensAfter(context, event), context.config.maxTokens),
    canThink: ({ context }) =>
      !isOverIterationLimit(context.iterations, context.config.maxIterations) &&
      hasTokenBudget(context.usage.totalTokens, context.config.maxTokens),
    canFail: ({ context }) =>
      isOverIterationLimit(context.iterations, context.config.maxIterations) ||
      !hasTokenBudget(context.usage.totalTokens, context.config.maxTokens),
    shouldWarnIterations: ({ context }) => {
      const warning = context.config.warnings.iterations;
      return (
        !!warning &&
        !context.warned.iterations &&
        context.iterations >= warningPoint(context.config.maxIterations, warning.threshold)
      );
    },
    shouldWarnTokens: ({ context }) => {
      const warning = context.config.warnings.tokens;
      return (
        !!warning &&
        !context.warned.tokens &&
        context.usage.totalTokens >= warningPoint(context.config.maxTokens, warning.threshold)
      );
    },
    hasToolCalls: ({ context, event }) => hasCallsAfter(context, event),
    hasEarlyStopping: ({ context }) => context.config.earlyStopping !== undefined,
    // SPEC D3: without earlyStopping, `doing` is unreachable once the generations reach
    // maxIterations: the calls of the last allowed generation are not run, because no
    // generation could read their results. With earlyStopping they run (LangChain's
    // AgentExecutor: an iteration is a model call and its tools), and the final answer of
    // 'generate' reads them.
    mayRunTools: and(['hasToolCalls', or([not('isOverIterationLimit'), 'hasEarlyStopping'])]),
    // SPEC H3: the calls made so far and those asked for now would pass maxToolCalls.
    isOverToolCallBudget: ({ context, event }) =>
      context.config.maxToolCalls !== undefined &&
      isOverToolCallBudget(
        toolCallsMade(context.steps),
        callsRequested(context, event),
        context.config.maxToolCalls,
      ),
    // The seed-002 semantics: none of the calls runs, and a final call without tools answers.
    shouldAnswerWithoutTools: and(['mayRunTools', 'isOverToolCallBudget']),
    canDo: and(['mayRunTools', not('isOverToolCallBudget')]),
    isOverCostLimit: ({ context, event }) =>
      isOverCostLimit(usageAfter(context, event), context.config),
    // SPEC H3: the next call would cross maxTokens or maxCost, by its estimate: it is not made.
    isNextCallOverBudget: ({ context }) => nextCallCrosses(context) !== undefined,
    // maxIterations 0 with 'force': no model call, the stop message.
    shouldForceStopAtStart: and(['isOverIterationLimit', 'shouldForceStop']),
    // maxExecutionTime 0: the time is up before the first model call (LangChain's
    // AgentExecutor checks it before its first step); its timer would fire only after.
    hasNoTimeToStart: ({ context }) => context.config.maxExecutionTime === 0,
    shouldForceStopOutOfTime: and(['hasNoTimeToStart', 'shouldForceStop']),
    canSucceed: (_, params: { outcome: ValidationOutcome }) => params.outcome.ok,
    // Once a limit stopped the run, this timer is spent: the final answer's own bound is the
    // effects host's (maxExecutionTime again, from when the final call starts).
    hasExecutionTimeLimit: ({ context }) =>
      context.config.maxExecutionTime !== undefined && context.limitReached === undefined,
    // The time limit cut a tool step short: its generation is still a step, so that the
    // steps' usage sums to the run's, and its calls are the ones to close.
    isCutShortInDoing: and(['hasExecutionTimeLimit', 'isRunningTools']),
    // A step's tools are running (some may wait for a decision): a stop now cuts it short.
    isRunningTools: or([stateIn('doing'), stateIn('awaitingApproval')]),
    // A decision counts for a call that waits for one; a second decision on it is ignored.
    // An APPROVE / REJECT of another shape is an InputError (decidesWaitingCall).
    isAwaitingDecision: ({ context, event }) => decidesWaitingCall(context.approvals, event),
    hasNoPendingApprovals: ({ context }) => context.approvals.awaiting.length === 0,
    // A result counts once, for a call of the step in progress.
    isOpenCallResult: ({ context }, params: { result: ToolResult }) =>
      answersOpenCall(context, params.result),
    shouldFailOnApprovalTimeout: and([
      'isAwaitingDecision',
      ({ context }) => context.config.approvalTimeout === 'fail',
    ]),
    // No generation left while tokens remain: the iteration limit, not the budget, ends the run.
    isOutOfIterations: ({ context }) =>
      isOverIterationLimit(context.iterations, context.config.maxIterations) &&
      hasTokenBudget(context.usage.totalTokens, context.config.maxTokens),
    // A blocked duplicate has no result here, and its warning is no answer: it never returns.
    isDirectReturn: ({ context }, params: { output: ExecuteToolsOutput }) =>
      directReturn(context.toolCalls, params.output.results, context.config.returnDirectTools) !==
      undefined,
    // maxToolCalls always ends with a final call, whatever earlyStopping says.
    shouldForceStop: ({ context }) =>
      context.config.earlyStopping === 'force' && context.limitReached !== 'maxToolCalls',
    // The final call of 'generate', or of maxToolCalls, is made only if it fits the budgets
    // (SPEC H3): it is checked before it is made, as every call is.
    shouldGenerateFinalAnswer: ({ context }) =>
      (context.config.earlyStopping === 'generate' || context.limitReached === 'maxToolCalls') &&
      nextCallCrosses(context, [finalCallNote(context)]) === undefined,
    // The answer of the final call early stopping made: it is never corrected, so it never loops.
    isFinalAnswer: ({ context }) => context.limitReached !== undefined,
    // The call could not be made as configured (a remote tool named like a local one): the
    // run fails with the configuration's error, not the provider's.
    isConfigurationError: ({ event }) =>
      event.type === 'callModel.error' && ConfigError.isInstance(event.error),
    hasAnswerText: ({ event }) =>
      event.type === 'callModel.done' && responseText(event.output).trim() !== '',
  },
  actions: {
    insertIterationWarning: assign(({ context }) => ({
      pending: [
        ...context.pending,
        mutate.systemNote(context.config.warnings.iterations?.prompt ?? ''),
      ],
      warned: { ...context.warned, iterations: true },
    })),
    insertTokenWarning: assign(({ context }) => ({
      pending: [
        ...context.pending,
        mutate.systemNote(context.config.warnings.tokens?.prompt ?? ''),
      ],
      warned: { ...context.warned, tokens: true },
    })),
    // The seed's before_think: compile the turn, applying everything pending.
    beforeThink: assign(({ context }) => {
      const turn = compileTurn({
        transcript: context.transcript,
        mutations: context.pending,
        snapshot: context.snapshot,
        contract: context.config.contract,
      });
      return {
        transcript: turn.transcript,
        snapshot: turn.snapshot,
        request: turn.messages,
        pending: [],
        mutationLog: context.pending.length
          ? [...context.mutationLog, context.pending]
          : context.mutationLog,
      };
    }),
    // The seed's on_enter_thinking: count the generation about to be made.
    onEnterThinking: assign({ iterations: ({ context }) => context.iterations + 1 }),
    requestModelCall: sendTo('effects', ({ context }) => ({
      type: 'callModel' as const,
      input: { messages: context.request, iteration: context.iterations },
    })),
    // The seed's on_enter_doing: hand the calls (duplicates already answered) to the tools,
    // naming the one whose output would be the answer.
    onEnterDoing: sendTo('effects', ({ context }) => {
      const calls = context.toolCalls.filter(
        (call) => !context.stepResults.some((r) => r.toolCallId === call.id),
      );
      const direct = directReturnCall(context.toolCalls, context.config.returnDirectTools);
      return {
        type: 'executeTools' as const,
        input: direct && calls.includes(direct) ? { calls, directCallId: direct.id } : { calls },
      };
    }),
    requestValidation: sendTo('effects', ({ context }) => ({
      type: 'validateResult' as const,
      input: { text: answerTextOf(context) },
    })),
    recordResponse: assign(({ context, event }) => {
      const response = (event as Extract<ChainEvent, { type: 'callModel.done' }>).output;
      const toolCalls = withUniqueIds(responseToolCalls(response), context.iterations);
      const text = responseText(response);
      return {
        response,
        toolCalls,
        usage: addUsage(context.usage, response.usage),
        // The output reaches the transcript as a mutation, applied at the next compile.
        pending: [...context.pending, mutate.assistantMessage(text, toolCalls)],
      };
    }),
    // SPEC H3, the seed-002 semantics: a response whose calls would pass maxToolCalls is a
    // step (its usage counts) whose calls never run, and its message stays out of the
    // transcript, so the final call sees the conversation as it was before it, with no call
    // left unanswered.
    recordOverBudgetResponse: assign(({ context, event }) => {
      const response = (event as Extract<ChainEvent, { type: 'callModel.done' }>).output;
      const toolCalls = withUniqueIds(responseToolCalls(response), context.iterations);
      const next = { ...context, response, toolCalls };
      return {
        response,
        toolCalls,
        usage: addUsage(context.usage, response.usage),
        steps: [...context.steps, { ...stepOf(next, []), overBudget: true as const }],
      };
    }),
    // The final call's answer, whatever follows it (validation, or failing for its size or its
    // missing text): calls it made anyway are dropped, since a request without tools cannot
    // have them run, and a kept call would leave the transcript with a call nothing answers.
    recordFinalAnswer: assign(({ context, event }) => {
      const response = (event as Extract<ChainEvent, { type: 'callModel.done' }>).output;
      const text = responseText(response);
      return {
        response,
        toolCalls: [],
        usage: addUsage(context.usage, response.usage),
        pending: [...context.pending, mutate.assistantMessage(text)],
      };
    }),
    // The seed's before_do: answer blocked duplicate calls instead of running them.
    beforeDo: assign(({ context }) => {
      const { blocked, history } = planDuplicateCalls(context.toolCalls, {
        history: context.duplicates.history,
        warned: context.duplicates.warned,
        warnTools: context.config.warnRecursiveCalls ? context.config.duplicateWarnTools : [],
      });
      return {
        stepResults: blocked.map(duplicateCallResult),
        duplicates: { history, warned: blocked.map(callKey) },
      };
    }),
    // One call finished: kept until the step ends, so a step cut short keeps it (SPEC Q8).
    recordCallResult: assign(({ context }, params: { result: ToolResult }) => ({
      stepResults: [...context.stepResults, params.result],
    })),
    recordToolResults: assign(({ context }, params: { output: ExecuteToolsOutput }) => {
      const { output } = params;
      // The step's answer has every executed call's result; the blocked ones are the machine's.
      const byId = new Map(
        [...context.stepResults, ...output.results].map((r) => [r.toolCallId, r]),
      );
      const results = context.toolCalls.map(
        (call) =>
          byId.get(call.id) ?? {
            toolCallId: call.id,
            name: call.name,
            output: null,
            success: false,
            error: `Tool '${call.name}' returned no result.`,
          },
      );
      const notes: ContextMutation[] = [];
      const instructions = context.config.toolResponseInstructions;
      if (instructions && (instructions.when === 'always' || output.openedStream)) {
        notes.push(mutate.systemNote(instructions.text));
      }
      for (const batch of output.streamBatches) {
        notes.push(
          mutate.systemNote(
            `Stream ${batch.streamId} of tool '${batch.toolName}' sent ${batch.chunks.length} more chunk(s)` +
              `${batch.done ? ' and ended' : ''}:\n${batch.chunks.map((c) => (typeof c === 'string' ? c : JSON.stringify(c))).join('\n')}`,
          ),
        );
      }
      return {
        pending: [...context.pending, ...results.map(mutate.toolResult), ...notes],
        steps: [...context.steps, stepOf(context, results)],
        stepResults: [],
      };
    }),
    // A generation whose calls are not run (an answer, or a limit reached) is a step too.
    recordStep: assign({ steps: ({ context }) => [...context.steps, stepOf(context, [])] }),
    // The time limit, an abort, a hook or the host failing, or a decision's deadline cut a
    // step short (SPEC Q8): every call that finished keeps its result, in the step (so in
    // intermediateSteps) and in the transcript, like the blocked duplicates answered before
    // anything ran; only the calls that did not finish are left for the ending to answer as
    // not run. Its calls no longer wait for anyone: the step is over.
    recordCutShortStep: assign(({ context }) => cutShortStep(context)),
    reachLimit: assign((_, params: { limit: StopLimit }) => ({ limitReached: params.limit })),
    recordApprovalRequest: assign(({ context, event }) => {
      const { request } = event as Extract<ChainEvent, { type: 'approval.requested' }>;
      return { approvals: withRequest(context.approvals, request) };
    }),
    // A reason is cut to the run's limit before it is kept, journaled or read by the model.
    recordDecision: assign(({ context }, params: { decision: ApprovalDecision }) => ({
      approvals: withDecision(
        context.approvals,
        withinReasonLimit(params.decision, context.config),
      ),
    })),
    // The host journals the decision and runs, or answers, the call.
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
    // The budget the next call would cross stops the run (SPEC H3).
    reachBudgetLimit: assign(({ context }) => ({
      limitReached: nextCallCrosses(context) ?? 'maxTokens',
    })),
    // The host aborts what is in flight and drops its answer: no late answer reaches `stopping`'s successors.
    cancelEffects: sendTo('effects', ({ context }) => ({
      type: 'cancel' as const,
      reason: context.limitReached ?? 'maxExecutionTime',
    })),
    // The calls the transcript still waits on: the last step's, when a limit cut them off.
    // A failed run answers the calls it leaves open (SPEC Q6): its transcript is valid input
    // for the next run. A limit's wording when a limit stopped it, else the failure's message.
    closeCallsLeftOpen: assign(({ context }) => {
      const { calls } = pendingToolCalls(settledTranscript(context));
      if (calls.length === 0) return {};
      const closing = context.limitReached
        ? cancelledCalls(calls, context.limitReached)
        : callsLeftByFailure(calls, context.failure?.message ?? 'it ended');
      return { pending: [...context.pending, ...closing] };
    }),
    closeOpenCalls: assign(({ context }) => ({
      pending: [
        ...context.pending,
        ...cancelledCalls(
          pendingToolCalls(settledTranscript(context)).calls,
          context.limitReached ?? 'maxIterations',
        ),
      ],
    })),
    insertConclusionNote: assign(({ context }) => ({
      pending: [
        ...context.pending,
        mutate.systemNote(conclusionNote(context.limitReached ?? 'maxIterations')),
      ],
    })),
    requestFinalAnswer: sendTo('effects', ({ context }) => ({
      type: 'callModel' as const,
      input: { messages: context.request, iteration: context.iterations, final: true },
    })),
    // LangChain's 'force': the run ends with a stop message, which is text, never validated.
    forceStop: assign({
      result: ({ context }) => earlyStopMessage(context.limitReached ?? 'maxIterations'),
    }),
    appendCorrection: assign(({ context }, params: { message: string }) => ({
      pending: [...context.pending, mutate.systemNote(params.message)],
    })),
    // The seed's after_succeed: keep the result and cache it for the chains that follow.
    afterSucceed: assign(({ context }, params: { value: unknown }) => {
      const { value } = params;
      let intermediateResults = context.intermediateResults;
      if (context.config.catchIntermediateResult) {
        if (value && typeof value === 'object' && !Array.isArray(value)) {
          intermediateResults = { ...intermediateResults, ...(value as Record<string, unknown>) };
        } else if (typeof value === 'string' && context.config.resultCacheKey) {
          intermediateResults = { ...intermediateResults, [context.config.resultCacheKey]: value };
        }
      }
      return { result: value, intermediateResults };
    }),
    failOnTokenLimit: assign({ failure: ({ context }) => tokenLimitFailure(context) }),
    failOnTimeLimit: assign({ failure: ({ context }) => timeLimitFailure(context) }),
    failOnCostLimit: assign({ failure: ({ context }) => costLimitFailure(context) }),
    failOnLimits: assign({
      failure: ({ context }) =>
        !hasTokenBudget(context.usage.totalTokens, context.config.maxTokens)
          ? tokenLimitFailure(context)
          : iterationLimitFailure(context),
    }),
    // The limit that stopped the run is the failure, with or without earlyStopping: a run
    // that also spent its budget exactly did not exceed it. That budget is why 'generate'
    // made no final call here, and the message says so.
    failOnStop: assign({ failure: ({ context }) => stopFailure(context) }),
    failOnFinalAnswer: assign(({ context }, params: { problem: string }) => ({
      failure: failure(
        'PROTOCOL_ERROR',
        `The final answer after reaching ${context.limitReached} ${params.problem}`,
      ),
    })),
    failOnError: assign((_, params: { code: ChainFailure['code']; error: unknown }) => ({
      failure: failure(params.code, errorMessage(params.error), params.error),
    })),
    failOnAbort: assign((_, params: { reason: string | undefined }) => ({
      failure: failure(
        'ABORTED',
        params.reason ? `The run was cancelled: ${params.reason}` : 'The run was cancelled',
      ),
    })),
  },
}).createMachine({
  id: 'chain',
  context: ({ input }) => {
    checkMachineInput(input);
    const transcript = Transcript.from(input.messages);
    return {
      config: input.config,
      transcript,
      pending: [],
      mutationLog: [],
      snapshot: undefined,
      request: transcript,
      iterations: 0,
      usage: ZERO_USAGE,
      warned: { iterations: false, tokens: false },
      response: undefined,
      toolCalls: [],
      stepResults: [],
      duplicates: NO_DUPLICATES,
      approvals: NO_APPROVALS,
      steps: [],
      limitReached: undefined,
      result: undefined,
      intermediateResults: input.intermediateResults ?? {},
      failure: undefined,
    };
  },
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
  output: ({ context }): ChainOutput => {
    const data = runDataOf(context);
    if (context.failure) return { ...data, status: 'failed', failure: context.failure };
    const { limitReached: reason } = context;
    // maxToolCalls's final call answers whatever earlyStopping says.
    const method = reason === 'maxToolCalls' ? 'generate' : context.config.earlyStopping;
    const forced = reason !== undefined && method === 'force';
    return {
      ...data,
      status: 'succeeded',
      result: context.result,
      text: forced ? earlyStopMessage(reason) : answerTextOf(context),
      ...(reason && method && { stopped: { reason, method } }),
    };
  },
});

/**
 * The machine runs only on what `chain.input(...)` makes: an app that invokes it with other
 * input learns so here, not from a TypeError deep in a guard (issue 13, defect 9).
 */
function checkMachineInput(input: unknown): asserts input is ChainInput {
  const candidate = input as Partial<ChainInput> | undefined;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.config !== 'object' ||
    candidate.config === null ||
    !Array.isArray(candidate.messages)
  ) {
    throw new InputError(
      "The chain machine needs the input chain.input(...) makes ({ config, messages }): invoke it with `input: ({ context }) => chain.input('…')`",
    );
  }
}

function iterationLimitFailure(context: ChainContext): ChainFailure {
  return {
    code: 'PROTOCOL_ERROR',
    message: `Reached maxIterations (${context.config.maxIterations}) without a final answer`,
    limit: context.config.maxIterations,
  };
}

function answerTextOf(context: ChainContext): string {
  return answerText(context.steps, context.response, context.config.returnDirectTools);
}

function timeLimitFailure(context: ChainContext): ChainFailure {
  const ms = context.config.maxExecutionTime ?? 0;
  return {
    code: 'TIMEOUT',
    message: `Reached maxExecutionTime (${ms} ms) without a final answer`,
    limit: ms,
  };
}

/** The failure of the limit that stopped the run, when no early stopping ended it. */
function stopFailure(context: ChainContext): ChainFailure {
  const limit = context.limitReached ?? 'maxIterations';
  if (limit === 'maxTokens' || limit === 'maxCost') return budgetFailure(context, limit);
  if (limit === 'maxToolCalls') {
    // Its final call would cross a budget: that budget's failure, saying why it was the last.
    const budget = nextCallCrosses(context, [finalCallNote(context)]) ?? 'maxTokens';
    const failed = budgetFailure(context, budget, [finalCallNote(context)]);
    return {
      ...failed,
      message: `maxToolCalls (${context.config.maxToolCalls}) was reached, and the final call without tools ${failed.message.replace(/^The next model call /, '')}`,
    };
  }
  const stopped =
    limit === 'maxExecutionTime' ? timeLimitFailure(context) : iterationLimitFailure(context);
  // 'generate' made no final call only when it would not fit a budget.
  return context.config.earlyStopping === 'generate'
    ? { ...stopped, message: `${stopped.message}; ${noBudgetToConclude(context)}` }
    : stopped;
}

/** Why earlyStopping 'generate' made no final call: it would have spent beyond a budget. */
function noBudgetToConclude(context: ChainContext): string {
  const { maxTokens } = context.config;
  if (!hasTokenBudget(context.usage.totalTokens, maxTokens)) {
    return `earlyStopping 'generate' made no final call: all ${maxTokens} tokens of maxTokens were spent`;
  }
  const budget = nextCallCrosses(context, [finalCallNote(context)]) ?? 'maxTokens';
  const why = budgetFailure(context, budget, [finalCallNote(context)]).message;
  return `earlyStopping 'generate' made no final call: it ${why.replace(/^The next model call /, '').replace(/; it was not made$/, '')}`;
}

function tokenLimitFailure(context: ChainContext): ChainFailure {
  return {
    code: 'TOKEN_LIMIT',
    message: `Token limit exceeded: used ${context.usage.totalTokens} of ${context.config.maxTokens} tokens`,
    limit: context.config.maxTokens,
  };
}

function costLimitFailure(context: ChainContext): ChainFailure {
  const maxCost = context.config.maxCost ?? 0;
  return {
    code: 'COST_LIMIT',
    message: `Cost limit exceeded: spent ${usd(runCost(context.usage, context.config.prices) ?? 0)} of ${usd(maxCost)}`,
    limit: maxCost,
  };
}

/** SPEC H3: the next call would cross `budget`, by its estimate, so it was not made. */
function budgetFailure(
  context: ChainContext,
  budget: 'maxTokens' | 'maxCost',
  extra?: readonly string[],
): ChainFailure {
  const estimate = nextCall(context, extra);
  const { usage, config } = context;
  const tokens = estimate.inputTokens + estimate.outputTokens;
  if (budget === 'maxTokens') {
    return {
      code: 'TOKEN_LIMIT',
      message: `The next model call would exceed maxTokens (${config.maxTokens}): about ${tokens} tokens with ${usage.totalTokens} spent; it was not made`,
      limit: config.maxTokens,
      estimate: tokens,
    };
  }
  const spent = runCost(usage, config.prices) ?? 0;
  const next =
    runCost(
      {
        inputTokens: estimate.inputTokens,
        outputTokens: estimate.outputTokens,
        totalTokens: tokens,
      },
      config.prices,
    ) ?? 0;
  const maxCost = config.maxCost ?? 0;
  return {
    code: 'COST_LIMIT',
    message: `The next model call would exceed maxCost (${usd(maxCost)}): about ${usd(next)} with ${usd(spent)} spent; it was not made`,
    limit: maxCost,
    estimate: next,
  };
}

/** US dollars for a message: four significant digits are plenty for a budget. */
function usd(amount: number): string {
  return `$${Number(amount.toPrecision(4))}`;
}

/**
 * The chain machine with its output's `result` typed `T` (SPEC R5): what `createChain<T>`
 * hands out as `chain.machine`. The machine itself cannot know T; the chain's validation
 * (outputSchema, or the answer text) is what makes the type true.
 */
export type ChainMachine<T = unknown> =
  typeof chainMachine extends StateMachine<
    infer TContext,
    infer TEvent,
    infer TChildren,
    infer TActor,
    infer TAction,
    infer TGuard,
    infer TDelay,
    infer TStateValue,
    infer TTag,
    infer TInput,
    ChainOutput,
    infer TEmitted,
    infer TMeta,
    infer TSchema
  >
    ? StateMachine<
        TContext,
        TEvent,
        TChildren,
        TActor,
        TAction,
        TGuard,
        TDelay,
        TStateValue,
        TTag,
        TInput,
        ChainOutput<T>,
        TEmitted,
        TMeta,
        TSchema
      >
    : never;
