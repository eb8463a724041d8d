import type { Invocable, RunnableFunction } from './runnable.js';

// Type-level reading of a step, so composition is typed end to end (SPEC R2): a step's input
// and output are read off its `invoke` (a Runnable, a chain, a tool loop) or its signature.

// biome-ignore lint/suspicious/noExplicitAny: matches a step of any input.
type AnyInput = any;

export type InputOf<R> =
  R extends Invocable<infer I, AnyInput>
    ? I
    : R extends (input: infer I, ...rest: AnyInput[]) => unknown
      ? I
      : never;

export type OutputOf<R> =
  R extends Invocable<AnyInput, infer O>
    ? O
    : R extends RunnableFunction<AnyInput, infer O>
      ? Awaited<O>
      : never;

/** The input every member of a union accepts: what all branches of a `parallel` can take. */
export type CommonInput<U> = (U extends unknown ? (input: U) => void : never) extends (
  input: infer I,
) => void
  ? I
  : never;
