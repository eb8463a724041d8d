import { addUsage, type Usage, ZERO_USAGE } from '../src/usage.js';
import type {
  PlanOutcome,
  ToolLoopArgs,
  ToolLoopContext,
  ToolLoopFailure,
} from './tool-loop-types.js';

// How a tool loop fails, as data: the failure each of the machine's `fail…` actions keeps,
// with the message a user reads (the tests pin these words), and the usage it spent. Pure.

type ContextArgs = Pick<ToolLoopArgs, 'context'>;

/** The usage an error's partial result reports (statecraft errors carry one), else none. */
function partialUsage(error: unknown): Usage {
  const usage = (error as { partial?: { usage?: Usage } } | null)?.partial?.usage;
  return usage && typeof usage.totalTokens === 'number' ? usage : ZERO_USAGE;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Action `fail`: an effect failed; its error is the cause. */
export function withErrorFailure(
  { context }: ContextArgs,
  params: { code: ToolLoopFailure['code']; error: unknown },
): Partial<ToolLoopContext> {
  return {
    failure: { code: params.code, message: errorMessage(params.error), cause: params.error },
    // A failed chain responder reports what it spent: the loop's usage keeps it.
    usage: addUsage(context.usage, partialUsage(params.error)),
  };
}

/** Action `failOnMalformedPlan`: the planner gave no plan, and no attempt is left. */
export function withMalformedPlanFailure(
  { context }: ContextArgs,
  params: { outcome: PlanOutcome },
): Partial<ToolLoopContext> {
  return {
    failure: {
      code: 'PROTOCOL_ERROR',
      message: `The planner did not return a plan in round ${context.roundIndex + 1} after ${context.planAttempts + 1} attempt(s): ${params.outcome.error ?? 'the answer was not a JSON object'}`,
    },
    usage: addUsage(context.usage, params.outcome.usage),
  };
}

/** Action `failOnTimeout`: the loop's timeout passed. */
export function timeoutFailure({ context }: ContextArgs): ToolLoopFailure {
  return {
    code: 'TIMEOUT',
    message: `The tool loop did not finish within its timeout of ${context.config.timeout} ms (${context.roundIndex} round(s) executed)`,
    limit: context.config.timeout,
  };
}

/** Action `failOnAbort`: ABORT from outside, with its reason if it gave one. */
export function withAbortFailure(
  _: unknown,
  params: { reason: string | undefined },
): Partial<ToolLoopContext> {
  return {
    failure: {
      code: 'ABORTED',
      message: params.reason ? `The run was cancelled: ${params.reason}` : 'The run was cancelled',
    },
  };
}
