import { OptionProblems } from '../options/problems.js';
import { SIGNATURE_HEADER } from './credential.js';

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

/** Headers statecraft sets itself on every request: a `headers` option may not replace them. */
const OWN_HEADERS = ['content-type', 'content-length', 'host', SIGNATURE_HEADER];
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Extra headers for every request to Restate (e.g. `authorization` for Restate Cloud or a
 * proxy in front of the server), when given: names and string values that HTTP allows.
 */
export function checkHeaders(problems: OptionProblems, option: string, value: unknown): void {
  if (value === undefined) return;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    problems.add(
      option,
      `must be an object of header names to string values; got ${String(value)}`,
    );
    return;
  }
  for (const [name, header] of Object.entries(value)) {
    if (!HEADER_NAME.test(name)) {
      problems.add(`${option}.${name}`, 'is not a valid HTTP header name');
    } else if (OWN_HEADERS.includes(name.toLowerCase())) {
      problems.add(`${option}.${name}`, 'is set by statecraft itself');
    } else if (typeof header !== 'string' || /[\r\n\0]/.test(header)) {
      problems.add(`${option}.${name}`, 'must be a string without line breaks');
    }
  }
}
