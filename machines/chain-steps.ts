import { mutate } from '../src/compile/mutations.js';
import { pendingToolCalls } from '../src/compile/tool-linkage.js';
import type { ToolResult } from '../src/messages.js';
import { type ModelResponse, responseText } from '../src/model/language-model.js';
import type { Transcript } from '../src/transcript.js';
import type { ChainContext, ChainStep } from './chain-types.js';

// A chain's tool step as the machine records it (SPEC Q8). Each call's result reaches the
// machine as the call finishes (`executeTools.result`), and the step's results all together
// when it ends (`executeTools.done`); a step cut short — by the time limit, an abort, a hook
// or the host failing, a decision's deadline — keeps the results that reached it, so that a
// failed run's transcript answers "not run" only the calls that did not finish. Results are
// kept in call order, whatever order they arrived in: a durable run's replay delivers them
// in the order they were journaled, and must build the context the live run built. Pure.

/** The generation being recorded as a step, with these results. */
export function stepOf(context: ChainContext, toolResults: readonly ToolResult[]): ChainStep {
  const response = context.response as ModelResponse;
  return {
    iteration: context.iterations,
    text: responseText(response),
    toolCalls: context.toolCalls,
    toolResults,
    usage: response.usage,
    finishReason: response.finishReason,
  };
}

/**
 * Whether `result` answers a call of the step in progress that has no result yet. A result
 * of another step's call, or a second one for a call, is not the step's.
 */
export function answersOpenCall(context: ChainContext, result: ToolResult): boolean {
  const id = result.toolCallId;
  return (
    context.toolCalls.some((call) => call.id === id) &&
    !context.stepResults.some((known) => known.toolCallId === id)
  );
}

/** The results the step in progress has so far, in call order. */
export function stepResultsInOrder(context: ChainContext): ToolResult[] {
  const byId = new Map(context.stepResults.map((result) => [result.toolCallId, result]));
  return context.toolCalls.flatMap((call) => {
    const result = byId.get(call.id);
    return result ? [result] : [];
  });
}

/**
 * The step in progress, cut short: a step with the results that reached it (its generation's
 * usage counts, and intermediateSteps lists what ran), and those results in the transcript;
 * its other calls are left open for the run's ending to answer as not run. Nothing of it
 * waits for anyone any more.
 */
export function cutShortStep(
  context: ChainContext,
): Pick<ChainContext, 'pending' | 'steps' | 'stepResults' | 'approvals'> {
  const results = stepResultsInOrder(context);
  return {
    pending: [...context.pending, ...results.map(mutate.toolResult)],
    steps: [...context.steps, stepOf(context, results)],
    stepResults: [],
    approvals: { ...context.approvals, awaiting: [] },
  };
}

/**
 * Whether the run stopped in the middle of a tool step (an app's machine stopped it, or the
 * machine broke): its calls are waiting in the transcript and no step records them yet.
 */
export function isInToolStep(context: ChainContext, transcript: Transcript): boolean {
  if (context.toolCalls.length === 0) return false;
  if (context.steps.at(-1)?.iteration === context.iterations) return false;
  const open = new Set(pendingToolCalls(transcript).calls.map((call) => call.id));
  return context.toolCalls.some((call) => open.has(call.id));
}
