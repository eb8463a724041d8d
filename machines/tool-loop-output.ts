import type { ToolExecutionRecord } from '../src/plan/records.js';
import { addUsage } from '../src/usage.js';
import type {
  ResponseOutcome,
  ToolLoopArgs,
  ToolLoopContext,
  ToolLoopOutput,
  ToolLoopRunData,
} from './tool-loop-types.js';

// What a finished tool loop reports, from its context: the final response it keeps, every
// record it made, and the machine's output. Pure, like the machine.

type ContextArgs = Pick<ToolLoopArgs, 'context'>;

/** Action `recordResponse`: the final response, and what it spent. */
export function withResponse(
  { context }: ContextArgs,
  params: { response: ResponseOutcome },
): Partial<ToolLoopContext> {
  return { response: params.response, usage: addUsage(context.usage, params.response.usage) };
}

/**
 * Every record of the run: the executed rounds', then those of a round cut short (a timeout,
 * an abort, a failed hook or deadline, an app's machine stopping the loop) that finished, in
 * command order: a command that ran keeps its record (SPEC Q8).
 */
export function toolLogsOf(context: ToolLoopContext): ToolExecutionRecord[] {
  const round = [...context.roundRecords].sort((a, b) => a.index - b.index);
  return [...context.donePlans, ...round.map((r) => r.record)];
}

/** The machine's output: how the loop ended, with every round it planned and ran. */
export function toolLoopOutput({ context }: ContextArgs): ToolLoopOutput {
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
}
