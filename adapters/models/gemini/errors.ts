import { AbortError, ModelError, StatecraftError } from '../../../src/errors.js';
import { isJsonSyntaxError, malformedResponse } from '../../../src/model/malformed-response.js';
import { isNetworkError, networkFailureMessage } from '../../../src/model/network-error.js';

// What the SDK throws, as our errors. Recognised by shape, not by class, so that this file
// does not load the SDK and works with any copy of it.

/** Statuses worth another try: timeout, rate limit, server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

// Connection failures Node reports (on the error or its `cause`), all worth another try.

/**
 * The error a failed Gemini call rejects with. `signal` is the caller's: when it is aborted
 * the failure is the abort, whatever the SDK made of it. The SDK's `ApiError` (an HTTP status,
 * or an error object inside a stream) becomes a ModelError with that status, retryable for
 * 408, 429 and 5xx (after the SDK's own retries); connection failures and timeouts are
 * retryable ModelErrors without a status; anything else is a ModelError that is not. `url`
 * is the client's base URL, named by a failure to reach it.
 */
export function geminiError(error: unknown, signal?: AbortSignal, url?: string): StatecraftError {
  if (signal?.aborted) {
    return AbortError.isInstance(error)
      ? error
      : new AbortError('The Gemini call was aborted', { cause: signal.reason });
  }
  if (StatecraftError.isInstance(error)) return error;
  const status = apiErrorStatus(error);
  if (status !== undefined) {
    return new ModelError(`Gemini API error ${status}: ${apiErrorDetail(error as Error)}`, {
      status,
      retryable: isRetryableStatus(status),
      cause: error,
    });
  }
  const message = error instanceof Error ? error.message : String(error);
  // The SDK parses the body itself: a 200 that is not JSON (a proxy's page, a body cut
  // short) reaches us as the parser's error. Whatever answered was not the API, or did not
  // finish: another try can help.
  if (isJsonSyntaxError(error)) {
    return malformedResponse('Gemini', `a body or chunk that is not JSON (${message})`, true);
  }
  // The SDK's own words for a stream that ended inside an event, or a chunk it could not read.
  if (/^(?:Incomplete JSON segment|exception parsing stream chunk)/.test(message)) {
    return malformedResponse('Gemini', `a stream that is not JSON events (${message})`, true);
  }
  if (isTimeout(error)) {
    return new ModelError(networkFailureMessage('Gemini', url, error, { cause: 'timed out' }), {
      retryable: true,
      cause: error,
    });
  }
  if (isNetworkError(error)) {
    const started = !(error instanceof TypeError && error.message === 'fetch failed');
    return new ModelError(networkFailureMessage('Gemini', url, error, { started }), {
      retryable: true,
      cause: error,
    });
  }
  return new ModelError(`The Gemini request failed: ${message}`, { cause: error });
}

function apiErrorStatus(error: unknown): number | undefined {
  if (!(error instanceof Error) || error.name !== 'ApiError') return undefined;
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * The SDK's message is the error body as JSON (`{"error":{"code","message","status"}}`),
 * prefixed with `got status: …. ` for errors sent inside a stream: keep Google's status name
 * and message, which say what went wrong far better than the JSON.
 */
function apiErrorDetail(error: Error): string {
  const start = error.message.indexOf('{');
  if (start >= 0) {
    try {
      const body = JSON.parse(error.message.slice(start)) as {
        error?: { message?: unknown; status?: unknown };
      };
      const { message, status } = body.error ?? {};
      if (typeof message === 'string' && message) {
        return typeof status === 'string' && status ? `${status}: ${message}` : message;
      }
    } catch {
      // Not JSON after all: the raw message below.
    }
  }
  return error.message.slice(0, 500);
}

function isTimeout(error: unknown): boolean {
  // The SDK's `httpOptions.timeout` aborts the attempt with a TimeoutError; an AbortError the
  // caller did not ask for is the same thing seen from fetch.
  const name = error instanceof Error ? error.name : undefined;
  return name === 'TimeoutError' || name === 'AbortError';
}
