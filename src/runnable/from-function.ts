import { createRunnable } from './create-runnable.js';
import { functionRun } from './function-run.js';
import type { Runnable, RunnableFunction } from './types.js';

/**
 * A function as a Runnable (SPEC R2 `fromFunction`). It receives the run's config as its
 * second argument: hand it to the runnables it calls, and their runs become its children.
 */
export function fromFunction<I, O>(fn: RunnableFunction<I, O>, name?: string): Runnable<I, O> {
  return createRunnable(functionRun(fn, name));
}
