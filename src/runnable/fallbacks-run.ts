import { isolatedAttempt } from './attempt.js';
import { isCancellation } from './cancellation.js';
import type { Runnable, RunnableDefinition } from './types.js';

/**
 * The run of `primary.withFallbacks(fallbacks)`: the primary, then each fallback in turn on the
 * same input while they fail, each on its own copy of the intermediate results (see
 * attempt.ts). Cancellation is not a failure to fall back from. When all fail, the primary's
 * error is thrown (the one worth fixing); each candidate is a child run, so callbacks saw
 * every error.
 */
export function fallbacksRun<I, O>(
  primary: Runnable<I, O>,
  fallbacks: readonly Runnable<I, O>[],
): RunnableDefinition<I, O> {
  const candidates = [primary, ...fallbacks];
  return {
    name: `${primary.name} (with fallbacks)`,
    kind: 'fallbacks',
    run: async (input, context) => {
      const errors: unknown[] = [];
      for (const candidate of candidates) {
        try {
          return await isolatedAttempt(context, candidate, input);
        } catch (error) {
          if (context.config.signal?.aborted || isCancellation(error)) throw error;
          errors.push(error);
        }
      }
      throw errors[0];
    },
  };
}
