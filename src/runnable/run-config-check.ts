import { BATCH_OPTIONS, isAbortSignal, RUN_OPTION_KEYS, RUN_OPTIONS } from '../host/run-options.js';
import { type Describes, describeOptions } from '../options/describe.js';
import { satisfies } from '../options/kinds.js';
import { OptionProblems } from '../options/problems.js';
import type { RunConfig } from '../run-config/config.js';

// SPEC Q4 for a Runnable's config, as for a chain's run options: `runnable(chain).invoke(q,
// { runId, store })` used to run a plain run, the durable options silently dropped (the
// config carries what every Runnable shares, not one kind's run options). Each Runnable run
// checks its config whole before anything runs.

type Config<K extends keyof RunConfig> = NonNullable<RunConfig[K]>;

const text = <K extends 'parentRunId' | 'runName' | 'sessionId'>() =>
  satisfies<Config<K>>(
    (value) => typeof value === 'string',
    (value) => `must be a string; got ${typeof value}`,
  );

/**
 * A Runnable's config described once (see src/options/describe.ts): each value's check, in
 * the order problems are reported.
 */
export const RUN_CONFIG = describeOptions('invoke()', {
  signal: satisfies<Config<'signal'>>(
    isAbortSignal,
    'must be an AbortSignal (new AbortController().signal)',
    { defaultText: 'none' },
  ),
  callbacks: satisfies<Config<'callbacks'>>(
    (value) => (Array.isArray(value) ? value : [value]).every(isObject),
    'must be an object { onStart?, onEnd?, onError? } or a list of them',
  ),
  parentRunId: text<'parentRunId'>(),
  runName: text<'runName'>(),
  sessionId: text<'sessionId'>(),
  intermediateResults: satisfies<Config<'intermediateResults'>>(
    (value) => isObject(value) && 'current' in value,
    'must be an object { current } (a sequence makes one)',
  ),
  inspect: RUN_OPTIONS.specs.inspect,
  observers: RUN_OPTIONS.specs.observers,
});

// tsc fails here, naming the key, when RunConfig and its description drift apart.
const _described: Describes<RunConfig, typeof RUN_CONFIG> = true;

/**
 * Throws one ConfigError naming every problem of `config` (a run of `where`, e.g.
 * `invoke() of runnable 'triage'`): unknown keys with the nearest known one, a chain's or
 * tool loop's run option said to belong to its invoke(), values of the wrong type.
 */
export function checkRunConfig(config: unknown, where: string, batch = false): void {
  if (config === undefined) return;
  const problems = new OptionProblems(where);
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    problems.add('config', `must be an object { ${RUN_CONFIG.keys.join('?, ')}? }`);
    problems.throwIfAny();
    return;
  }
  const given = config as Readonly<Record<string, unknown>>;
  const known: string[] = [...RUN_CONFIG.keys];
  if (batch) known.push(...BATCH_OPTIONS.keys);
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
  RUN_CONFIG.checkValues(given, problems);
  if (batch) BATCH_OPTIONS.checkValues(given, problems);
  problems.throwIfAny();
}

function isObject(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}
