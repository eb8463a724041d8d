import type { RunConfig } from '../run-config/config.js';
import type { Invocable, RunContext } from './types.js';

/**
 * Runs one attempt of a retry or a fallback on its own copy of the shared intermediate results
 * (SPEC C9), kept only if the attempt succeeds: a failed attempt's chains must not leave
 * results behind for the attempt after it, or for the steps after the whole.
 */
export async function isolatedAttempt<I, O>(
  context: RunContext,
  step: Invocable<I, O>,
  input: I,
): Promise<O> {
  const shared = context.config.intermediateResults;
  if (!shared) return context.call(step, input);
  const own = { current: shared.current };
  const config: RunConfig = { ...context.config, intermediateResults: own };
  const output = await context.call(step, input, config);
  shared.current = own.current;
  return output;
}
