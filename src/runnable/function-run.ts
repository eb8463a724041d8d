import type { RunnableDefinition, RunnableFunction } from './types.js';

/**
 * A function's run (SPEC R2 `fromFunction`). It receives the run's config as its second
 * argument: hand it to the runnables it calls, and their runs become its children.
 */
export function functionRun<I, O>(
  fn: RunnableFunction<I, O>,
  name?: string,
): RunnableDefinition<I, O> {
  if (typeof fn !== 'function') throw new TypeError('fromFunction(fn): fn must be a function');
  return {
    name: name ?? (fn.name || 'function'),
    kind: 'function',
    run: async (input, context) => fn(input, context.config),
  };
}
