import { ConfigError, type OptionProblem } from '../errors.js';
import { nearestName } from './nearest-name.js';

/**
 * Collects every problem of one options object before anything is thrown (SPEC Q4): a user
 * who mistyped two options learns of both at once. Existing checks that throw a ConfigError
 * run through `check`, so each keeps its own wording; `unknownKeys` refuses keys the factory
 * does not know, suggesting the nearest known one.
 *
 * ```ts
 * const problems = new OptionProblems('createThing');
 * problems.unknownKeys(options, ['retries', 'label']);
 * const retries = problems.check(() => integerAtLeast('retries', options.retries, 0, 3));
 * problems.throwIfAny();
 * ```
 *
 * A description (./describe.ts) does this for a whole options object.
 */
export class OptionProblems {
  readonly #where: string;
  readonly #problems: OptionProblem[] = [];

  /** `where` names the factory or function, e.g. `createChain` or `new OpenAIChatModel`. */
  constructor(where: string) {
    this.#where = where;
  }

  get size(): number {
    return this.#problems.length;
  }

  add(option: string, message: string): void {
    this.#problems.push({ option, message });
  }

  /**
   * Runs a check that throws ConfigError for a bad option: its problems are kept and
   * `undefined` returned, so the next checks still run. Other errors propagate.
   */
  check<T>(run: () => T): T | undefined {
    try {
      return run();
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      for (const problem of (error as ConfigError).problems) this.#problems.push(problem);
      return undefined;
    }
  }

  /**
   * Refuses every own key of `options` that is not in `known` (a key set to `undefined` too:
   * a typo is a typo whatever its value). `prefix` names a nested object, e.g. `'warningPrompt.'`.
   */
  unknownKeys(options: object, known: readonly string[], prefix = ''): void {
    for (const key of Object.keys(options)) {
      if (known.includes(key)) continue;
      const near = nearestName(key, known);
      this.add(
        `${prefix}${key}`,
        `is not an option of ${this.#where}${near ? `; did you mean \`${prefix}${near}\`?` : ''}`,
      );
    }
  }

  /**
   * A nested options object such as `warningPrompt`: undefined when not given; otherwise it
   * must be a plain object, and its keys not in `known` are refused as `option.key`. Returns
   * the object even when it has unknown keys, so its known ones are still checked.
   */
  nested(
    option: string,
    value: unknown,
    known: readonly string[],
  ): Readonly<Record<string, unknown>> | undefined {
    if (value === undefined) return undefined;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.add(
        option,
        `must be an object { ${known.map((key) => `${key}?`).join(', ')} }; got ${kindOf(value)}`,
      );
      return undefined;
    }
    this.unknownKeys(value, known, `${option}.`);
    return value as Readonly<Record<string, unknown>>;
  }

  /** Throws one ConfigError naming every problem found, if any. */
  throwIfAny(): void {
    if (this.#problems.length > 0) throw ConfigError.of(this.#where, this.#problems);
  }
}

/** How a value that should have been an object is shown: its kind, never its content. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return `a ${typeof value}`;
}
