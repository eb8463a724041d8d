import type { ChainContext, ChainOutput } from '../../machines/chain.js';
import { brokenRunOutput } from '../../machines/chain-output.js';
import {
  AbortError,
  ChainError,
  ConfigError,
  CostLimitError,
  ProtocolError,
  type StatecraftError,
  TimeoutError,
  TokenLimitError,
} from '../errors.js';
import { type RunRecorder, withDetails } from '../host/run-details.js';
import { modelCallError } from '../host/run-errors.js';
import { type CrashedRun, machineFailed } from '../host/run-kind.js';
import { ToolCollisionError } from '../tools/name-collision.js';
import type { ChainPartialResult, ChainResult } from './run-types.js';

type FailedChainOutput = Extract<ChainOutput, { status: 'failed' }>;

/** The result of a succeeded run: what invoke() resolves with, details() included. */
export function chainResult<T>(
  output: Exclude<ChainOutput, { status: 'failed' }>,
  recorder: RunRecorder,
): ChainResult<T> {
  const {
    status,
    result,
    text,
    transcript,
    usage,
    cost,
    iterations,
    steps,
    intermediateSteps,
    stopped,
    mutationLog,
    intermediateResults,
  } = output;
  return withDetails(
    {
      status,
      result: result as T,
      text,
      transcript: transcript.toArray(),
      usage,
      ...(cost !== undefined && { cost }),
      iterations,
      steps,
      intermediateSteps,
      ...(stopped && { stopped }),
      mutationLog,
      intermediateResults,
    },
    recorder,
  );
}

/** Maps a failure's code to its error class, carrying the partial run. */
export function chainError(output: FailedChainOutput, recorder: RunRecorder): StatecraftError {
  const { failure } = output;
  const partial: ChainPartialResult = withDetails(
    {
      transcript: output.transcript.toArray(),
      usage: output.usage,
      ...(output.cost !== undefined && { cost: output.cost }),
      steps: output.steps,
      intermediateSteps: output.intermediateSteps,
      output,
    },
    recorder,
  );
  const options = { partial, ...(failure.cause !== undefined && { cause: failure.cause }) };
  return chainErrorOf(failure, output, options);
}

function chainErrorOf(
  failure: FailedChainOutput['failure'],
  output: FailedChainOutput,
  options: { partial: ChainPartialResult; cause?: unknown },
): StatecraftError {
  switch (failure.code) {
    case 'PROTOCOL_ERROR':
      return new ProtocolError(failure.message, options);
    case 'TOKEN_LIMIT':
      return new TokenLimitError(failure.limit ?? Number.NaN, output.usage.totalTokens, {
        ...options,
        message: failure.message,
        ...(failure.estimate !== undefined && { estimate: failure.estimate }),
      });
    case 'COST_LIMIT':
      return new CostLimitError(failure.limit ?? Number.NaN, output.cost ?? Number.NaN, {
        ...options,
        message: failure.message,
        ...(failure.estimate !== undefined && { estimate: failure.estimate }),
      });
    case 'TIMEOUT':
      return new TimeoutError(failure.limit ?? Number.NaN, failure.message, options);
    case 'ABORTED':
      return new AbortError(failure.message, options);
    case 'MODEL_ERROR':
      return modelCallError(failure.message, failure.cause, options);
    case 'CHAIN_ERROR':
      return new ChainError(failure.message, options);
    case 'CONFIG_ERROR':
      return configErrorOf(failure.cause, failure.message, options);
  }
}

/** The configuration error a run failed with, again, now carrying the partial run. */
function configErrorOf(
  cause: unknown,
  message: string,
  options: { partial: ChainPartialResult; cause?: unknown },
): StatecraftError {
  if (ToolCollisionError.isInstance(cause)) {
    return new ToolCollisionError(cause.executor, cause.toolNames, options);
  }
  const option = ConfigError.isInstance(cause) ? cause.option : 'options';
  return Object.assign(new ConfigError(option, message, options), { message });
}

/**
 * The machine itself threw (a bug, or a provided action that failed): a failed run like any
 * other, CHAIN_ERROR, that keeps what the run had done, its last answer included.
 */
export function chainCrashed(error: unknown, context: ChainContext): CrashedRun<FailedChainOutput> {
  return { output: brokenRunOutput(context, machineFailed('chain', error), error) };
}

/** What a chain an app's machine invoked had done when it was stopped. */
export function chainPartial(
  context: ChainContext,
  recorder: RunRecorder,
): Omit<ChainPartialResult, 'intermediateSteps' | 'output'> {
  const output = brokenRunOutput(context, 'stopped', undefined);
  return withDetails(
    {
      transcript: output.transcript.toArray(),
      usage: output.usage,
      ...(output.cost !== undefined && { cost: output.cost }),
      steps: output.steps,
    },
    recorder,
  );
}
