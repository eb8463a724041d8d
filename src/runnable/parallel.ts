import { AbortError } from '../errors.js';
import { linkedController } from '../linked-controller.js';
import { createRunnable, runnable } from './create-runnable.js';
import type { CommonInput, InputOf, OutputOf, Runnable, RunnableLike } from './types.js';

/** The typed output of `parallel(steps)`: each key holds its step's output. */
export type ParallelOutput<M> = { [K in keyof M]: OutputOf<M[K]> };

/**
 * SPEC R2: an object of steps run concurrently on one input, with an object of their outputs.
 * Its input is what every step accepts. When one step fails, the others are aborted, and the
 * first error is thrown once all have stopped: nothing keeps running behind the caller's back.
 */
export function parallel<M extends Record<string, RunnableLike<never, unknown>>>(
  steps: M,
  name?: string,
): Runnable<CommonInput<InputOf<M[keyof M]>>, ParallelOutput<M>> {
  if (typeof steps !== 'object' || steps === null || Object.keys(steps).length === 0) {
    throw new TypeError('parallel(steps) needs an object with at least one step');
  }
  const entries = Object.entries(steps).map(
    ([key, step]) => [key, runnable(step as RunnableLike<unknown, unknown>, key)] as const,
  );
  return createRunnable({
    name: name ?? `parallel(${entries.map(([key]) => key).join(', ')})`,
    kind: 'parallel',
    run: async (input, context) => {
      const { controller, unlink } = linkedController(context.config.signal);
      const config = { ...context.config, signal: controller.signal };
      let firstError: { error: unknown } | undefined;
      try {
        const settled = await Promise.allSettled(
          entries.map(async ([key, step]) => {
            try {
              return [key, await context.call(step, input, config)] as const;
            } catch (error) {
              if (!firstError) {
                firstError = { error };
                controller.abort(new AbortError(`parallel step '${key}' failed`));
              }
              throw error;
            }
          }),
        );
        if (firstError) throw firstError.error;
        return Object.fromEntries(
          settled.map(
            (entry) => (entry as PromiseFulfilledResult<readonly [string, unknown]>).value,
          ),
        ) as ParallelOutput<M>;
      } finally {
        unlink();
      }
    },
  });
}
