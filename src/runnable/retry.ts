import { ConfigError } from '../errors.js';
import { integerAtLeast } from '../runtime/option-checks.js';
import { isolatedAttempt } from './attempt.js';
import {
  createRunnable,
  isCancellation,
  type RetryOptions,
  type Runnable,
  throwIfAborted,
} from './runnable.js';

/** Errors no new attempt can fix: the caller cancelled, or the configuration is wrong. */
function isWorthRetrying(error: unknown): boolean {
  return !ConfigError.isInstance(error);
}

/**
 * The runnable again on failure, up to `maxAttempts` in all. Each attempt is a child run, so
 * callbacks see every failed attempt and the one that succeeded. Cancellation is never
 * retried, whatever `shouldRetry` says.
 */
export function retrying<I, O>(inner: Runnable<I, O>, options: RetryOptions = {}): Runnable<I, O> {
  const maxAttempts = integerAtLeast('maxAttempts', options.maxAttempts, 1, 3);
  const { shouldRetry = isWorthRetrying, delayMs = 0 } = options;
  if (typeof shouldRetry !== 'function') {
    throw new ConfigError('shouldRetry', 'must be a function (error, attempt) => boolean');
  }
  if (typeof delayMs !== 'function' && !(typeof delayMs === 'number' && delayMs >= 0)) {
    throw new ConfigError('delayMs', 'must be a number >= 0 or a function of the attempt');
  }
  return createRunnable<I, O>({
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
  });
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
