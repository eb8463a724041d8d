import { jsonSafeOutput } from '../json-safe.js';

/**
 * The two steps every reader of a streaming tool takes (SPEC C11), made total: a tool's
 * iterator is user code, often hand-written, and may break the iterator protocol in ways a
 * generator never does. Each step answers with a promise, so a reader has one place (a
 * rejection) to turn any misbehaviour into a failed result or an error chunk the model reads.
 */

/**
 * `iterator.next()` as a promise of a well-formed step whose value is JSON-safe (chunks are
 * tool output, see jsonSafeOutput). Rejects, rather than throwing or looping, when next()
 * throws synchronously or gives something that is not an iterator result (a reader that
 * read `.done` off `42` would take it for an endless stream of undefined).
 */
export function readNext(iterator: AsyncIterator<unknown>): Promise<IteratorResult<unknown>> {
  let step: unknown;
  try {
    step = iterator.next();
  } catch (error) {
    return Promise.reject(error);
  }
  return Promise.resolve(step).then(checkedStep);
}

function checkedStep(step: unknown): IteratorResult<unknown> {
  if (typeof step !== 'object' || step === null) {
    throw new TypeError(`its next() gave ${describe(step)}, not an iterator result`);
  }
  const { done, value } = step as IteratorResult<unknown>;
  return done ? { done: true, value: undefined } : { done: false, value: jsonSafeOutput(value) };
}

/**
 * `iterator.return()`, when it has one, as a promise: resolves once the tool has cleaned up,
 * rejects with what its cleanup threw (a generator's `finally`, a return() that throws or
 * rejects). A synchronous return() is accepted: it has closed the iterator when it returns.
 */
export function closeIterator(iterator: AsyncIterator<unknown>): Promise<void> {
  try {
    const ending: unknown = iterator.return?.();
    return Promise.resolve(ending).then(() => undefined);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Why a stream failed, in words for the model. */
export function streamErrorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  try {
    return String(error);
  } catch {
    return 'unknown error';
  }
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  return typeof value === 'string'
    ? `the string ${JSON.stringify(value.slice(0, 40))}`
    : `a ${typeof value}`;
}
