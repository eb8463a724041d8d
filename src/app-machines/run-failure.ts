import type { ChainOutput } from '../../machines/chain.js';
import type { ToolLoopOutput } from '../../machines/tool-loop.js';
import { chainError } from '../chain/results.js';
import type { ChainPartialResult } from '../chain/run-types.js';
import type { StatecraftError } from '../errors.js';
import { RunRecorder } from '../host/run-details.js';
import type { Message } from '../messages.js';
import { loopError } from '../tool-loop/results.js';
import type { ToolLoopPartialResult } from '../tool-loop/run-types.js';
import { Transcript } from '../transcript.js';

// How an app's machine reads a run it invoked. `chain.machine`, `loop.machine` and both
// `durable(store)` actors end the same way: `onDone` with the machine's output, a failed run
// included (`status: 'failed'`). These two read that output without caring which it was.

/** What a chain or tool loop an app's machine invoked ends with (its `onDone` event's output). */
export type RunOutput = ChainOutput<unknown> | ToolLoopOutput;

/** The failed member of a run's output: `failure` (code, message, cause) and the partial run. */
export type FailedRunOutput<O extends RunOutput = RunOutput> = Extract<O, { status: 'failed' }>;

/** The error a failed run's output stands for, with the partial run of its kind. */
export type RunFailure<O extends RunOutput = RunOutput> = StatecraftError & {
  readonly partial: O extends ToolLoopOutput ? ToolLoopPartialResult : ChainPartialResult;
};

/**
 * True when the run failed: a guard for `onDone`, and a type guard that narrows `output` to
 * its failed member (`output.failure.code`, `output.failure.message`).
 */
export function isFailedRun<O extends RunOutput>(output: O): output is FailedRunOutput<O> {
  return output.status === 'failed';
}

/**
 * The error a failed run's output stands for: the same class, code and message `invoke()`
 * throws for that run (a TokenLimitError, a ModelError, a TimeoutError…; check it with
 * `XxxError.isInstance`), carrying the partial run (`partial`: transcript, usage, and a
 * chain's steps or a loop's records). Undefined for a run that succeeded.
 *
 * The partial run's `details()` lists no calls: an invoked run's calls are recorded for its
 * observers (`observeRuns`), not on its output. An output kept in a persisted snapshot (its
 * transcript turned to JSON) is read the same.
 */
export function runFailure<O extends RunOutput>(output: O): RunFailure<O> | undefined {
  if (output.status !== 'failed') return undefined;
  const recorder = new RunRecorder();
  recorder.finish();
  const failed = output as FailedRunOutput;
  if ('toolLogs' in failed) return loopError(failed, recorder) as RunFailure<O>;
  const { transcript } = failed as { readonly transcript: Transcript | readonly Message[] };
  const chain = {
    ...failed,
    transcript: transcript instanceof Transcript ? transcript : Transcript.from(transcript),
  };
  return chainError(chain, recorder) as RunFailure<O>;
}
