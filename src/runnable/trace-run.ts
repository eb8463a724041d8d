import { randomUUID } from '../lazy-crypto.js';
import { type InheritsObservers, observersFor, RUN_OBSERVERS } from '../observe/registry.js';
import type { RunInfo, RunKind } from '../observe/run-info.js';
import { observedTime, type RunObservation, startObservation } from '../observe/run-observation.js';
import { callbackList, type RunConfig } from '../run-config/config.js';

// The one place callbacks fire (SPEC R3): start before the work, end after it, error before
// the error is rethrown. Every Runnable's invoke and stream go through it, so a tree of runs
// is reported the same way however it was composed.

export interface ActiveRun {
  readonly info: RunInfo;
  /** What the runs this one starts receive: the same callbacks, this run as their parent. */
  readonly childConfig: RunConfig;
  /** The run as its observers see it (SPEC X4); undefined when nobody observes it. */
  readonly observation?: RunObservation | undefined;
}

/**
 * Opens a run: a fresh id under the config's parent, `onStart` fired and awaited, then the
 * run's observers told. `reportsItself`: the work reports this run to observers itself (a
 * chain or tool loop, whose report carries its machine, model calls and usage), so observers
 * see one run, not a Runnable run with the same run inside.
 */
export async function startRun(
  config: RunConfig | undefined,
  name: string,
  kind: RunKind,
  input: unknown,
  reportsItself = false,
): Promise<ActiveRun> {
  const info: RunInfo = {
    runId: randomUUID(),
    parentRunId: config?.parentRunId,
    name: config?.runName ?? name,
    kind,
  };
  // The name override is for this run only: the runs it starts keep their own names.
  const { runName: _ownName, ...inherited } = config ?? {};
  // Checked before any callback runs: bad `observers` fail the run before it is reported.
  // Resolved once per tree (by the top-level run) and handed down, so every run of the tree
  // reports to the same observers, whatever is registered or unregistered meanwhile.
  const observers = observersFor(
    config?.observers,
    (config as InheritsObservers | undefined)?.[RUN_OBSERVERS],
  );
  const childConfig: RunConfig & InheritsObservers = {
    ...inherited,
    parentRunId: info.runId,
    [RUN_OBSERVERS]: observers,
  };
  for (const callbacks of callbackList(config)) await callbacks.onStart?.(info, input);
  const observation =
    !reportsItself && observers.length > 0
      ? startObservation(
          observers,
          { ...info, ...observedSession(config), startTime: observedTime() },
          input,
        )
      : undefined;
  return { info, childConfig, observation };
}

/**
 * The run's conversation for observers (`ObservedRun.sessionId`, a trace's
 * `gen_ai.conversation.id`): the config's `sessionId`, which every run of the tree inherits.
 */
export function observedSession(config: RunConfig | undefined): { readonly sessionId?: string } {
  const sessionId = config?.sessionId;
  return typeof sessionId === 'string' ? { sessionId } : {};
}

/**
 * Fires `onEnd`, then tells the observers: a callback that throws fails the run, so observers
 * hear of the run's end only once it is decided (the callback's error, if one threw).
 */
export async function endRun(run: ActiveRun, output: unknown): Promise<void> {
  try {
    for (const callbacks of callbackList(run.childConfig)) {
      await callbacks.onEnd?.(run.info, output);
    }
  } catch (error) {
    run.observation?.failed(error);
    throw error;
  }
  run.observation?.succeeded(output);
}

/**
 * Fires `onError`; the caller rethrows `error` afterwards. Observers are told after the
 * callbacks, of the error the caller will get (a throwing `onError`'s own, if one throws).
 */
export async function failRun(run: ActiveRun, error: unknown): Promise<void> {
  try {
    for (const callbacks of callbackList(run.childConfig)) {
      await callbacks.onError?.(run.info, error);
    }
  } catch (callbackError) {
    run.observation?.failed(callbackError);
    throw callbackError;
  }
  run.observation?.failed(error);
}

/** Runs `work` as one traced run: start, then end or error (awaited), then the outcome. */
export async function traced<O>(
  config: RunConfig | undefined,
  name: string,
  kind: RunKind,
  input: unknown,
  work: (childConfig: RunConfig, run: RunInfo) => Promise<O>,
  reportsItself = false,
): Promise<O> {
  const run = await startRun(config, name, kind, input, reportsItself);
  let output: O;
  try {
    output = await work(run.childConfig, run.info);
  } catch (error) {
    await failRun(run, error);
    throw error;
  }
  await endRun(run, output);
  return output;
}
