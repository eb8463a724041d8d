import { checkInspector } from '../observe/inspect-runs.js';
import { observersFor, RUN_OBSERVERS } from '../observe/registry.js';
import { optionalPositive } from '../options/checks.js';
import type { EveryKeyListed } from '../options/keys.js';
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

/** Every option a chain's or tool loop's run takes. */
export const RUN_OPTION_KEYS = [
  'signal',
  'inspect',
  'observers',
  'parentRunId',
  'runId',
  'store',
  'beforeToolCall',
  'afterToolCall',
  'approve',
  'parkForApproval',
] as const satisfies readonly (keyof HostedRunOptions)[];

// tsc fails here, naming the option, when HostedRunOptions gains one the list lacks.
const _everyRunOptionListed: EveryKeyListed<
  NamedOptions<HostedRunOptions>,
  typeof RUN_OPTION_KEYS
> = true;

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
  if (entry === 'batch') known.push('concurrency');
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
  const { signal, inspect, observers, parentRunId, runId, store } = options;
  if (signal !== undefined && !isAbortSignal(signal)) {
    problems.add(
      'signal',
      `must be an AbortSignal (new AbortController().signal); got ${kindOf(signal)}`,
    );
  }
  if (inspect !== undefined) problems.check(() => checkInspector(inspect, 'inspect'));
  if (observers !== undefined) problems.check(() => observersFor(observers as never, []));
  if (parentRunId !== undefined && typeof parentRunId !== 'string') {
    problems.add('parentRunId', `must be a run id string; got ${kindOf(parentRunId)}`);
  }
  for (const hook of ['beforeToolCall', 'afterToolCall', 'approve'] as const) {
    const value = options[hook];
    if (value !== undefined && typeof value !== 'function') {
      problems.add(hook, `must be a function; got ${kindOf(value)}`);
    }
  }
  const { parkForApproval } = options;
  if (parkForApproval !== undefined && typeof parkForApproval !== 'boolean') {
    problems.add('parkForApproval', `must be true or false; got ${kindOf(parkForApproval)}`);
  }
  if (entry === 'batch') {
    problems.check(() => optionalPositive('concurrency', options.concurrency, true));
  }
  // Where the run is journaled: checked here only where the entry takes them itself.
  if (entry === 'durable' || entry === 'planOnly') return;
  if (runId !== undefined && entry !== 'resume' && typeof runId !== 'string') {
    problems.add(
      'runId',
      `must be a string (letters, digits, '.', '_', '-'); got ${kindOf(runId)}`,
    );
  }
  if (store !== undefined && !isJournalStore(store)) {
    problems.add('store', 'must be a JournalStore (fileStore(dir), memoryStore())');
  }
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
