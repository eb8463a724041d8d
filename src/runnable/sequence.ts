import type { RunConfig } from './run-config.js';
import { createRunnable, type Runnable, type RunnableLike } from './runnable.js';
import { runnable } from './to-runnable.js';

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
  const runnables = steps.map((step) => runnable(step));
  return createRunnable({
    name: runnables.map((step) => step.name).join(' | '),
    kind: 'sequence',
    run: async (input, context) => {
      // One shared place for the intermediate results of the chains in this run (SPEC C9).
      const config: RunConfig = context.config.intermediateResults
        ? context.config
        : { ...context.config, intermediateResults: { current: {} } };
      let value = input;
      for (const step of runnables) value = await context.call(step, value, config);
      return value;
    },
  });
}

/** `pipe(a, b, c)` is `sequence(a, b, c)`: LangChain's `a | b | c`. */
export const pipe: typeof sequence = sequence;

/** `first.pipe(next)`. */
export function pipeTwo<I, M, O>(first: Runnable<I, M>, next: RunnableLike<M, O>): Runnable<I, O> {
  return sequence(first, next);
}
