import { AbortError } from '../errors.js';
import { linkedController } from '../linked-controller.js';
import { EventQueue } from '../runtime/event-queue.js';
import { type BatchOptions, type BatchResult, batchSettled } from './batch.js';
import { withFallbackList } from './fallbacks.js';
import { retrying } from './retry.js';
import type { RunConfig, RunInfo, RunKind } from './run-config.js';
import type { InnerRunEvent, RunEvent, RunEventBody } from './run-events.js';
import { pipeTwo } from './sequence.js';
import { endRun, failRun, startRun, traced } from './trace-run.js';

// SPEC R1: the one interface chains, tool loops, models and functions share. A runnable is
// built from a single `run` function; invoke, stream, batch, the callbacks around each run
// and the composition methods come from here, so every kind behaves alike. (sequence.ts,
// retry.ts and fallbacks.ts import this file too: the cycle is safe because neither side uses
// the other before a runnable is built.)

/** Anything with `invoke`: a Runnable, a chain, a tool loop. */
export interface Invocable<I, O> {
  invoke(input: I, config?: RunConfig): Promise<O>;
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
  invoke(input: I, config?: RunConfig): Promise<O>;
  /**
   * Every input, in order, at most `concurrency` at a time. Settled results: one failure does
   * not lose the others' outputs; a rejected entry holds that input's error.
   */
  batch(inputs: readonly I[], options?: BatchOptions): Promise<BatchResult<O>[]>;
  /** The run as events (see RunEvent); `final` carries the output. Breaking out aborts the run. */
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
  /** True under `stream`: children are streamed too, and their events passed on. */
  readonly streaming: boolean;
  /** Tells a stream reader what happens inside this run; nothing under `invoke`. */
  emit(event: RunEventBody): void;
  /** Runs a child with this run as its parent: streamed (its events passed on) when this run is. */
  call<CI, CO>(child: Runnable<CI, CO>, input: CI, config?: RunConfig): Promise<CO>;
}

export interface RunnableDefinition<I, O> {
  readonly name: string;
  readonly kind: RunKind;
  readonly run: (input: I, context: RunContext) => Promise<O>;
}

const RUNNABLE = Symbol.for('statecraft.runnable');

export function isRunnable(value: unknown): value is Runnable<unknown, unknown> {
  return typeof value === 'object' && value !== null && RUNNABLE in value;
}

/** Builds a Runnable from its work. The composition helpers and the adapters all use it. */
export function createRunnable<I, O>(definition: RunnableDefinition<I, O>): Runnable<I, O> {
  const { name, kind, run } = definition;

  const self: Runnable<I, O> & { readonly [RUNNABLE]: true } = {
    [RUNNABLE]: true,
    name,
    kind,
    invoke(input, config) {
      return traced(config, name, kind, input, (childConfig, info) => {
        throwIfAborted(childConfig.signal);
        return run(input, contextOf(childConfig, info, undefined));
      });
    },
    batch(inputs, options) {
      return batchSettled(inputs, options, (input, config) => self.invoke(input, config));
    },
    stream(input, config = {}) {
      // Breaking out of the loop aborts the run: nobody would read what it goes on doing.
      const { controller, unlink } = linkedController(config.signal);
      const queue = new EventQueue<RunEvent<O>>(() =>
        controller.abort(new AbortError('the stream was closed by its reader')),
      );
      const work = async () => {
        const active = await startRun({ ...config, signal: controller.signal }, name, kind, input);
        const { info } = active;
        queue.push({ type: 'run-start', run: info, input });
        let output: O;
        try {
          throwIfAborted(controller.signal);
          output = await run(
            input,
            contextOf(active.childConfig, info, (event) => queue.push(event)),
          );
        } catch (error) {
          await failRun(active, error);
          queue.push({ type: 'run-error', run: info, error });
          throw error;
        }
        await endRun(active, output);
        queue.push({ type: 'run-end', run: info, output });
        return output;
      };
      queue.endWith(
        work(),
        (output) => ({ type: 'final', output }),
        () => undefined,
        unlink,
      );
      return queue;
    },
    pipe(next) {
      return pipeTwo(self, next);
    },
    withRetry(options) {
      return retrying(self, options);
    },
    withFallbacks(fallbacks) {
      return withFallbackList(self, fallbacks);
    },
  };
  return self;
}

function contextOf(
  config: RunConfig,
  run: RunInfo,
  push: ((event: InnerRunEvent) => void) | undefined,
): RunContext {
  return {
    config,
    run,
    streaming: push !== undefined,
    emit: push ? (event) => push({ ...event, run } as InnerRunEvent) : () => {},
    async call(child, input, childConfig = config) {
      throwIfAborted(childConfig.signal);
      if (!push) return child.invoke(input, childConfig);
      let output: unknown;
      let ended = false;
      for await (const event of child.stream(input, childConfig)) {
        if (event.type === 'final') {
          output = event.output;
          ended = true;
        } else push(event);
      }
      if (!ended) throw new Error(`${child.name} ended its stream without a final event`);
      return output as never;
    },
  };
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const reason: unknown = signal.reason;
  throw AbortError.isInstance(reason)
    ? reason
    : new AbortError(
        reason === undefined
          ? 'The run was cancelled'
          : `The run was cancelled: ${reason instanceof Error ? reason.message : String(reason)}`,
        { cause: reason },
      );
}
