import type { LanguageModel } from '../model/language-model.js';
import {
  checkModel,
  countOrInfinity,
  integerAtLeast,
  optionalDelay,
  optionalPositive,
  optionalTimeLimit,
  runName,
} from './checks.js';
import { checkEach, type OptionSpec, type Specs, type SpecValue } from './describe.js';

// The kinds of option values a description is made of (see ./describe.ts). Each wraps a check
// of ./checks.ts or words its own message, so a described option is refused in the words it
// always was; `extra` adds a default, the docs' default text, or a rule with other options.

/**
 * What any kind may add to its spec: a default (`D`, inferred, so a defaulted option's
 * checked value is typed as never undefined), the docs' default text, a rule, `required`.
 */
export type Extra<T, D extends T | undefined = undefined> = Pick<
  OptionSpec<T>,
  'defaultText' | 'also' | 'required'
> & { readonly default?: D };

/** A spec with a default has it as a property the checked values' type reads. */
export type Defaulted<D> = [D] extends [undefined] ? unknown : { readonly default: D & {} };

type Message = string | ((value: unknown) => string);

/** A kind's spec: its check, with what `extra` adds. */
function spec<T, D extends T | undefined>(
  extra: Extra<T, D>,
  check: OptionSpec<T>['check'],
): OptionSpec<T> & Defaulted<D> {
  return { ...extra, check } as OptionSpec<T> & Defaulted<D>;
}

/** A value `test` accepts; otherwise `message` (given the value) is the problem. */
export function satisfies<T, const D extends T | undefined = undefined>(
  test: (value: unknown) => boolean,
  message: Message,
  extra: Extra<T, D> = {},
): OptionSpec<T> & Defaulted<D> {
  return spec(extra, (value, at) => {
    if (test(value)) return value as T;
    at.problem(typeof message === 'string' ? message : message(value));
    return undefined;
  });
}

/** Any value: its check is someone else's (e.g. the factory's, which needs more than it). */
export function unchecked<T = unknown, const D extends T | undefined = undefined>(
  extra: Extra<T, D> = {},
): OptionSpec<T> & Defaulted<D> {
  return spec(extra, (value) => value as T);
}

/** An integer >= `min`. */
export function integer<const D extends number | undefined = undefined>(
  min: number,
  extra: Extra<number, D> = {},
): OptionSpec<number> & Defaulted<D> {
  return spec(extra, (value, at) => integerAtLeast(at.name, value, min, 0));
}

/** An integer >= 0, or `Infinity` for no limit. */
export function count<const D extends number | undefined = undefined>(
  extra: Extra<number, D> = {},
): OptionSpec<number> & Defaulted<D> {
  return spec(extra, (value, at) => countOrInfinity(at.name, value, undefined));
}

/** A finite number > 0 (an integer when `integer`). */
export function positive<const D extends number | undefined = undefined>(
  integer: boolean,
  extra: Extra<number, D> = {},
): OptionSpec<number> & Defaulted<D> {
  return spec(extra, (value, at) => optionalPositive(at.name, value, integer));
}

/** Milliseconds > 0 a timer can wait. */
export function delay<const D extends number | undefined = undefined>(
  extra: Extra<number, D> = {},
): OptionSpec<number> & Defaulted<D> {
  return spec(extra, (value, at) => optionalDelay(at.name, value));
}

/** A run's time limit: milliseconds from 0 to what a timer can wait. */
export function timeLimit<const D extends number | undefined = undefined>(
  extra: Extra<number, D> = {},
): OptionSpec<number> & Defaulted<D> {
  return spec(extra, (value, at) => optionalTimeLimit(at.name, value));
}

/** A name for callbacks and run events: a non-empty string, `fallback` by default. */
export function name<const D extends string>(fallback: D): OptionSpec<string> & Defaulted<D> {
  return spec<string, D>({ default: fallback }, (value, at) => runName(at.name, value, fallback));
}

/** A LanguageModel of the interface version this runtime speaks. */
export function model(extra: Extra<LanguageModel> = {}): OptionSpec<LanguageModel> {
  return spec(extra, (value, at) => {
    checkModel(at.name, value);
    return value;
  });
}

/** true or false; refused as `must be true or false; got …` unless `message` words it. */
export function flag<const D extends boolean | undefined = undefined>(
  extra: Extra<boolean, D> = {},
  message: Message = (value) => `must be true or false; got ${String(value)}`,
): OptionSpec<boolean> & Defaulted<D> {
  return satisfies<boolean, D>((value) => typeof value === 'boolean', message, extra);
}

/** One of `values`: `must be 'a', 'b' or 'c'; got "d"`. */
export function oneOf<const V extends string, const D extends V | undefined = undefined>(
  values: readonly V[],
  extra: Extra<V, D> = {},
): OptionSpec<V> & Defaulted<D> {
  const quoted = values.map((v) => `'${v}'`);
  const listed =
    quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` : quoted[0];
  return satisfies<V, D>(
    (value) => (values as readonly unknown[]).includes(value),
    (value) => `must be ${listed}; got ${JSON.stringify(value) ?? String(value)}`,
    extra,
  );
}

/** A function, refused as `must be a function <shape>`, e.g. `(result) => void`. */
export function func<F>(shape: string, extra: Extra<F> = {}): OptionSpec<F> {
  return satisfies<F>((value) => typeof value === 'function', `must be a function ${shape}`, extra);
}

/** The value a nested description checks to: every key maybe there. */
type NestedValue<S extends Specs> = { readonly [K in keyof S]?: SpecValue<S[K]> };

/**
 * A nested options object such as `modelSettings`: a plain object whose unknown keys are
 * refused by their dotted path (`modelSettings.temprature`, did you mean
 * `modelSettings.temperature`?) and whose keys are checked by `specs`. Returns the object
 * even when some key is bad (its other keys are still checked); the bad key's value is left
 * out.
 */
export function object<const S extends Specs>(
  specs: S,
  extra: Extra<NestedValue<S>> = {},
): OptionSpec<NestedValue<S>> & { readonly specs: S } {
  const keys = Object.keys(specs) as (keyof S & string)[];
  const checked = spec(extra, (value, at) => {
    const nested = at.problems.nested(at.name, value, keys);
    if (nested === undefined) return undefined;
    return checkEach(specs, keys, nested, at.problems, `${at.name}.`) as NestedValue<S>;
  });
  return { ...checked, specs };
}
