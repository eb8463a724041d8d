import { randomUUID } from 'node:crypto';
import { callbackList, type RunConfig, type RunInfo, type RunKind } from './run-config.js';

// The one place callbacks fire (SPEC R3): start before the work, end after it, error before
// the error is rethrown. Every Runnable's invoke and stream go through it, so a tree of runs
// is reported the same way however it was composed.

export interface ActiveRun {
  readonly info: RunInfo;
  /** What the runs this one starts receive: the same callbacks, this run as their parent. */
  readonly childConfig: RunConfig;
}

/** Opens a run: a fresh id under the config's parent, `onStart` fired and awaited. */
export async function startRun(
  config: RunConfig | undefined,
  name: string,
  kind: RunKind,
  input: unknown,
): Promise<ActiveRun> {
  const info: RunInfo = {
    runId: randomUUID(),
    parentRunId: config?.parentRunId,
    name: config?.runName ?? name,
    kind,
  };
  // The name override is for this run only: the runs it starts keep their own names.
  const { runName: _ownName, ...inherited } = config ?? {};
  const childConfig: RunConfig = { ...inherited, parentRunId: info.runId };
  for (const callbacks of callbackList(config)) await callbacks.onStart?.(info, input);
  return { info, childConfig };
}

export async function endRun(run: ActiveRun, output: unknown): Promise<void> {
  for (const callbacks of callbackList(run.childConfig)) await callbacks.onEnd?.(run.info, output);
}

/** Fires `onError`; the caller rethrows `error` afterwards. */
export async function failRun(run: ActiveRun, error: unknown): Promise<void> {
  for (const callbacks of callbackList(run.childConfig)) await callbacks.onError?.(run.info, error);
}

/** Runs `work` as one traced run: start, then end or error (awaited), then the outcome. */
export async function traced<O>(
  config: RunConfig | undefined,
  name: string,
  kind: RunKind,
  input: unknown,
  work: (childConfig: RunConfig, run: RunInfo) => Promise<O>,
): Promise<O> {
  const run = await startRun(config, name, kind, input);
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
