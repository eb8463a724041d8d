import { APIConnectionError, APIError, APIUserAbortError } from 'openai';
import { AbortError, ModelError, StatecraftError } from '../../../src/errors.js';
import { isNetworkError, networkFailureMessage } from '../../../src/model/network-error.js';

// SDK failures as statecraft errors. They arrive here after the SDK's own retries (its
// `maxRetries`, with backoff and `retry-after`): `retryable` tells the caller whether trying
// again later could help, it does not ask this adapter to retry.

/** Statuses the SDK itself retries: timeout, lock conflict, rate limit, server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Error codes of failures that are the provider's, not the request's. */
const RETRYABLE_CODES = new Set(['server_error', 'rate_limit_exceeded']);

/**
 * Any error from an SDK call (or from reading its stream) as an AbortError or a ModelError.
 * An abort of `signal` wins over whatever the SDK made of it; statecraft errors pass through.
 * `url` is the client's base URL, named by a failure to reach it.
 */
export function toStatecraftError(
  error: unknown,
  signal?: AbortSignal,
  url?: string,
): StatecraftError {
  if (signal?.aborted) return abortError(signal, error);
  // An InputError from the request mapping (an attachment this API cannot take) stays one.
  if (StatecraftError.isInstance(error)) return error;
  if (error instanceof APIUserAbortError || isDomAbort(error)) return abortError(signal, error);
  // APIConnectionTimeoutError is one too: the cause then reads `timed out`.
  if (error instanceof APIConnectionError) {
    return new ModelError(networkFailureMessage('OpenAI', url, error), {
      cause: error,
      retryable: true,
    });
  }
  // The SDK wraps only failures before the response; a connection lost while reading a
  // stream's body reaches us as undici's bare error (`TypeError: terminated`), and a user's
  // own client (another copy of the SDK) fails `instanceof`: the answer never arrived whole,
  // so trying again can help.
  if (isNetworkError(error)) {
    return new ModelError(
      networkFailureMessage('OpenAI', url, error, { started: !isFetchFailed(error) }),
      {
        cause: error,
        retryable: true,
      },
    );
  }
  const status = statusOf(error);
  if (status !== undefined) {
    return new ModelError(`OpenAI API error ${status}: ${messageOf(error)}`, {
      cause: error,
      status,
      retryable: isRetryableStatus(status),
    });
  }
  if (error instanceof APIError) {
    // No status: an error event inside a stream that had started with 200.
    const code = String(error.code ?? error.type ?? '');
    return new ModelError(`OpenAI stream error: ${error.message}`, {
      cause: error,
      retryable: RETRYABLE_CODES.has(code),
    });
  }
  return new ModelError(`OpenAI call failed: ${messageOf(error)}`, { cause: error });
}

/**
 * A Responses API response or stream event that reports a failure (`status: 'failed'`, an
 * `error` event): the HTTP call itself succeeded, so there is no status to go by.
 */
export function responseFailure(
  error: { readonly code?: string | null; readonly message?: string } | null | undefined,
): ModelError {
  const code = error?.code ?? undefined;
  return new ModelError(
    `OpenAI response failed${code ? ` (${code})` : ''}: ${error?.message ?? 'no error message'}`,
    { retryable: code !== undefined && RETRYABLE_CODES.has(code) },
  );
}

export function abortError(signal: AbortSignal | undefined, cause?: unknown): AbortError {
  return new AbortError('The model call was aborted', { cause: signal?.reason ?? cause });
}

/** Undici's error for a request that never got an answer (no connection, no TLS…). */
function isFetchFailed(error: unknown): boolean {
  return error instanceof TypeError && error.message === 'fetch failed';
}

function isDomAbort(error: unknown): boolean {
  return error instanceof Error && error.name === 'AbortError';
}

/**
 * The HTTP status of an SDK error; also read from a duck-typed `status` so that an error
 * from a user's own client (another copy of the SDK) is still classified.
 */
function statusOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' && status >= 400 ? status : undefined;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
