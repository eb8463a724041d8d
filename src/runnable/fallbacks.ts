import { isolatedAttempt } from './attempt.js';
import { createRunnable, isCancellation, type Runnable, type RunnableLike } from './runnable.js';
import { runnable } from './to-runnable.js';

/**
 * The runnable, then each fallback in turn on the same input while they fail, each on its own
 * copy of the intermediate results (see attempt.ts). Cancellation is not a failure to fall
 * back from. When all fail, the primary's error is thrown (the one
 * worth fixing); each candidate is a child run, so callbacks saw every error.
 */
export function withFallbackList<I, O>(
  primary: Runnable<I, O>,
  fallbacks: readonly RunnableLike<I, O>[],
): Runnable<I, O> {
  if (!Array.isArray(fallbacks) || fallbacks.length === 0) {
    throw new TypeError('withFallbacks(fallbacks) needs a non-empty array of steps');
  }
  const candidates = [primary, ...fallbacks.map((step) => runnable(step) as Runnable<I, O>)];
  return createRunnable<I, O>({
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
  });
}
