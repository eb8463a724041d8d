import { createRunnable, runnable } from './create-runnable.js';
import { sequenceRun } from './sequence-run.js';
import type { Runnable, RunnableLike } from './types.js';

// SPEC R2: steps in order, each output the next input. Typed by overloads, so a step whose
// input does not accept the previous output is a compile error at the call (see
// test/runnable/types.test.ts); up to eight steps, or chain `.pipe()` for more.

export function sequence<A, B>(s1: RunnableLike<A, B>): Runnable<A, B>;
export function sequence<A, B, C>(s1: RunnableLike<A, B>, s2: RunnableLike<B, C>): Runnable<A, C>;
export function sequence<A, B, C, D>(
  s1: RunnableLike<A, B>,
  s2: RunnableLike<B, C>,
  s3: RunnableLike<C, D>,
): Runnable<A, D>;
export function sequence<A, B, C, D, E>(
  s1: RunnableLike<A, B>,
  s2: RunnableLike<B, C>,
  s3: RunnableLike<C, D>,
  s4: RunnableLike<D, E>,
): Runnable<A, E>;
export function sequence<A, B, C, D, E, F>(
  s1: RunnableLike<A, B>,
  s2: RunnableLike<B, C>,
  s3: RunnableLike<C, D>,
  s4: RunnableLike<D, E>,
  s5: RunnableLike<E, F>,
): Runnable<A, F>;
export function sequence<A, B, C, D, E, F, G>(
  s1: RunnableLike<A, B>,
  s2: RunnableLike<B, C>,
  s3: RunnableLike<C, D>,
  s4: RunnableLike<D, E>,
  s5: RunnableLike<E, F>,
  s6: RunnableLike<F, G>,
): Runnable<A, G>;
export function sequence<A, B, C, D, E, F, G, H>(
  s1: RunnableLike<A, B>,
  s2: RunnableLike<B, C>,
  s3: RunnableLike<C, D>,
  s4: RunnableLike<D, E>,
  s5: RunnableLike<E, F>,
  s6: RunnableLike<F, G>,
  s7: RunnableLike<G, H>,
): Runnable<A, H>;
export function sequence<A, B, C, D, E, F, G, H, I>(
  s1: RunnableLike<A, B>,
  s2: RunnableLike<B, C>,
  s3: RunnableLike<C, D>,
  s4: RunnableLike<D, E>,
  s5: RunnableLike<E, F>,
  s6: RunnableLike<F, G>,
  s7: RunnableLike<G, H>,
  s8: RunnableLike<H, I>,
): Runnable<A, I>;
export function sequence(...steps: RunnableLike<unknown, unknown>[]): Runnable<unknown, unknown> {
  if (steps.length === 0) throw new TypeError('sequence() needs at least one step');
  return createRunnable(sequenceRun(steps.map((step) => runnable(step))));
}

/** `pipe(a, b, c)` is `sequence(a, b, c)`: LangChain's `a | b | c`. */
export const pipe: typeof sequence = sequence;
