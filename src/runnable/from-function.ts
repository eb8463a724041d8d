import { createRunnable, type Runnable, type RunnableFunction } from './runnable.js';

/**
 * A function as a Runnable (SPEC R2 `fromFunction`). It receives the run's config as its
 * second argument: hand it to the runnables it calls, and their runs become its children.
 */
export function fromFunction<I, O>(fn: RunnableFunction<I, O>, name?: string): Runnable<I, O> {
  if (typeof fn !== 'function') throw new TypeError('fromFunction(fn): fn must be a function');
  return createRunnable<I, O>({
    name: name ?? (fn.name || 'function'),
    kind: 'function',
    run: async (input, context) => fn(input, context.config),
  });
}
