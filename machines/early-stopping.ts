import type { ContextMutation } from '../src/compile/mutations.js';
import { mutate } from '../src/compile/mutations.js';
import type { ToolCall, ToolResult } from '../src/messages.js';
import { type ModelResponse, responseText } from '../src/model/language-model.js';

// SPEC R4, LangChain's AgentExecutor semantics, as pure data and predicates for the chain's
// guards: how a run that reached a limit may still end (early stopping), which single tool
// call ends a run with its output (returnDirect), and the (action, observation) pairs of a run.

/** What a run does when it reaches maxIterations or maxExecutionTime (LangChain's `early_stopping_method`). */
export type EarlyStopping = 'force' | 'generate';

/**
 * The limits that stop a run (SPEC R4, H3): early stopping applies to each, and maxToolCalls
 * always ends with a final call without tools. A budget (maxTokens, maxCost) stops a run when
 * its next call would cross it, before that call is made; a call that crossed it anyway fails
 * the run, with no early stopping: it already spent beyond it.
 */
export type StopLimit =
  | 'maxIterations'
  | 'maxExecutionTime'
  | 'maxTokens'
  | 'maxCost'
  | 'maxToolCalls';

/** How a stopped run ended; present only on runs that did. */
export interface EarlyStop {
  readonly reason: StopLimit;
  /** 'generate' for maxToolCalls, whose final call answers whatever `earlyStopping` says. */
  readonly method: EarlyStopping;
}

/** The answer of a run stopped with `earlyStopping: 'force'` (LangChain words it the same way). */
export const EARLY_STOP_MESSAGE = 'Agent stopped due to iteration limit or time limit.';

/** The answer of a run stopped with `earlyStopping: 'force'` at a budget. */
export const BUDGET_STOP_MESSAGE = 'Agent stopped due to its token or cost budget.';

/** What 'force' answers when `limit` stopped the run. */
export function earlyStopMessage(limit: StopLimit): string {
  return limit === 'maxTokens' || limit === 'maxCost' ? BUDGET_STOP_MESSAGE : EARLY_STOP_MESSAGE;
}

/** What a step holds that these rules read: its calls and their results. */
interface StepCalls {
  readonly toolCalls: readonly ToolCall[];
  readonly toolResults: readonly ToolResult[];
}

/** A tool call and what the model was given for it. */
export interface IntermediateStep {
  readonly action: ToolCall;
  readonly observation: ToolResult;
}

const LIMIT_TEXTS: Readonly<Record<StopLimit, string>> = {
  maxIterations: 'the iteration limit was reached',
  maxExecutionTime: 'the time limit was reached',
  maxTokens: 'the token budget would be exceeded',
  maxCost: 'the cost budget would be exceeded',
  maxToolCalls: 'the tool-call budget (maxToolCalls) is spent',
};

function limitText(limit: StopLimit): string {
  return LIMIT_TEXTS[limit];
}

/**
 * The calls of the last step that never got a result, answered as not run: providers reject a
 * transcript whose calls are unanswered when the next assistant turn starts (tool-linkage.ts).
 */
export function cancelledCalls(calls: readonly ToolCall[], limit: StopLimit): ContextMutation[] {
  return calls.map((call) =>
    mutate.toolCancelled(call.id, call.name, `not run, ${limitText(limit)}`),
  );
}

/**
 * The calls a failed run leaves unanswered (a limit, an abort, a tool step that broke),
 * answered as not run with why the run failed: a failed run's transcript must be valid input
 * for the next run, and providers reject calls without results.
 */
export function callsLeftByFailure(calls: readonly ToolCall[], why: string): ContextMutation[] {
  return calls.map((call) =>
    mutate.toolCancelled(call.id, call.name, `not run, the run failed: ${why}`),
  );
}

/** The note before the final call of `earlyStopping: 'generate'`: it gets no tools, so it must answer. */
export function conclusionNote(limit: StopLimit): string {
  return (
    `You cannot call tools any more: ${limitText(limit)}. ` +
    'Answer now, as well as you can, from what you have.'
  );
}

/**
 * The call whose output would end the run, if it succeeds: the step's only call, to a
 * returnDirect tool. Otherwise undefined.
 */
export function directReturnCall(
  calls: readonly ToolCall[],
  returnDirectTools: readonly string[],
): ToolCall | undefined {
  const [call, ...more] = calls;
  return call && more.length === 0 && returnDirectTools.includes(call.name) ? call : undefined;
}

/**
 * The result that ends the run directly (LangChain's `_get_tool_return`): the step had exactly
 * one call, to a returnDirect tool, and it succeeded. Otherwise undefined.
 */
export function directReturn(
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
  returnDirectTools: readonly string[],
): ToolResult | undefined {
  const call = directReturnCall(calls, returnDirectTools);
  const result = call && results.find((r) => r.toolCallId === call.id);
  return result?.success ? result : undefined;
}

/** A tool output as answer text, which validation reads like any model answer. */
export function directAnswerText(output: unknown): string {
  return typeof output === 'string' ? output : (JSON.stringify(output) ?? String(output));
}

/**
 * The text of the answer being validated, and of a succeeded run: the last step's direct
 * return when it was one, else the model's last response. Derived, not kept in the context:
 * see ChainContext on why the context stays small.
 */
export function answerText(
  steps: readonly StepCalls[],
  response: ModelResponse | undefined,
  returnDirectTools: readonly string[],
): string {
  const last = steps.at(-1);
  const direct = last && directReturn(last.toolCalls, last.toolResults, returnDirectTools);
  if (direct) return directAnswerText(direct.output);
  return response ? responseText(response) : '';
}

/**
 * Every call the tools answered, with its result, in call order across steps. Blocked
 * duplicates are included: their warning is what the model observed. Calls cut off by a
 * limit are not: they never ran, and their step has no results.
 */
export function intermediateSteps(steps: readonly StepCalls[]): IntermediateStep[] {
  const pairs: IntermediateStep[] = [];
  for (const step of steps) {
    for (const action of step.toolCalls) {
      const observation = step.toolResults.find((r) => r.toolCallId === action.id);
      if (observation) pairs.push({ action, observation });
    }
  }
  return pairs;
}
