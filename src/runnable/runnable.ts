import { AbortError } from '../errors.js';
import { EventQueue } from '../host/event-queue.js';
import { linkedController } from '../linked-controller.js';
import { REPORTS_ITSELF } from '../observe/observe-agent-run.js';
import { type BatchOptions, type BatchResult, batchSettled } from './batch.js';
import { withFallbackList } from './fallbacks.js';
import { retrying } from './retry.js';
import type { RunConfig, RunInfo, RunKind } from './run-config.js';
import { checkRunConfig } from './run-config-check.js';
import type { InnerRunEvent, RunEvent, RunEventBody } from './run-events.js';
import { pipeTwo } from './sequence.js';
import { endRun, failRun, startRun, traced } from './trace-run.js';

// SPEC R1: the one interface chains, tool loops, models and functions share. A runnable is
// built from a single `run` function; invoke, stream, batch, the callbacks around each run
// and the composition methods come from here, so every kind behaves alike. (sequence.ts,
// retry.ts and fallbacks.ts import this file too: the cycle is safe because neither side uses
// the other before a runnable is built.)

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

export interface RunnableDefinition<I, O> {
  readonly name: string;
  readonly kind: RunKind;
  readonly run: (input: I, context: RunContext) => Promise<O>;
  /** Set by fromChain / fromToolLoop: their run reports itself to run observers (SPEC X4). */
  readonly [REPORTS_ITSELF]?: boolean;
}

const RUNNABLE = Symbol.for('statecraft.runnable');

/**
 * Where the events of a streamed run go. Carried in the config its children receive, so a
 * child reports into the same stream however it is called: by a composition, or by a function
 * step that hands its config on to `invoke`.
 */
const EVENT_SINK = Symbol.for('statecraft.eventSink');
type EventSink = (event: InnerRunEvent) => void;
type SinkConfig = RunConfig & { readonly [EVENT_SINK]?: EventSink };

export function isRunnable(value: unknown): value is Runnable<unknown, unknown> {
  return typeof value === 'object' && value !== null && RUNNABLE in value;
}

/** Builds a Runnable from its work. The composition helpers and the adapters all use it. */
export function createRunnable<I, O>(definition: RunnableDefinition<I, O>): Runnable<I, O> {
  const { name, kind, run } = definition;
  const reportsItself = definition[REPORTS_ITSELF] === true;

  /** One run: callbacks around it, and its events into `sink` when a stream reads it. */
  async function perform(input: I, config: SinkConfig | undefined): Promise<O> {
    checkRunConfig(config, `the config of runnable '${name}'`);
    const sink = config?.[EVENT_SINK];
    if (!sink) {
      return traced(
        config,
        name,
        kind,
        input,
        (childConfig, info) => {
          throwIfAborted(childConfig.signal);
          return run(input, contextOf(childConfig, info, undefined));
        },
        reportsItself,
      );
    }
    const active = await startRun(config, name, kind, input, reportsItself);
    const { info } = active;
    sink({ type: 'run-start', run: info, input });
    let output: O;
    try {
      throwIfAborted(active.childConfig.signal);
      output = await run(input, contextOf(active.childConfig, info, sink));
    } catch (error) {
      await failRun(active, error);
      sink({ type: 'run-error', run: info, error });
      throw error;
    }
    await endRun(active, output);
    sink({ type: 'run-end', run: info, output });
    return output;
  }

  const self: Runnable<I, O> & { readonly [RUNNABLE]: true } = {
    [RUNNABLE]: true,
    name,
    kind,
    invoke: perform,
    batch: async (inputs, options) => {
      checkRunConfig(options, `the batch options of runnable '${name}'`, true);
      return batchSettled(inputs, options, perform);
    },
    stream(input, config = {}) {
      return {
        [Symbol.asyncIterator]() {
          // Breaking out of the loop aborts the run: nobody would read what it goes on doing.
          const { controller, unlink } = linkedController(config.signal);
          const queue = new EventQueue<RunEvent<O>>(() =>
            controller.abort(new AbortError('the stream was closed by its reader')),
          );
          const streamed: SinkConfig = {
            ...config,
            signal: controller.signal,
            [EVENT_SINK]: (event) => queue.push(event),
          };
          queue.endWith(
            perform(input, streamed),
            (output) => ({ type: 'final', output }),
            () => undefined,
            unlink,
          );
          return queue[Symbol.asyncIterator]();
        },
      };
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

function contextOf(config: RunConfig, run: RunInfo, sink: EventSink | undefined): RunContext {
  return {
    config,
    run,
    streaming: sink !== undefined,
    emit: sink ? (event) => sink({ ...event, run } as InnerRunEvent) : () => {},
    call(child, input, childConfig = config) {
      throwIfAborted(childConfig.signal);
      return child.invoke(input, childConfig);
    },
  };
}

/** Whether an error means the run was cancelled: ours, or a platform AbortError (fetch, SDKs). */
export function isCancellation(error: unknown): boolean {
  return (
    AbortError.isInstance(error) ||
    (error instanceof Error && error.name === 'AbortError') ||
    (typeof DOMException !== 'undefined' &&
      error instanceof DOMException &&
      error.name === 'AbortError')
  );
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
