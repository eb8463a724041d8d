import { ConfigError, InputError } from '../errors.js';
import { type Describes, describeOptions } from '../options/describe.js';
import { integer, satisfies } from '../options/kinds.js';
import { isolatedAttempt } from './attempt.js';
import { isCancellation, throwIfAborted } from './cancellation.js';
import type { RetryOptions, Runnable, RunnableDefinition } from './types.js';

/** Errors no new attempt can fix: the configuration or the input is wrong (cancellation is handled apart). */
function isWorthRetrying(error: unknown): boolean {
  return !ConfigError.isInstance(error) && !InputError.isInstance(error);
}

/** withRetry's options described once (see src/options/describe.ts), with their defaults. */
export const RETRY_OPTIONS = describeOptions('withRetry', {
  maxAttempts: integer(1, { default: 3 }),
  shouldRetry: satisfies<RetryOptions['shouldRetry'] & {}, typeof isWorthRetrying>(
    (value) => typeof value === 'function',
    'must be a function (error, attempt) => boolean',
    { default: isWorthRetrying, defaultText: 'all but cancellation and bad config or input' },
  ),
  delayMs: satisfies<RetryOptions['delayMs'] & {}, 0>(
    (value) => typeof value === 'function' || (typeof value === 'number' && value >= 0),
    'must be a number >= 0 or a function of the attempt',
    { default: 0 },
  ),
});

// tsc fails here, naming the option, when RetryOptions and its description drift apart.
const _described: Describes<RetryOptions, typeof RETRY_OPTIONS> = true;

/**
 * The run of `inner.withRetry(options)`: the runnable again on failure, up to `maxAttempts` in
 * all. Each attempt is a child run, so callbacks see every failed attempt and the one that
 * succeeded. Cancellation is never retried, whatever `shouldRetry` says. The options are
 * checked here, when withRetry is called.
 */
export function retryRun<I, O>(
  inner: Runnable<I, O>,
  options: RetryOptions = {},
): RunnableDefinition<I, O> {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'withRetry takes an options object or nothing');
  }
  const { maxAttempts, shouldRetry, delayMs } = RETRY_OPTIONS.parse(options);
  return {
    name: `${inner.name} (retry)`,
    kind: 'retry',
    run: async (input, context) => {
      const { signal } = context.config;
      for (let attempt = 1; ; attempt++) {
        try {
          return await isolatedAttempt(context, inner, input);
        } catch (error) {
          if (signal?.aborted || isCancellation(error)) throw error;
          if (attempt >= maxAttempts || !shouldRetry(error, attempt)) throw error;
        }
        const wait = typeof delayMs === 'function' ? delayMs(attempt) : delayMs;
        if (wait > 0) await sleep(wait, signal);
        throwIfAborted(signal);
      }
    },
  };
}

/** Waits `ms`, or less when `signal` aborts (already aborted: not at all). */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
