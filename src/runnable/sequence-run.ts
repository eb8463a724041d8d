import type { RunConfig } from '../run-config/config.js';
import type { Runnable, RunnableDefinition } from './types.js';

/**
 * The run of a sequence (SPEC R2): the steps in order, each output the next input, all reading
 * and extending one place for the intermediate results of the chains in it (SPEC C9). Typed
 * at the door (sequence.ts's overloads, `pipe`), so here a step's output is only `unknown`.
 */
export function sequenceRun(
  steps: readonly Runnable<unknown, unknown>[],
): RunnableDefinition<unknown, unknown> {
  return {
    name: steps.map((step) => step.name).join(' | '),
    kind: 'sequence',
    run: async (input, context) => {
      const config: RunConfig = context.config.intermediateResults
        ? context.config
        : { ...context.config, intermediateResults: { current: {} } };
      let value = input;
      for (const step of steps) value = await context.call(step, value, config);
      return value;
    },
  };
}
