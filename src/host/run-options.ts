import { checkInspector } from '../observe/inspect-runs.js';
import { observersFor, RUN_OBSERVERS } from '../observe/registry.js';
import { type Describes, describeOptions } from '../options/describe.js';
import { flag, positive, satisfies, unchecked } from '../options/kinds.js';
import { OptionProblems } from '../options/problems.js';
import type { RunConfig } from '../run-config/config.js';
import type { HostedRunOptions } from './run-kind.js';

// SPEC Q4 for a run's options, as for a factory's: `invoke(q, { runID })` (a typo) used to run
// a plain run that is not durable, silently. A chain's or tool loop's invoke, stream, batch,
// resume, durable() and planOnly() check their options whole before anything runs: unknown
// keys (with the nearest known name), values of the wrong type, runId without a store, each
// named, every problem in one ConfigError.

/** Where run options are given: each entry takes the run options, give or take a few. */
export type RunEntry = 'invoke' | 'stream' | 'batch' | 'resume' | 'durable' | 'planOnly';

/** The options' own names (their symbol keys are internal wires, never users' options). */
type NamedOptions<T> = { [K in keyof T as K extends string ? K : never]: T[K] };

/** The type of a run option. */
type RunOption<K extends keyof NamedOptions<HostedRunOptions>> = NonNullable<
  NamedOptions<HostedRunOptions>[K]
>;

const hook = <K extends 'beforeToolCall' | 'afterToolCall' | 'approve'>() =>
  satisfies<RunOption<K>>(
    (value) => typeof value === 'function',
    (value) => `must be a function; got ${kindOf(value)}`,
  );

/**
 * The options a chain's or tool loop's run takes, described once (see
 * src/options/describe.ts): each value's check, in the order problems are reported. Which
 * entry takes which, and what they need of each other, is checkRunOptions' below.
 */
export const RUN_OPTIONS = describeOptions('invoke()', {
  signal: satisfies<RunOption<'signal'>>(
    isAbortSignal,
    (value) => `must be an AbortSignal (new AbortController().signal); got ${kindOf(value)}`,
    { defaultText: 'none' },
  ),
  inspect: unchecked<RunOption<'inspect'>>({
    also: (inspect, at) => {
      if (inspect !== undefined) at.problems.check(() => checkInspector(inspect, 'inspect'));
    },
  }),
  observers: unchecked<RunOption<'observers'>>({
    defaultText: 'the registered observers',
    also: (observers, at) => {
      if (observers !== undefined) at.problems.check(() => observersFor(observers, []));
    },
  }),
  parentRunId: satisfies<RunOption<'parentRunId'>>(
    (value) => typeof value === 'string',
    (value) => `must be a run id string; got ${kindOf(value)}`,
  ),
  beforeToolCall: hook<'beforeToolCall'>(),
  afterToolCall: hook<'afterToolCall'>(),
  approve: hook<'approve'>(),
  parkForApproval: flag(
    { default: false },
    (value) => `must be true or false; got ${kindOf(value)}`,
  ),
  runId: satisfies<RunOption<'runId'>>(
    (value) => typeof value === 'string',
    (value) => `must be a string (letters, digits, '.', '_', '-'); got ${kindOf(value)}`,
    { defaultText: 'none (not journaled)' },
  ),
  store: satisfies<RunOption<'store'>>(
    isJournalStore,
    'must be a JournalStore (fileStore(dir), memoryStore())',
  ),
});

// tsc fails here, naming the option, when HostedRunOptions and its description drift apart.
const _described: Describes<NamedOptions<HostedRunOptions>, typeof RUN_OPTIONS> = true;

/** Every option a chain's or tool loop's run takes. */
export const RUN_OPTION_KEYS = RUN_OPTIONS.keys;

/** `batch()` also takes how many runs go at once. */
export const BATCH_OPTIONS = describeOptions('batch()', {
  concurrency: positive(true, { defaultText: 'all at once' }),
});

/**
 * A Runnable's config keys that a run does not take. A function step hands its config on
 * (`(input, config) => chain.invoke(input, config)`): there they were the Runnable's, and the
 * run leaves them to it. Given to a run directly, they would do nothing: refused, saying where
 * they belong.
 */
const RUNNABLE_CONFIG_KEYS = [
  'callbacks',
  'runName',
  'intermediateResults',
  'sessionId',
] as const satisfies readonly (keyof RunConfig)[];

/** What an entry refuses of the run options, and why: it has them from elsewhere. */
const GIVEN_ELSEWHERE: Readonly<Record<RunEntry, Readonly<Record<string, string>>>> = {
  invoke: {},
  stream: {},
  batch: {},
  resume: { runId: "is resume()'s first argument: resume(runId, { store })" },
  durable: {
    runId: "comes from the actor's input: invoke it with input { runId, input }",
    store: "is durable()'s first argument: durable(store, options)",
    signal: "is the actor's own: the machine that invokes it stops the run by leaving the state",
  },
  planOnly: {
    runId: 'planOnly() is a probe that executes nothing: it is not journaled; drop runId and store',
    store: 'planOnly() is a probe that executes nothing: it is not journaled; drop runId and store',
  },
};

/**
 * Checks the options a run was given at `entry` (`batch` also takes `concurrency`; `resume`
 * needs a store; `durable` is given its store apart), every problem at once: a ConfigError
 * naming each, thrown before anything runs. `what` names the agent, e.g. `chain 'triage'`.
 */
export function checkRunOptions(
  options: unknown,
  entry: RunEntry,
  what: string,
  durableStore?: unknown,
): void {
  const problems = new OptionProblems(`${entry}() of ${what}`);
  if (entry === 'durable' && !isJournalStore(durableStore)) {
    problems.add('store', 'durable(store) needs a JournalStore (fileStore(dir), memoryStore())');
  }
  if (options === undefined && entry !== 'resume') {
    problems.throwIfAny();
    return;
  }
  if (options === undefined) options = {}; // resume(runId): its missing store is named below
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    problems.add(
      'options',
      `must be an object of run options { ${RUN_OPTION_KEYS.map((key) => `${key}?`).join(', ')} }; got ${kindOf(options)}`,
    );
    problems.throwIfAny();
    return;
  }
  const given = options as Readonly<Record<string, unknown>>;
  const elsewhere = GIVEN_ELSEWHERE[entry];
  const handedOn = Object.hasOwn(given, RUN_OBSERVERS);
  const known: string[] = [...RUN_OPTION_KEYS, ...Object.keys(elsewhere)];
  if (entry === 'batch') known.push(...BATCH_OPTIONS.keys);
  if (handedOn) known.push(...RUNNABLE_CONFIG_KEYS);
  const configKeys: readonly string[] = RUNNABLE_CONFIG_KEYS;
  const foreign = Object.keys(given).filter((key) => !known.includes(key));
  const misplaced = foreign.filter((key) => configKeys.includes(key));
  problems.unknownKeys(
    Object.fromEntries(foreign.filter((key) => !misplaced.includes(key)).map((k) => [k, true])),
    known,
  );
  // A Runnable's own keys, given to a run: said where they belong, not taken for typos.
  const agent = what.startsWith('chain') ? 'chain' : 'loop';
  for (const key of misplaced) {
    problems.add(
      key,
      `is an option of a Runnable's config, not of a run: pass it to runnable(${agent}).${entry === 'stream' ? 'stream' : 'invoke'}(input, { ${key} })`,
    );
  }
  for (const [key, why] of Object.entries(elsewhere)) {
    if (given[key] !== undefined) problems.add(key, why);
  }
  checkValues(problems, given, entry);
  problems.throwIfAny();
}

/** The values of the known options, and what they need of each other. */
function checkValues(
  problems: OptionProblems,
  options: Readonly<Record<string, unknown>>,
  entry: RunEntry,
): void {
  // Where the run is journaled: checked here only where the entry takes them itself.
  const journaled = entry !== 'durable' && entry !== 'planOnly';
  const checked = RUN_OPTIONS.keys.filter(
    (key) =>
      (key !== 'runId' || (journaled && entry !== 'resume')) && (key !== 'store' || journaled),
  );
  // batch's concurrency is checked after the run options' hooks, before where it is journaled.
  const first = checked.filter((key) => key !== 'runId' && key !== 'store');
  RUN_OPTIONS.checkValues(options, problems, first);
  if (entry === 'batch') BATCH_OPTIONS.checkValues(options, problems);
  RUN_OPTIONS.checkValues(
    options,
    problems,
    checked.filter((key) => !(first as readonly string[]).includes(key)),
  );
  if (!journaled) return;
  const { runId, store, parkForApproval } = options;
  if (entry === 'resume') {
    if (store === undefined) problems.add('store', 'resume(runId, { store }) needs the store');
    return;
  }
  if (runId !== undefined && store === undefined) {
    problems.add('store', 'runId needs a store to journal the run in');
  }
  if (store !== undefined && runId === undefined) {
    problems.add('runId', 'a store needs the runId to journal the run under');
  }
  if (parkForApproval === true && (runId === undefined || store === undefined)) {
    problems.add(
      'parkForApproval',
      'a run parks in its journal: give it a runId and a store (fileStore(dir))',
    );
  }
}

/** What a durable run journals in: a store with `append` (fileStore, memoryStore, yours). */
function isJournalStore(value: unknown): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { append?: unknown }).append === 'function'
  );
}

/** An AbortSignal, also one of another realm or a polyfill: what a run listens to. */
export function isAbortSignal(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const signal = value as Partial<AbortSignal>;
  return typeof signal.aborted === 'boolean' && typeof signal.addEventListener === 'function';
}

/** How a value of the wrong type is shown: its kind, never its content. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
