import { reduceTurnContext } from '../src/compile/reduce-turn-context.js';
import { pendingToolCalls } from '../src/compile/tool-linkage.js';
import { costOf } from '../src/cost.js';
import type { Transcript } from '../src/transcript.js';
import { cutShortStep, isInToolStep } from './chain-steps.js';
import type {
  ChainArgs,
  ChainContext,
  ChainFailure,
  ChainOutput,
  ChainRunData,
} from './chain-types.js';
import {
  answerText,
  callsLeftByFailure,
  earlyStopMessage,
  intermediateSteps,
} from './early-stopping.js';

// What a finished chain run reports, from its context: the result it keeps when it succeeds,
// the machine's output, and the output the runtime reports for a run whose machine broke.
// Pure, like the machine.

/** The run's answer text: a returnDirect tool's output, else the last response's text. */
export function answerTextOf(context: ChainContext): string {
  return answerText(context.steps, context.response, context.config.returnDirectTools);
}

/**
 * Action `afterSucceed` (the seed's after_succeed): keep the result and cache it for the
 * chains that follow.
 */
export function withResult(
  { context }: Pick<ChainArgs, 'context'>,
  params: { value: unknown },
): Partial<ChainContext> {
  const { value } = params;
  let intermediateResults = context.intermediateResults;
  if (context.config.catchIntermediateResult) {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      intermediateResults = { ...intermediateResults, ...(value as Record<string, unknown>) };
    } else if (typeof value === 'string' && context.config.resultCacheKey) {
      intermediateResults = { ...intermediateResults, [context.config.resultCacheKey]: value };
    }
  }
  return { result: value, intermediateResults };
}

/** Action `forceStop` (LangChain's 'force'): the result is the stop message. */
export function forcedStopResult({ context }: Pick<ChainArgs, 'context'>): string {
  return earlyStopMessage(context.limitReached ?? 'maxIterations');
}

/** The machine's output: how the run ended, with everything it did. */
export function chainOutput({ context }: Pick<ChainArgs, 'context'>): ChainOutput {
  const data = runDataOf(context);
  if (context.failure) return { ...data, status: 'failed', failure: context.failure };
  const { limitReached: reason } = context;
  // maxToolCalls's final call answers whatever earlyStopping says.
  const method = reason === 'maxToolCalls' ? 'generate' : context.config.earlyStopping;
  const forced = reason !== undefined && method === 'force';
  return {
    ...data,
    status: 'succeeded',
    result: context.result,
    text: forced ? earlyStopMessage(reason) : answerTextOf(context),
    ...(reason && method && { stopped: { reason, method } }),
  };
}

/** The transcript with everything pending applied: what a finished run reports. */
export function settledTranscript(context: ChainContext): Transcript {
  if (context.pending.length === 0) return context.transcript;
  // reduce, not compile: compiling renders the system prompt, which a report must not change.
  return reduceTurnContext(context.transcript, context.pending, context.snapshot).transcript;
}

export function runDataOf(context: ChainContext): ChainRunData {
  return {
    transcript: settledTranscript(context),
    usage: context.usage,
    // Linear in usage, so derived from it (SPEC H3): the context keeps no cost of its own.
    ...(context.config.prices && { cost: costOf(context.usage, context.config.prices) }),
    iterations: context.iterations,
    steps: context.steps,
    intermediateSteps: intermediateSteps(context.steps),
    mutationLog: context.pending.length
      ? [...context.mutationLog, context.pending]
      : context.mutationLog,
    intermediateResults: context.intermediateResults,
  };
}

/**
 * The output of a run whose machine broke (an action threw: a bug, or one a user provided),
 * or that an app's machine stopped, from the context it had: a failed run like any other,
 * with CHAIN_ERROR, that keeps its last answer (the pending mutations applied), the calls of
 * a tool step in progress that finished, and answers its other open calls. Never throws: when
 * what is pending cannot be applied, the transcript as of the last compiled turn is reported.
 */
export function brokenRunOutput(
  context: ChainContext,
  message: string,
  cause: unknown,
): Extract<ChainOutput, { readonly status: 'failed' }> {
  let failed: ChainContext = { ...context, failure: { code: 'CHAIN_ERROR', message, cause } };
  let data: ChainRunData;
  try {
    if (isInToolStep(failed, settledTranscript(failed))) {
      failed = { ...failed, ...cutShortStep(failed) };
    }
    const { calls } = pendingToolCalls(settledTranscript(failed));
    const closing = callsLeftByFailure(calls, message);
    data = runDataOf(
      closing.length ? { ...failed, pending: [...failed.pending, ...closing] } : failed,
    );
  } catch {
    data = runDataOf({ ...failed, pending: [] });
  }
  return { ...data, status: 'failed', failure: failed.failure as ChainFailure };
}
