import { isAbortSignal, RUN_OPTION_KEYS } from '../host/run-options.js';
import { checkInspector } from '../observe/inspect-runs.js';
import { observersFor } from '../observe/registry.js';
import { optionalPositive } from '../options/checks.js';
import type { EveryKeyListed } from '../options/keys.js';
import { OptionProblems } from '../options/problems.js';
import type { RunConfig } from '../run-config/config.js';

// SPEC Q4 for a Runnable's config, as for a chain's run options: `runnable(chain).invoke(q,
// { runId, store })` used to run a plain run, the durable options silently dropped (the
// config carries what every Runnable shares, not one kind's run options). Each Runnable run
// checks its config whole before anything runs.

/** Every key of a Runnable's config. */
const RUN_CONFIG_KEYS = [
  'signal',
  'callbacks',
  'parentRunId',
  'runName',
  'intermediateResults',
  'sessionId',
  'inspect',
  'observers',
] as const satisfies readonly (keyof RunConfig)[];

// tsc fails here, naming the key, when RunConfig gains one the list lacks.
const _everyRunConfigKeyListed: EveryKeyListed<RunConfig, typeof RUN_CONFIG_KEYS> = true;

/**
 * Throws one ConfigError naming every problem of `config` (a run of `where`, e.g.
 * `invoke() of runnable 'triage'`): unknown keys with the nearest known one, a chain's or
 * tool loop's run option said to belong to its invoke(), values of the wrong type.
 */
export function checkRunConfig(config: unknown, where: string, batch = false): void {
  if (config === undefined) return;
  const problems = new OptionProblems(where);
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    problems.add('config', `must be an object { ${RUN_CONFIG_KEYS.join('?, ')}? }`);
    problems.throwIfAny();
    return;
  }
  const given = config as Readonly<Record<string, unknown>>;
  const known: string[] = [...RUN_CONFIG_KEYS];
  if (batch) known.push('concurrency');
  const runOptions: readonly string[] = RUN_OPTION_KEYS;
  const agentOnly = Object.keys(given).filter((k) => !known.includes(k) && runOptions.includes(k));
  problems.unknownKeys(
    Object.fromEntries(
      Object.keys(given)
        .filter((key) => !agentOnly.includes(key))
        .map((key) => [key, true]),
    ),
    known,
  );
  for (const key of agentOnly) {
    problems.add(
      key,
      "is a run option of a chain or tool loop, which a Runnable's config does not carry: pass it to chain.invoke(input, options) (or loop.invoke)",
    );
  }
  checkValues(problems, given);
  if (batch) problems.check(() => optionalPositive('concurrency', given.concurrency, true));
  problems.throwIfAny();
}

function checkValues(problems: OptionProblems, config: Readonly<Record<string, unknown>>): void {
  const { signal, callbacks, inspect, observers, intermediateResults } = config;
  if (signal !== undefined && !isAbortSignal(signal)) {
    problems.add('signal', 'must be an AbortSignal (new AbortController().signal)');
  }
  const list = Array.isArray(callbacks) ? callbacks : callbacks === undefined ? [] : [callbacks];
  if (list.some((c) => typeof c !== 'object' || c === null)) {
    problems.add('callbacks', 'must be an object { onStart?, onEnd?, onError? } or a list of them');
  }
  for (const key of ['parentRunId', 'runName', 'sessionId'] as const) {
    if (config[key] !== undefined && typeof config[key] !== 'string') {
      problems.add(key, `must be a string; got ${typeof config[key]}`);
    }
  }
  if (
    intermediateResults !== undefined &&
    (typeof intermediateResults !== 'object' ||
      intermediateResults === null ||
      !('current' in intermediateResults))
  ) {
    problems.add('intermediateResults', 'must be an object { current } (a sequence makes one)');
  }
  if (inspect !== undefined) problems.check(() => checkInspector(inspect, 'inspect'));
  if (observers !== undefined) problems.check(() => observersFor(observers as never, []));
}
