import type { Chain } from '../chain/create-chain.js';
import type { ToolLoop } from '../tool-loop/create-tool-loop.js';
import { fromChain } from './from-chain.js';
import { fromFunction } from './from-function.js';
import { fromToolLoop } from './from-tool-loop.js';
import { createRunnable, isRunnable, type Runnable, type RunnableLike } from './runnable.js';
import type { InputOf, OutputOf } from './types.js';

/**
 * Any step as a Runnable (SPEC R1): a Runnable as it is; a chain or a tool loop with its
 * stream events mapped (matched by their machine); a function through `fromFunction`; any
 * other object with `invoke` as a run of kind `function` that streams only its result.
 * Models go through `fromModel`, which takes their call settings.
 */
export function runnable<R extends RunnableLike<never, unknown>>(
  step: R,
  name?: string,
): Runnable<InputOf<R>, OutputOf<R>>;
export function runnable(
  step: RunnableLike<unknown, unknown>,
  name?: string,
): Runnable<unknown, unknown> {
  if (isRunnable(step)) return step;
  if (typeof step === 'function') return fromFunction(step, name);
  if (typeof step !== 'object' || step === null || typeof step.invoke !== 'function') {
    throw new TypeError(
      'a step must be a Runnable, a chain, a tool loop, a function, or an object with invoke(input, config)',
    );
  }
  const machineId = (step as { machine?: { id?: unknown } }).machine?.id;
  if (machineId === 'chain')
    return fromChain(step as Chain<unknown>, name) as Runnable<unknown, unknown>;
  if (machineId === 'toolLoop')
    return fromToolLoop(step as ToolLoop, name) as Runnable<unknown, unknown>;
  return createRunnable({
    name: name ?? 'invocable',
    kind: 'function',
    run: (input, context) => step.invoke(input, context.config),
  });
}
