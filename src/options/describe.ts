import { OptionProblems } from './problems.js';

/**
 * Options described once: one description per options object, from which its check (unknown
 * keys refused with the nearest name, every problem at once in one ConfigError), its defaults,
 * its checked values' types and its docs table derive. How to describe an options object:
 *
 * ```ts
 * // src/thing/options.ts
 * export interface ThingOptions {
 *   /** Attempts per call (default 3). *\/
 *   readonly retries?: number;
 *   readonly mode?: 'fast' | 'safe';
 *   readonly sampling?: { readonly seed?: number };
 * }
 * export const THING_OPTIONS = describeOptions('createThing', {
 *   retries: integer(0, { default: 3 }),           // "must be an integer >= 0; got 1.5"
 *   mode: oneOf(['fast', 'safe'], { defaultText: 'per model' }),
 *   sampling: object({ seed: integer(0) }),        // typos refused as `sampling.sed`
 * });
 * // tsc fails here, naming the key, when the interface and the description drift apart.
 * const _described: Describes<ThingOptions, typeof THING_OPTIONS> = true;
 *
 * // in the factory: every problem at once, defaults applied
 * const { retries, mode } = THING_OPTIONS.parse(options); // retries: number
 * ```
 *
 * - The kinds (`integer`, `count`, `positive`, `delay`, `timeLimit`, `name`, `model`, `flag`,
 *   `oneOf`, `func`, `object`, `satisfies`, `unchecked`) are in ./kinds.ts; each wraps a check
 *   of ./checks.ts, so messages stay as they were. A value no kind fits is
 *   `satisfies<T>(test, message)`, or an `OptionSpec` of its own (`check` adds its problems
 *   and returns the value, or undefined when it is bad).
 * - Keys are checked in the order the description lists them, and problems reported in that
 *   order (tests pin it). A rule between options (one needs another) is the `also` of the
 *   option it reports on; it sees the raw options (`at.options`) and the values checked so
 *   far (`at.values`), and may name another option (`at.problem(message, 'maxCost')`).
 * - `collect(options, problems)` adds to a factory's own problems (e.g. its tools'), so they
 *   are thrown together; `checkValues` checks values only, for a caller that refuses
 *   unknown keys its own way (a run's options say where a misplaced key belongs).
 * - What derives: the keys, the check, the defaults (`defaults`, applied by `parse`), the
 *   checked values' types (a defaulted one is never undefined) and the docs' check. What is
 *   checked, not derived: the public interface, which stays hand-written (generic in an
 *   output type, with its doc comments, cheap for tsc and readable on hover); `Describes`
 *   ties it to the description: the same keys, and each value type the same both ways (a
 *   spec of type `unknown`, such as a generic schema, ties its key only).
 * - The docs: `defaultText` says what the docs table's default column says when the default
 *   is not a plain value; test/options/docs-table.test.ts checks a table lists exactly the
 *   described keys with those defaults: add a description there to check its table.
 *
 * Why not a zod schema: the messages users read are pinned by tests ("must be an integer >= 1;
 * got 0", nested paths, "did you mean"), which zod's issues would have to be mapped back to one
 * by one; a description built at module load must cost next to nothing (`import('statecraft')`
 * is measured); and a zod-inferred public type would cost every user's tsc and read badly on
 * hover. A zod schema can still describe one option: `satisfies((v) => schema.safeParse(v)
 * .success, message)`.
 */

/** Where an option's check runs: its dotted name, the problems so far, its siblings. */
export interface OptionContext {
  /** The option's name as users write it: `maxIterations`, `modelSettings.seed`. */
  readonly name: string;
  readonly problems: OptionProblems;
  /** The options object as given (the nested one, for a nested option). */
  readonly options: Readonly<Record<string, unknown>>;
  /** The values of the options before this one that passed their checks, defaults applied. */
  readonly values: Readonly<Record<string, unknown>>;
  /** Adds a problem of this option (or of `option`, another one's name). */
  problem(message: string, option?: string): void;
}

/** The phantom key carrying a spec's value type: never set at run time. */
declare const VALUE: unique symbol;

/**
 * One option: how a given value is checked, its default, and what the docs table says of it.
 * `T` is the type the option takes (tied to the interface by `Describes`).
 */
export interface OptionSpec<T> {
  /**
   * Checks a given value (never undefined unless `required`), adding a problem for a bad
   * one. Returns the value as the runtime uses it, or undefined when it is bad.
   */
  readonly check: (value: unknown, at: OptionContext) => T | undefined;
  /** The value when the option is not given. */
  readonly default?: T;
  /** Checked even when not given (`check` then sees undefined): the option must be there. */
  readonly required?: boolean;
  /**
   * What the docs table's default column says, when the default is not a plain value (e.g.
   * `none`, `the model`); plain defaults are written as values (`10`, `128,000`, `true`).
   */
  readonly defaultText?: string;
  /** A rule with other options, run after `check` whether the option was given or not. */
  readonly also?: (value: T | undefined, at: OptionContext) => void;
  readonly [VALUE]?: T;
}

// biome-ignore lint/suspicious/noExplicitAny: a spec of any value type
export type AnySpec = OptionSpec<any>;
export type Specs = Readonly<Record<string, AnySpec>>;

/** The type an option takes. */
export type SpecValue<S> = S extends OptionSpec<infer T> ? T : never;

/** An options object's checked values: the defaulted ones always there, the rest maybe. */
export type CheckedValues<S extends Specs> = {
  readonly [K in keyof S]: S[K] extends { readonly default: infer D }
    ? undefined extends D
      ? SpecValue<S[K]> | undefined
      : SpecValue<S[K]>
    : SpecValue<S[K]> | undefined;
};

/** The defaults of the options that have one. */
export type DefaultsOf<S extends Specs> = {
  readonly [K in keyof S as S[K] extends { readonly default: unknown } ? K : never]: S[K] extends {
    readonly default: infer D;
  }
    ? D
    : never;
};

/** An options object's described keys, check and defaults. */
export interface OptionsDescription<S extends Specs> {
  /** The factory or function the options are given to, as problems name it: `createChain`. */
  readonly where: string;
  readonly specs: S;
  /** Every key, in the order the checks run (and problems are reported). */
  readonly keys: readonly (keyof S & string)[];
  /** The value of each option that has a default, when it is not given. */
  readonly defaults: DefaultsOf<S>;
  /**
   * Checks `options` (an object) into `problems` without throwing: unknown keys first, then
   * each option in key order. Returns the values that passed, defaults applied; a bad one is
   * undefined, so call `problems.throwIfAny()` before relying on them.
   */
  collect(options: object, problems: OptionProblems): CheckedValues<S>;
  /** `collect`, then one ConfigError naming every problem, if any. */
  parse(options: object): CheckedValues<S>;
  /**
   * Checks the values of `keys` only (all by default), in key order, into `problems`: for a
   * caller that refuses unknown keys its own way (e.g. saying where a misplaced one belongs).
   */
  checkValues(
    options: object,
    problems: OptionProblems,
    keys?: readonly (keyof S & string)[],
  ): CheckedValues<S>;
}

/** Describes an options object given to `where`; the keys' order is the checks' order. */
export function describeOptions<const S extends Specs>(
  where: string,
  specs: S,
): OptionsDescription<S> {
  const keys = Object.keys(specs) as (keyof S & string)[];
  const defaults: Partial<Record<keyof S, unknown>> = {};
  for (const key of keys) {
    const spec = specs[key] as AnySpec;
    if (spec.default !== undefined) defaults[key] = spec.default;
  }
  const collect = (options: object, problems: OptionProblems): CheckedValues<S> => {
    problems.unknownKeys(options, keys);
    return checkEach(specs, keys, options as Readonly<Record<string, unknown>>, problems, '');
  };
  return Object.freeze({
    where,
    specs,
    keys: Object.freeze(keys),
    defaults: Object.freeze(defaults) as unknown as DefaultsOf<S>,
    collect,
    checkValues(options: object, problems: OptionProblems, only = keys) {
      const given = options as Readonly<Record<string, unknown>>;
      const checked = keys.filter((key) => only.includes(key));
      return checkEach(specs, checked, given, problems, '');
    },
    parse(options: object) {
      const problems = new OptionProblems(where);
      const values = collect(options, problems);
      problems.throwIfAny();
      return values;
    },
  });
}

/**
 * Checks each option of `keys` in `options` (a nested object's too, under `prefix`), the
 * unknown keys already refused. Exported for nested objects (`object()` in ./kinds.ts).
 */
export function checkEach<S extends Specs>(
  specs: S,
  keys: readonly (keyof S & string)[],
  options: Readonly<Record<string, unknown>>,
  problems: OptionProblems,
  prefix: string,
): CheckedValues<S> {
  const values: Record<string, unknown> = {};
  for (const key of keys) {
    const spec = specs[key] as AnySpec;
    const name = `${prefix}${key}`;
    const at: OptionContext = {
      name,
      problems,
      options,
      values,
      problem: (message, option = name) => problems.add(option, message),
    };
    const given = options[key];
    const value =
      given === undefined && !spec.required
        ? spec.default
        : (problems.check(() => spec.check(given, at)) ?? undefined);
    if (value !== undefined) values[key] = value;
    spec.also?.(value, at);
  }
  return values as CheckedValues<S>;
}

/** `true` when both types take each other's values. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The keys of `I` and of `S` that drift: in one only, or of value types that differ. */
type Drifted<I, S extends Specs> =
  | Exclude<keyof I, keyof S>
  | Exclude<keyof S, keyof I>
  | {
      [K in keyof I & keyof S]: unknown extends SpecValue<S[K]>
        ? never // described as opaque: its check is its own (e.g. a generic schema)
        : Same<Exclude<I[K], undefined>, SpecValue<S[K]>> extends true
          ? never
          : K;
    }[keyof I & keyof S];

/**
 * `true` when the interface `I` and the description `D` have the same keys, each of the same
 * value type (a spec of type `unknown` is opaque: its key is tied, not its type); otherwise
 * an object naming the keys that drifted, which `true` is not assignable to:
 * `const _described: Describes<ChainOptions<unknown>, typeof CHAIN_OPTIONS> = true;`
 */
export type Describes<I, D extends { readonly specs: Specs }> = [Drifted<I, D['specs']>] extends [
  never,
]
  ? true
  : { readonly drifted: Drifted<I, D['specs']> };

/**
 * `spec` with another docs default text: for a description that reuses another's spec but
 * documents its default differently. Typed as the spec it was given, so declaration files can
 * name it (a spread would spell out the phantom value key, which they cannot).
 */
export function withDefaultText<S extends AnySpec>(spec: S, defaultText: string): S {
  return { ...spec, defaultText };
}
