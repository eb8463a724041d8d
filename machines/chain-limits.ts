import { mutate } from '../src/compile/mutations.js';
import { addUsage, type Usage } from '../src/usage.js';
import {
  budgetCrossed,
  type CallEstimate,
  isOverCostLimit as isOverCost,
  nextCallEstimate,
  isOverToolCallBudget as passesToolCallBudget,
  toolCallsMade,
} from './budgets.js';
import {
  hasTokenBudget,
  isOverIterationLimit as isOverIterations,
  isOverTokenLimit as isOverTokens,
  warningPoint,
} from './chain-policy.js';
import type { ChainArgs, ChainContext, ChainEvent } from './chain-types.js';
import { conclusionNote } from './early-stopping.js';

// The chain's limits and warnings (SPEC C4, H3, R4) as the machine's guards and actions read
// them: what the run has spent once the answer being decided on counts, what the next call is
// expected to spend, and the warnings inserted once before a call. A guard here has the name
// the machine gives it; an action's body is named in its comment. Guards run before actions,
// so a guard on `callModel.done` counts the event's response itself. Pure.

type ContextArgs = Pick<ChainArgs, 'context'>;

/** Tokens spent once this event's model response is counted. */
export function tokensAfter(context: ChainContext, event: ChainEvent): number {
  return (
    context.usage.totalTokens +
    (event.type === 'callModel.done' ? event.output.usage.totalTokens : 0)
  );
}

/** The run's usage once this event's model response is counted. */
export function usageAfter(context: ChainContext, event: ChainEvent): Usage {
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
export function nextCall(context: ChainContext, extra?: readonly string[]): CallEstimate {
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
export function nextCallCrosses(context: ChainContext, extra?: readonly string[]) {
  return budgetCrossed(context.usage, nextCall(context, extra), context.config);
}

/** The note of the final call, which the check before that call counts. */
export function finalCallNote(context: ChainContext): string {
  return conclusionNote(context.limitReached ?? 'maxIterations');
}

/** No generation left: the iterations reached maxIterations. */
export function isOverIterationLimit({ context }: ContextArgs): boolean {
  return isOverIterations(context.iterations, context.config.maxIterations);
}

/** Spent more than maxTokens, this event's response counted. */
export function isOverTokenLimit({ context, event }: ChainArgs): boolean {
  return isOverTokens(tokensAfter(context, event), context.config.maxTokens);
}

/** Spent more than maxCost, this event's response counted. */
export function isOverCostLimit({ context, event }: ChainArgs): boolean {
  return isOverCost(usageAfter(context, event), context.config);
}

/** A generation is left, and a token to spend on it. */
export function canThink({ context }: ContextArgs): boolean {
  return (
    !isOverIterations(context.iterations, context.config.maxIterations) &&
    hasTokenBudget(context.usage.totalTokens, context.config.maxTokens)
  );
}

/** No generation is left, or no token. */
export function canFail({ context }: ContextArgs): boolean {
  return (
    isOverIterations(context.iterations, context.config.maxIterations) ||
    !hasTokenBudget(context.usage.totalTokens, context.config.maxTokens)
  );
}

/** No generation left while tokens remain: the iteration limit, not the budget, ends the run. */
export function isOutOfIterations({ context }: ContextArgs): boolean {
  return (
    isOverIterations(context.iterations, context.config.maxIterations) &&
    hasTokenBudget(context.usage.totalTokens, context.config.maxTokens)
  );
}

/** SPEC H3: the next call would cross maxTokens or maxCost, by its estimate: it is not made. */
export function isNextCallOverBudget({ context }: ContextArgs): boolean {
  return nextCallCrosses(context) !== undefined;
}

/**
 * Once a limit stopped the run, this timer is spent: the final answer's own bound is the
 * effects host's (maxExecutionTime again, from when the final call starts).
 */
export function hasExecutionTimeLimit({ context }: ContextArgs): boolean {
  return context.config.maxExecutionTime !== undefined && context.limitReached === undefined;
}

/**
 * maxExecutionTime 0: the time is up before the first model call (LangChain's AgentExecutor
 * checks it before its first step); its timer would fire only after.
 */
export function hasNoTimeToStart({ context }: ContextArgs): boolean {
  return context.config.maxExecutionTime === 0;
}

export function hasEarlyStopping({ context }: ContextArgs): boolean {
  return context.config.earlyStopping !== undefined;
}

/** 'force' ends the run with its stop message; maxToolCalls always ends with a final call. */
export function shouldForceStop({ context }: ContextArgs): boolean {
  return context.config.earlyStopping === 'force' && context.limitReached !== 'maxToolCalls';
}

/** SPEC H3: the calls made so far and those asked for now would pass maxToolCalls. */
export function isOverToolCallBudget({ context, event }: ChainArgs): boolean {
  return (
    context.config.maxToolCalls !== undefined &&
    passesToolCallBudget(
      toolCallsMade(context.steps),
      callsRequested(context, event),
      context.config.maxToolCalls,
    )
  );
}

/**
 * The final call of 'generate', or of maxToolCalls, is made only if it fits the budgets
 * (SPEC H3): it is checked before it is made, as every call is.
 */
export function shouldGenerateFinalAnswer({ context }: ContextArgs): boolean {
  return (
    (context.config.earlyStopping === 'generate' || context.limitReached === 'maxToolCalls') &&
    nextCallCrosses(context, [finalCallNote(context)]) === undefined
  );
}

/** The generations reached the warning's threshold, and it was not inserted yet. */
export function shouldWarnIterations({ context }: ContextArgs): boolean {
  const warning = context.config.warnings.iterations;
  return (
    !!warning &&
    !context.warned.iterations &&
    context.iterations >= warningPoint(context.config.maxIterations, warning.threshold)
  );
}

/** The tokens spent reached the warning's threshold, and it was not inserted yet. */
export function shouldWarnTokens({ context }: ContextArgs): boolean {
  const warning = context.config.warnings.tokens;
  return (
    !!warning &&
    !context.warned.tokens &&
    context.usage.totalTokens >= warningPoint(context.config.maxTokens, warning.threshold)
  );
}

/** Action `insertIterationWarning`: the warning, once, as a system note before the next call. */
export function withIterationWarning({ context }: ContextArgs): Partial<ChainContext> {
  return {
    pending: [
      ...context.pending,
      mutate.systemNote(context.config.warnings.iterations?.prompt ?? ''),
    ],
    warned: { ...context.warned, iterations: true },
  };
}

/** Action `insertTokenWarning`: the warning, once, as a system note before the next call. */
export function withTokenWarning({ context }: ContextArgs): Partial<ChainContext> {
  return {
    pending: [...context.pending, mutate.systemNote(context.config.warnings.tokens?.prompt ?? '')],
    warned: { ...context.warned, tokens: true },
  };
}

/** Action `reachBudgetLimit`: the budget the next call would cross stops the run (SPEC H3). */
export function withBudgetLimitReached({ context }: ContextArgs): Partial<ChainContext> {
  return { limitReached: nextCallCrosses(context) ?? 'maxTokens' };
}
