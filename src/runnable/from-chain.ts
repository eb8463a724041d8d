import type { Chain } from '../chain/chain.js';
import type { ChainResult, ChainRunInput } from '../chain/run-types.js';
import { chainRun } from './chain-run.js';
import { createRunnable } from './create-runnable.js';
import type { Runnable } from './types.js';

/**
 * A chain as a Runnable (SPEC R1). Along a sequence it starts from the intermediate results
 * the chains before it cached and leaves its own for the chains after it (SPEC C9), unless
 * its input brings its own.
 */
export function fromChain<T>(
  chain: Chain<T>,
  name?: string,
): Runnable<string | ChainRunInput, ChainResult<T>> {
  return createRunnable(chainRun(chain, name));
}
