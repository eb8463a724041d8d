import { ConfigError, InputError } from '../errors.js';
import { integerAtLeast } from '../options/checks.js';
import type { EveryKeyListed } from '../options/keys.js';
import { OptionProblems } from '../options/problems.js';
import { isolatedAttempt } from './attempt.js';
import { isCancellation, throwIfAborted } from './cancellation.js';
import type { RetryOptions, Runnable, RunnableDefinition } from './types.js';

/** Errors no new attempt can fix: the configuration or the input is wrong (cancellation is handled apart). */
function isWorthRetrying(error: unknown): boolean {
  return !ConfigError.isInstance(error) && !InputError.isInstance(error);
}

/** Every option withRetry knows: any other key is refused as a typo (SPEC Q4). */
const RETRY_OPTION_KEYS = [
  'maxAttempts',
  'shouldRetry',
  'delayMs',
] as const satisfies readonly (keyof RetryOptions)[];

// tsc fails here, naming the option, when RetryOptions gains one the list lacks.
const _everyRetryOptionListed: EveryKeyListed<RetryOptions, typeof RETRY_OPTION_KEYS> = true;

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
  const problems = new OptionProblems('withRetry');
  problems.unknownKeys(options, RETRY_OPTION_KEYS);
  const checkedMaxAttempts = problems.check(() =>
    integerAtLeast('maxAttempts', options.maxAttempts, 1, 3),
  );
  const { shouldRetry = isWorthRetrying, delayMs = 0 } = options;
  if (typeof shouldRetry !== 'function') {
    problems.add('shouldRetry', 'must be a function (error, attempt) => boolean');
  }
  if (typeof delayMs !== 'function' && !(typeof delayMs === 'number' && delayMs >= 0)) {
    problems.add('delayMs', 'must be a number >= 0 or a function of the attempt');
  }
  problems.throwIfAny();
  // Defined: its check passed, or throwIfAny would have thrown.
  const maxAttempts = checkedMaxAttempts as number;
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
