import { compileTurn } from '../src/compile/compile-turn.js';
import { type ContextMutation, mutate } from '../src/compile/mutations.js';
import { pendingToolCalls } from '../src/compile/tool-linkage.js';
import type { ToolResult } from '../src/messages.js';
import { responseText, responseToolCalls } from '../src/model/language-model.js';
import { addUsage } from '../src/usage.js';
import { settledTranscript } from './chain-output.js';
import { callKey, duplicateCallResult, planDuplicateCalls, withUniqueIds } from './chain-policy.js';
import { stepOf } from './chain-steps.js';
import type { ChainArgs, ChainContext, ChainEvent, ExecuteToolsOutput } from './chain-types.js';
import { callsLeftByFailure, cancelledCalls, conclusionNote } from './early-stopping.js';

// The chain's transcript as its actions keep it: each model answer, tool step and note
// reaches the transcript as a mutation, pending until the next turn is compiled (`beforeThink`),
// and every step is recorded with the generation it belongs to. Each function is the body of
// the action named in its comment. Pure.

type ContextArgs = Pick<ChainArgs, 'context'>;
type ModelAnswer = Extract<ChainEvent, { type: 'callModel.done' }>;

/**
 * Action `beforeThink` (the seed's before_think): compile the turn, applying everything
 * pending.
 */
export function compiledTurn({ context }: ContextArgs): Partial<ChainContext> {
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
}

/** Action `recordResponse`: the model's answer, its calls and its usage. */
export function withResponse({ context, event }: ChainArgs): Partial<ChainContext> {
  const response = (event as ModelAnswer).output;
  const toolCalls = withUniqueIds(responseToolCalls(response), context.iterations);
  const text = responseText(response);
  return {
    response,
    toolCalls,
    usage: addUsage(context.usage, response.usage),
    // The output reaches the transcript as a mutation, applied at the next compile.
    pending: [...context.pending, mutate.assistantMessage(text, toolCalls)],
  };
}

/**
 * Action `recordOverBudgetResponse` (SPEC H3, the seed-002 semantics): a response whose calls
 * would pass maxToolCalls is a step (its usage counts) whose calls never run, and its message
 * stays out of the transcript, so the final call sees the conversation as it was before it,
 * with no call left unanswered.
 */
export function withOverBudgetResponse({ context, event }: ChainArgs): Partial<ChainContext> {
  const response = (event as ModelAnswer).output;
  const toolCalls = withUniqueIds(responseToolCalls(response), context.iterations);
  const next = { ...context, response, toolCalls };
  return {
    response,
    toolCalls,
    usage: addUsage(context.usage, response.usage),
    steps: [...context.steps, { ...stepOf(next, []), overBudget: true as const }],
  };
}

/**
 * Action `recordFinalAnswer`: the final call's answer, whatever follows it (validation, or
 * failing for its size or its missing text). Calls it made anyway are dropped, since a request
 * without tools cannot have them run, and a kept call would leave the transcript with a call
 * nothing answers.
 */
export function withFinalAnswer({ context, event }: ChainArgs): Partial<ChainContext> {
  const response = (event as ModelAnswer).output;
  const text = responseText(response);
  return {
    response,
    toolCalls: [],
    usage: addUsage(context.usage, response.usage),
    pending: [...context.pending, mutate.assistantMessage(text)],
  };
}

/**
 * Action `beforeDo` (the seed's before_do): answer blocked duplicate calls instead of running
 * them.
 */
export function withDuplicatesAnswered({ context }: ContextArgs): Partial<ChainContext> {
  const { blocked, history } = planDuplicateCalls(context.toolCalls, {
    history: context.duplicates.history,
    warned: context.duplicates.warned,
    warnTools: context.config.warnRecursiveCalls ? context.config.duplicateWarnTools : [],
  });
  return {
    stepResults: blocked.map(duplicateCallResult),
    duplicates: { history, warned: blocked.map(callKey) },
  };
}

/**
 * Action `recordCallResult`: one call finished, kept until the step ends, so a step cut short
 * keeps it (SPEC Q8).
 */
export function withCallResult(
  { context }: ContextArgs,
  params: { result: ToolResult },
): Partial<ChainContext> {
  return { stepResults: [...context.stepResults, params.result] };
}

/**
 * Action `recordToolResults`: the step is over. Its answer has every executed call's result;
 * the blocked duplicates' are the machine's. Then the tool response instructions, and the
 * next batch of every open stream, as notes.
 */
export function withToolResults(
  { context }: ContextArgs,
  params: { output: ExecuteToolsOutput },
): Partial<ChainContext> {
  const { output } = params;
  const byId = new Map([...context.stepResults, ...output.results].map((r) => [r.toolCallId, r]));
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
}

/** Action `appendCorrection`: why the answer failed validation, for the next generation. */
export function withCorrection(
  { context }: ContextArgs,
  params: { message: string },
): Partial<ChainContext> {
  return { pending: [...context.pending, mutate.systemNote(params.message)] };
}

/** Action `insertConclusionNote`: what the final call without tools is told. */
export function withConclusionNote({ context }: ContextArgs): Partial<ChainContext> {
  return {
    pending: [
      ...context.pending,
      mutate.systemNote(conclusionNote(context.limitReached ?? 'maxIterations')),
    ],
  };
}

/** Action `closeOpenCalls`: the calls a limit cut off are answered as cancelled by it. */
export function withOpenCallsCancelled({ context }: ContextArgs): Partial<ChainContext> {
  return {
    pending: [
      ...context.pending,
      ...cancelledCalls(
        pendingToolCalls(settledTranscript(context)).calls,
        context.limitReached ?? 'maxIterations',
      ),
    ],
  };
}

/**
 * Action `closeCallsLeftOpen`: the calls the transcript still waits on (the last step's, when
 * a limit cut them off). A failed run answers the calls it leaves open (SPEC Q6), so its
 * transcript is valid input for the next run: a limit's wording when a limit stopped it, else
 * the failure's message.
 */
export function withCallsLeftOpenClosed({ context }: ContextArgs): Partial<ChainContext> {
  const { calls } = pendingToolCalls(settledTranscript(context));
  if (calls.length === 0) return {};
  const closing = context.limitReached
    ? cancelledCalls(calls, context.limitReached)
    : callsLeftByFailure(calls, context.failure?.message ?? 'it ended');
  return { pending: [...context.pending, ...closing] };
}
