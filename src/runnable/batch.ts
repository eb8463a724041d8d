import pLimit from 'p-limit';
import { optionalPositive } from '../runtime/option-checks.js';
import type { RunConfig } from './run-config.js';

export interface BatchOptions extends RunConfig {
  /** At most this many inputs run at once (default: all). */
  readonly concurrency?: number;
}

/** One input's outcome: its output, or the error its run ended with. */
export type BatchResult<O> =
  | { readonly status: 'fulfilled'; readonly value: O }
  | { readonly status: 'rejected'; readonly reason: unknown };

/**
 * Runs every input (SPEC R1 `batch`), in order, under an optional concurrency cap, and
 * settles each: a failed input is a `rejected` entry next to the others' outputs, not a
 * rejection that loses them. Each input is its own run (its own callbacks, no common parent).
 */
export async function batchSettled<I, O>(
  inputs: readonly I[],
  options: BatchOptions | undefined,
  invoke: (input: I, config: RunConfig) => Promise<O>,
): Promise<BatchResult<O>[]> {
  if (!Array.isArray(inputs)) throw new TypeError('batch(inputs): inputs must be an array');
  const { concurrency, ...config } = options ?? {};
  const cap = optionalPositive('concurrency', concurrency, true);
  const limit = cap === undefined ? undefined : pLimit(cap);
  const settled = await Promise.allSettled(
    inputs.map((input) => (limit ? limit(() => invoke(input, config)) : invoke(input, config))),
  );
  return settled.map((entry) =>
    entry.status === 'fulfilled'
      ? { status: 'fulfilled', value: entry.value }
      : { status: 'rejected', reason: entry.reason },
  );
}
