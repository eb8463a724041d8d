import { runCost } from './budgets.js';
import { finalCallNote, nextCall, nextCallCrosses } from './chain-limits.js';
import { hasTokenBudget } from './chain-policy.js';
import type { ChainArgs, ChainContext, ChainFailure } from './chain-types.js';

// How a chain run fails, as data: the failure each of the machine's `failOn…` actions keeps,
// with the message a user reads (the tests pin these words). A limit's failure names the limit
// and what was spent; a budget's, the call that was not made and why. Pure.

type ContextArgs = Pick<ChainArgs, 'context'>;

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

/** Action `failOnError`: an effect failed; its error is the cause. */
export function withErrorFailure(
  _: unknown,
  params: { code: ChainFailure['code']; error: unknown },
): Partial<ChainContext> {
  return { failure: failure(params.code, errorMessage(params.error), params.error) };
}

/** Action `failOnAbort`: ABORT from outside, with its reason if it gave one. */
export function withAbortFailure(
  _: unknown,
  params: { reason: string | undefined },
): Partial<ChainContext> {
  return {
    failure: failure(
      'ABORTED',
      params.reason ? `The run was cancelled: ${params.reason}` : 'The run was cancelled',
    ),
  };
}

/** Action `failOnFinalAnswer`: the answer of the final call early stopping made is no answer. */
export function withFinalAnswerFailure(
  { context }: ContextArgs,
  params: { problem: string },
): Partial<ChainContext> {
  return {
    failure: failure(
      'PROTOCOL_ERROR',
      `The final answer after reaching ${context.limitReached} ${params.problem}`,
    ),
  };
}

export function iterationLimitFailure({ context }: ContextArgs): ChainFailure {
  return {
    code: 'PROTOCOL_ERROR',
    message: `Reached maxIterations (${context.config.maxIterations}) without a final answer`,
    limit: context.config.maxIterations,
  };
}

export function timeLimitFailure({ context }: ContextArgs): ChainFailure {
  const ms = context.config.maxExecutionTime ?? 0;
  return {
    code: 'TIMEOUT',
    message: `Reached maxExecutionTime (${ms} ms) without a final answer`,
    limit: ms,
  };
}

export function tokenLimitFailure({ context }: ContextArgs): ChainFailure {
  return {
    code: 'TOKEN_LIMIT',
    message: `Token limit exceeded: used ${context.usage.totalTokens} of ${context.config.maxTokens} tokens`,
    limit: context.config.maxTokens,
  };
}

export function costLimitFailure({ context }: ContextArgs): ChainFailure {
  const maxCost = context.config.maxCost ?? 0;
  return {
    code: 'COST_LIMIT',
    message: `Cost limit exceeded: spent ${usd(runCost(context.usage, context.config.prices) ?? 0)} of ${usd(maxCost)}`,
    limit: maxCost,
  };
}

/** Action `failOnLimits`: no generation or no token left; the budget, when it is spent. */
export function limitsFailure(args: ContextArgs): ChainFailure {
  const { usage, config } = args.context;
  return !hasTokenBudget(usage.totalTokens, config.maxTokens)
    ? tokenLimitFailure(args)
    : iterationLimitFailure(args);
}

/** The failure of the limit that stopped the run, when no early stopping ended it. */
export function stopFailure(args: ContextArgs): ChainFailure {
  const { context } = args;
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
    limit === 'maxExecutionTime' ? timeLimitFailure(args) : iterationLimitFailure(args);
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
