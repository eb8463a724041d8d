import {
  type ToolLoopContext,
  type ToolLoopFailure,
  type ToolLoopOutput,
  toolLogsOf,
} from '../../machines/tool-loop.js';
import {
  AbortError,
  ChainError,
  ModelError,
  ProtocolError,
  StatecraftError,
  TimeoutError,
} from '../errors.js';
import { type RunRecorder, withDetails } from '../host/run-details.js';
import { modelCallError, reasonText } from '../host/run-errors.js';
import { type CrashedRun, machineFailed } from '../host/run-kind.js';
import { ZERO_USAGE } from '../usage.js';
import type { ToolLoopPartialResult, ToolLoopResult } from './run-types.js';

type FailedLoopOutput = Extract<ToolLoopOutput, { status: 'failed' }>;

/** The result of a finished loop: what invoke() resolves with, details() included. */
export function loopResult(
  output: Exclude<ToolLoopOutput, { status: 'failed' }>,
  recorder: RunRecorder,
): ToolLoopResult {
  return withDetails(
    {
      status: 'done',
      answer: output.response?.text,
      result: output.response?.result,
      stopReason: output.stopReason,
      rounds: output.rounds,
      plans: output.plans,
      actionResults: output.convergence?.actionResults ?? {},
      extraInstruction: output.convergence?.extraInstruction,
      toolLogs: output.toolLogs,
      usage: output.usage,
    },
    recorder,
  );
}

/** Maps a failure to its error class, carrying the records so far. */
export function loopError(output: FailedLoopOutput, recorder: RunRecorder): StatecraftError {
  const { failure } = output;
  const partial: ToolLoopPartialResult = withDetails(
    { transcript: [], usage: output.usage, toolLogs: output.toolLogs, output },
    recorder,
  );
  const options = { partial, ...(failure.cause !== undefined && { cause: failure.cause }) };
  return loopErrorOf(failure, options);
}

function loopErrorOf(
  failure: ToolLoopFailure,
  options: { partial: ToolLoopPartialResult; cause?: unknown },
): StatecraftError {
  switch (failure.code) {
    case 'TIMEOUT':
      return new TimeoutError(failure.limit ?? Number.NaN, failure.message, options);
    case 'ABORTED':
      return new AbortError(failure.message, options);
    case 'PROTOCOL_ERROR':
      return new ProtocolError(failure.message, options);
    case 'CHAIN_ERROR':
      return new ChainError(failure.message, options);
    case 'MODEL_ERROR':
      return callError(failure, options);
  }
}

/** A failed planner or responder; a chain responder's own error (e.g. its limits) is the cause. */
function callError(
  failure: ToolLoopFailure,
  options: { partial: ToolLoopPartialResult; cause?: unknown },
): StatecraftError {
  const { cause } = failure;
  if (
    StatecraftError.isInstance(cause) &&
    !AbortError.isInstance(cause) &&
    !ModelError.isInstance(cause)
  ) {
    return new ChainError(failure.message, options);
  }
  return modelCallError(failure.message, cause, options);
}

/**
 * The machine itself threw (a bug, or a provided action that failed): the run fails with a
 * ChainError that keeps its records so far, instead of an output.
 */
export function loopCrashed(
  error: unknown,
  context: ToolLoopContext,
  recorder: RunRecorder,
): CrashedRun<FailedLoopOutput> {
  const partial = loopPartial(context, recorder);
  return { error: new ChainError(machineFailed('tool loop', error), { cause: error, partial }) };
}

/** What a loop had done when its machine threw, or an app's machine stopped it. */
export function loopPartial(
  context: ToolLoopContext,
  recorder: RunRecorder,
): ToolLoopPartialResult {
  return withDetails(
    { transcript: [], usage: context.usage, toolLogs: toolLogsOf(context) },
    recorder,
  );
}

/** The output of a run cancelled before it started: failed, having done nothing. */
export function cancelledBeforeStart(signal: AbortSignal): ToolLoopOutput {
  const reason = reasonText(signal.reason);
  return {
    status: 'failed',
    failure: {
      code: 'ABORTED',
      message: reason ? `The run was cancelled: ${reason}` : 'The run was cancelled',
    },
    rounds: 0,
    plans: [],
    toolLogs: [],
    usage: ZERO_USAGE,
  };
}
