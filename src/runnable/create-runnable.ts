import type { Chain } from '../chain/chain.js';
import { AbortError } from '../errors.js';
import { EventQueue } from '../host/event-queue.js';
import { linkedController } from '../linked-controller.js';
import { REPORTS_ITSELF } from '../observe/observe-agent-run.js';
import type { RunInfo } from '../observe/run-info.js';
import { batchSettled } from '../run-config/batch.js';
import type { RunConfig } from '../run-config/config.js';
import type { ToolLoop } from '../tool-loop/tool-loop.js';
import { throwIfAborted } from './cancellation.js';
import { chainRun } from './chain-run.js';
import { fallbacksRun } from './fallbacks-run.js';
import { functionRun } from './function-run.js';
import { retryRun } from './retry-run.js';
import { checkRunConfig } from './run-config-check.js';
import type { InnerRunEvent, RunEvent } from './run-events.js';
import { sequenceRun } from './sequence-run.js';
import { toolLoopRun } from './tool-loop-run.js';
import { endRun, failRun, startRun, traced } from './trace-run.js';
import type {
  InputOf,
  OutputOf,
  RunContext,
  Runnable,
  RunnableDefinition,
  RunnableLike,
} from './types.js';

// SPEC R1: the one place a Runnable is built. Every kind of run describes its work as a
// RunnableDefinition (chain-run.ts, sequence-run.ts, retry-run.ts, …, which import only types);
// createRunnable gives each invoke, stream, batch, the callbacks around each run and the
// composition methods, so every kind behaves alike. The methods (pipe, withRetry,
// withFallbacks) and `runnable(step)` build more runnables from those definitions here, so
// nothing below this file imports it back: the public doors (fromChain, sequence, …) sit above.
// src/runnable is the top of the runtime: it reads the run config, the observers, the host's
// event queue and the types of chains and tool loops; nothing outside it but the package
// entries imports it (test/architecture/import-rules.test.ts holds the layers).

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
    pipe<N>(next: RunnableLike<O, N>): Runnable<I, N> {
      // Typed by this signature; the sequence's run passes values on as `unknown`.
      const steps = [self, runnable(next)] as readonly Runnable<unknown, unknown>[];
      return createRunnable(sequenceRun(steps)) as Runnable<I, N>;
    },
    withRetry(options) {
      return createRunnable(retryRun(self, options));
    },
    withFallbacks(fallbacks) {
      if (!Array.isArray(fallbacks) || fallbacks.length === 0) {
        throw new TypeError('withFallbacks(fallbacks) needs a non-empty array of steps');
      }
      const candidates = fallbacks.map((step) => runnable(step) as Runnable<I, O>);
      return createRunnable(fallbacksRun(self, candidates));
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
  if (typeof step === 'function') return createRunnable(functionRun(step, name));
  if (typeof step !== 'object' || step === null || typeof step.invoke !== 'function') {
    throw new TypeError(
      'a step must be a Runnable, a chain, a tool loop, a function, or an object with invoke(input, config)',
    );
  }
  const machineId = (step as { machine?: { id?: unknown } }).machine?.id;
  if (machineId === 'chain') {
    return createRunnable(chainRun(step as Chain<unknown>, name)) as Runnable<unknown, unknown>;
  }
  if (machineId === 'toolLoop') {
    return createRunnable(toolLoopRun(step as ToolLoop, name)) as Runnable<unknown, unknown>;
  }
  return createRunnable({
    name: name ?? 'invocable',
    kind: 'function',
    run: (input, context) => step.invoke(input, context.config),
  });
}
