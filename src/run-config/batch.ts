import { setMaxListeners } from 'node:events';
import pLimit from 'p-limit';
import { linkedController } from '../linked-controller.js';
import { optionalPositive } from '../options/checks.js';
import type { RunConfig } from './config.js';

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
 * The runs share one signal linked to the caller's: the caller's signal gets one listener
 * however many inputs there are (one each would warn past ten), and aborting it still
 * cancels every run.
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
  const { signal: callerSignal } = config;
  const link = callerSignal ? linkedController(callerSignal) : undefined;
  if (link) setMaxListeners(0, link.controller.signal); // every run of the batch listens to it
  const shared = link ? { ...config, signal: link.controller.signal } : config;
  let settled: PromiseSettledResult<Awaited<O>>[];
  try {
    settled = await Promise.allSettled(
      inputs.map((input) => (limit ? limit(() => invoke(input, shared)) : invoke(input, shared))),
    );
  } finally {
    link?.unlink();
  }
  return settled.map((entry) =>
    entry.status === 'fulfilled'
      ? { status: 'fulfilled', value: entry.value }
      : { status: 'rejected', reason: entry.reason },
  );
}
