import { OptionProblems } from '../options/option-problems.js';

// The checks statecraft/restate's functions share (SPEC Q4: every bad option named at once,
// an unknown one with the nearest known name).

const HTTP_ADDRESS = /^https?:\/\/[^\s/]+/;

/** Problems of `options` for `where`; unknown keys already counted against `known`. */
export function optionProblems(
  where: string,
  options: unknown,
  known: readonly string[],
): { problems: OptionProblems; options: Readonly<Record<string, unknown>> } {
  const problems = new OptionProblems(where);
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    problems.add('options', `${where} takes an object { ${known.join(', ')} }`);
    problems.throwIfAny();
  }
  const record = options as Readonly<Record<string, unknown>>;
  problems.unknownKeys(record, known);
  return { problems, options: record };
}

/** An http(s) address such as http://127.0.0.1:8080; `optional` lets it be absent. */
export function checkAddress(
  problems: OptionProblems,
  option: string,
  value: unknown,
  example: string,
  optional = false,
): void {
  if (value === undefined && optional) return;
  if (typeof value !== 'string' || !HTTP_ADDRESS.test(value)) {
    problems.add(option, `must be an http(s) address such as ${example}; got ${String(value)}`);
  }
}

/** A positive number of milliseconds, when given. */
export function checkMs(problems: OptionProblems, option: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    problems.add(option, `must be a positive number of milliseconds; got ${String(value)}`);
  }
}

/** A TCP port (0: any free one), when given. */
export function checkPort(problems: OptionProblems, option: string, value: unknown): void {
  if (value === undefined) return;
  if (!Number.isInteger(value) || (value as number) < 0 || (value as number) > 65_535) {
    problems.add(option, `must be a port number 0–65535; got ${String(value)}`);
  }
}
