import type { REPORTS_ITSELF } from '../observe/observe-agent-run.js';
import type { RunInfo, RunKind } from '../observe/run-info.js';
import type { BatchOptions, BatchResult } from '../run-config/batch.js';
import type { RunConfig } from '../run-config/config.js';
import type { RunEvent, RunEventBody } from './run-events.js';

// SPEC R1: the one interface chains, tool loops, models and functions share, and what a
// runnable is built from. Types only, in their own module: every file of this folder reads
// them here, so none imports create-runnable.ts (the one file that builds runnables) for a type.

/**
 * Anything with `invoke`: a Runnable, a chain, a tool loop. A property, not a method, so its
 * input is checked strictly: a step that needs more than the previous step gives does not
 * compile (TypeScript compares method parameters both ways).
 */
export interface Invocable<I, O> {
  readonly invoke: (input: I, config?: RunConfig) => Promise<O>;
}

/** A plain function as a step: it receives the run's config to hand on to what it calls. */
export type RunnableFunction<I, O> = (input: I, config: RunConfig) => O | Promise<O>;

/** What composition accepts: a Runnable, a chain or tool loop, or a function. */
export type RunnableLike<I, O> = Invocable<I, O> | RunnableFunction<I, O>;

export interface RetryOptions {
  /** Attempts in all, the first included (default 3). */
  readonly maxAttempts?: number;
  /** Which errors are worth another attempt (default: all but cancellation and bad config). */
  readonly shouldRetry?: (error: unknown, attempt: number) => boolean;
  /** Wait before attempt n+1: a number, or a function of n (default 0). */
  readonly delayMs?: number | ((attempt: number) => number);
}

export interface Runnable<I, O> extends Invocable<I, O> {
  readonly name: string;
  readonly kind: RunKind;
  /**
   * Every input, in order, at most `concurrency` at a time. Settled results: one failure does
   * not lose the others' outputs; a rejected entry holds that input's error.
   */
  batch(inputs: readonly I[], options?: BatchOptions): Promise<BatchResult<O>[]>;
  /**
   * The run as events (see RunEvent); `final` carries the output. The run starts when the
   * iteration does; breaking out aborts it. Under retries and fallbacks a failed attempt's
   * text deltas have already been sent: group deltas by `run.runId`.
   */
  stream(input: I, config?: RunConfig): AsyncIterable<RunEvent<O>>;
  /** This runnable, then `next` on its output. */
  pipe<N>(next: RunnableLike<O, N>): Runnable<I, N>;
  withRetry(options?: RetryOptions): Runnable<I, O>;
  /** On failure, each fallback in turn gets the same input. */
  withFallbacks(fallbacks: readonly RunnableLike<I, O>[]): Runnable<I, O>;
}

/** What a run's work can do besides computing its output. */
export interface RunContext {
  /** The config for the runs this one starts (this run as their parent, the run's signal). */
  readonly config: RunConfig;
  readonly run: RunInfo;
  /** True when a stream reads this run: children stream too, and their events are passed on. */
  readonly streaming: boolean;
  /** Tells a stream reader what happens inside this run; nothing under a plain `invoke`. */
  emit(event: RunEventBody): void;
  /** Runs a child with this run as its parent (`child.invoke(input, config)`). */
  call<CI, CO>(child: Invocable<CI, CO>, input: CI, config?: RunConfig): Promise<CO>;
}

/**
 * What a runnable is made of: its name, its kind and its work. Each kind of run describes
 * itself as one (chain-run.ts, sequence-run.ts, retry-run.ts, …); createRunnable turns it into
 * a Runnable with invoke, stream, batch, callbacks and the composition methods.
 */
export interface RunnableDefinition<I, O> {
  readonly name: string;
  readonly kind: RunKind;
  readonly run: (input: I, context: RunContext) => Promise<O>;
  /** Set by fromChain / fromToolLoop: their run reports itself to run observers (SPEC X4). */
  readonly [REPORTS_ITSELF]?: boolean;
}

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
