import { AbortError, ModelError, StatecraftError } from '../../../src/errors.js';
import { isNetworkError, networkFailureMessage } from '../../../src/model/network-error.js';

// Error mapping: what the SDK throws → AbortError or ModelError. Errors are recognised by
// their shape and `name`, not `instanceof`, because a caller's own `client` may come from
// another copy of the SDK than the one this file would import.

/** Statuses worth retrying: the same set the SDK's own retry loop retries. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

// Error types of a mid-stream `event: error`, which carries no HTTP status.
const RETRYABLE_TYPES = new Set([
  'overloaded_error',
  'api_error',
  'rate_limit_error',
  'timeout_error',
]);

interface SdkErrorShape {
  readonly name?: unknown;
  readonly message?: unknown;
  readonly status?: unknown;
  readonly type?: unknown;
  readonly apiMessage?: unknown;
  readonly headers?: { get?(name: string): string | null } | undefined;
}

/**
 * The error a failed call rejects with, after the SDK's own retries: an abort (the SDK's
 * `APIUserAbortError`, or any error once `signal` is aborted) is an AbortError; HTTP errors
 * keep their status and are retryable for 408, 409, 429 and 5xx (529 "overloaded" included)
 * unless the server said `x-should-retry: false`; connection failures and timeouts are
 * retryable, a connection lost while the body was read included; anything else (a bad option
 * the SDK refused, say) is a ModelError that is not. `url` is the client's base URL, named by
 * a failure to reach it.
 */
export function anthropicModelError(
  error: unknown,
  signal?: AbortSignal,
  url?: string,
): StatecraftError {
  if (StatecraftError.isInstance(error)) return error;
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkErrorShape;
  const name = typeof e.name === 'string' ? e.name : '';
  if (signal?.aborted || name === 'APIUserAbortError' || name === 'AbortError') {
    return new AbortError('The Anthropic request was aborted', {
      cause: signal?.aborted ? signal.reason : error,
    });
  }
  const detail =
    typeof e.apiMessage === 'string' && e.apiMessage
      ? e.apiMessage
      : typeof e.message === 'string'
        ? e.message
        : String(error);
  if (typeof e.status === 'number') {
    const shouldRetry = e.headers?.get?.('x-should-retry');
    return new ModelError(`Anthropic request failed with status ${e.status}: ${detail}`, {
      cause: error,
      status: e.status,
      retryable: shouldRetry === 'false' ? false : isRetryableStatus(e.status),
    });
  }
  if (name === 'APIConnectionError' || name === 'APIConnectionTimeoutError') {
    return new ModelError(networkFailureMessage('Anthropic', url, error), {
      cause: error,
      retryable: true,
    });
  }
  // The SDK wraps only failures before the response arrives. A connection lost while its body
  // is read (a stream cut off, a JSON body short of its length) reaches us as undici's own
  // error, `TypeError: terminated` or a code down the `cause` chain: the answer never arrived
  // whole, so trying again can help.
  if (isNetworkError(error)) {
    const started = !(error instanceof TypeError && error.message === 'fetch failed');
    return new ModelError(networkFailureMessage('Anthropic', url, error, { started }), {
      cause: error,
      retryable: true,
    });
  }
  if (name === 'APIError' && typeof e.type === 'string') {
    // An `event: error` in the middle of a stream (e.g. overloaded_error): no status to keep.
    return new ModelError(`Anthropic stream failed (${e.type}): ${detail}`, {
      cause: error,
      retryable: RETRYABLE_TYPES.has(e.type),
    });
  }
  return new ModelError(`Anthropic request failed: ${detail}`, { cause: error });
}

/** The error of an `event: error` payload's `error` object, read without the SDK. */
export function streamErrorEvent(
  error: { readonly type?: string; readonly message?: string } | undefined,
): StatecraftError {
  const type = error?.type ?? 'error';
  return new ModelError(`Anthropic stream failed (${type}): ${error?.message ?? 'no message'}`, {
    retryable: RETRYABLE_TYPES.has(type),
  });
}
