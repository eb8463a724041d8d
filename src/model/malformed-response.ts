import { ModelError } from '../errors.js';

// Answers that arrived (HTTP 200) but are not what the provider's API returns: a proxy's
// HTML page, a body cut short, JSON of another shape. They fail at the model boundary as a
// ModelError saying what is wrong (SPEC Q3), never later as a crash or an empty answer.

/**
 * A ModelError for a malformed answer from `provider`. `retryable` when another try can
 * help: a proxy or gateway page, a truncated body, a corrupted stream. A well-formed answer
 * of the wrong shape is not: the same server will answer the same way.
 */
export function malformedResponse(
  provider: string,
  problem: string,
  retryable: boolean,
): ModelError {
  return new ModelError(`The ${provider} API sent a malformed response: ${problem}`, { retryable });
}

/** True for the error `JSON.parse` throws, which SDKs let through from a bad body or event. */
export function isJsonSyntaxError(error: unknown): boolean {
  return error instanceof SyntaxError;
}

/** The start of a body, on one line, for an error message. */
export function bodySnippet(text: string, length = 80): string {
  const line = text.replace(/\s+/g, ' ').trim();
  if (line === '') return 'an empty body';
  return JSON.stringify(line.length > length ? `${line.slice(0, length)}…` : line);
}

/** How a value that should have been an object or array looks, for an error message. */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `the string ${bodySnippet(value, 40)}`;
  return typeof value === 'object' ? 'an object' : `the ${typeof value} ${String(value)}`;
}
