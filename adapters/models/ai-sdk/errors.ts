import { AbortError, ModelError, type StatecraftError } from '../../../src/errors.js';
import { malformedResponse } from '../../../src/model/malformed-response.js';
import { isNetworkError, networkFailureMessage } from '../../../src/model/network-error.js';

// AI SDK failures as statecraft errors. AI SDK errors are recognised by the marker symbols
// their classes set (`Symbol.for('vercel.ai.error.AI_APICallError')`…), the check their own
// `isInstance` makes, never by `instanceof`: a user's provider may bring its own copy of
// `@ai-sdk/provider` (v3 and v4 side by side is common), and statecraft imports none. The
// provider decides `isRetryable` (408, 409, 429, 5xx and lost connections by default); the
// model itself never retries (`generateText` does, above the model), so neither does this
// adapter: `retryable` tells the caller whether trying again could help.

const MARKER = Symbol.for('vercel.ai.error');

/** True for an error of the AI SDK class `name` (e.g. `AI_APICallError`), from any copy. */
export function isAiSdkError(error: unknown, name: string): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const marked = error as Record<symbol, unknown>;
  if (marked[MARKER] === true && marked[Symbol.for(`vercel.ai.error.${name}`)] === true) {
    return true;
  }
  return (error as { name?: unknown }).name === name;
}

interface ApiCallError {
  readonly message: string;
  readonly statusCode?: number;
  readonly isRetryable?: boolean;
  readonly url?: string;
  readonly cause?: unknown;
}

/**
 * Any failure of a model call (its promise, or reading its stream) as an AbortError or a
 * ModelError. An abort of `signal` wins over whatever the provider made of it. `label` names
 * the model in messages (`AI SDK model local.chat`).
 */
export function toStatecraftError(
  error: unknown,
  signal: AbortSignal | undefined,
  label: string,
): StatecraftError {
  if (signal?.aborted) return abortError(signal, error);
  if (AbortError.isInstance(error) || ModelError.isInstance(error)) return error;
  if (error instanceof Error && error.name === 'AbortError') return abortError(signal, error);
  if (isAiSdkError(error, 'AI_APICallError')) return apiCallError(error as ApiCallError, label);
  if (isAiSdkError(error, 'AI_JSONParseError')) {
    return malformedResponse(
      label,
      `it sent something that is not JSON (${messageOf(error)})`,
      true,
    );
  }
  if (isAiSdkError(error, 'AI_TypeValidationError')) {
    return malformedResponse(label, validationProblem(error), false);
  }
  if (isAiSdkError(error, 'AI_InvalidResponseDataError')) {
    // A stream cut short (no finish reason) is worth another try; an answer of the wrong
    // shape is not: the same server answers the same way.
    return malformedResponse(label, messageOf(error), /\bended\b/i.test(messageOf(error)));
  }
  if (isNetworkError(error)) {
    return new ModelError(networkFailureMessage(label, undefined, error, { started: true }), {
      cause: error,
      retryable: true,
    });
  }
  if (error instanceof Error) {
    return new ModelError(`${label} call failed: ${error.name}: ${error.message}`, {
      cause: error,
    });
  }
  // A stream's `error` part: often the provider's own error object, as it came.
  return new ModelError(`${label} stream error: ${describe(error)}`, {
    cause: error,
    retryable: isRetryableCode(error),
  });
}

function apiCallError(error: ApiCallError, label: string): ModelError {
  const status = error.statusCode;
  const retryable = error.isRetryable === true;
  // A 200 whose body did not parse, or did not have the expected shape.
  if (status === undefined || status < 400) {
    if (isAiSdkError(error.cause, 'AI_JSONParseError')) {
      return malformedResponse(label, `a body that is not JSON (${error.message})`, true);
    }
    if (isAiSdkError(error.cause, 'AI_TypeValidationError')) {
      return malformedResponse(label, validationProblem(error.cause), false);
    }
    // No status, or a stream cut short: the answer never arrived whole.
    const network = isNetworkError(error.cause) || status === undefined;
    return new ModelError(
      network
        ? networkFailureMessage(label, error.url, error.cause ?? error, {
            started: status !== undefined,
          })
        : `${label} call failed: ${error.message}`,
      { cause: error, retryable: retryable || network },
    );
  }
  return new ModelError(`${label} API error ${status}: ${error.message}`, {
    cause: error,
    status,
    retryable,
  });
}

export function abortError(signal: AbortSignal | undefined, cause?: unknown): AbortError {
  return new AbortError('The model call was aborted', { cause: signal?.reason ?? cause });
}

/** Error codes and types in providers' stream error objects that mean "try again later". */
const RETRYABLE_CODES = new Set([
  'server_error',
  'rate_limit_exceeded',
  'overloaded_error',
  'rate_limit_error',
  'api_error',
]);

function isRetryableCode(value: unknown): boolean {
  for (let v: unknown = value, depth = 0; v && typeof v === 'object' && depth < 3; depth++) {
    const { code, type } = v as { code?: unknown; type?: unknown };
    if (RETRYABLE_CODES.has(String(code)) || RETRYABLE_CODES.has(String(type))) return true;
    v = (v as { error?: unknown }).error;
  }
  return false;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    const json = JSON.stringify(value);
    return json === undefined ? String(value) : json.length > 300 ? `${json.slice(0, 300)}…` : json;
  } catch {
    return String(value);
  }
}

/**
 * What a TypeValidationError says is wrong, without the whole answer it quotes first (a
 * page of JSON): `Type validation failed: Value: {…}. Error message: [issues]`.
 */
function validationProblem(error: unknown): string {
  const message = messageOf(error).replace(/Value: [\s\S]*?\.\s*Error message:\s*/, '');
  const line = message.replace(/\s+/g, ' ').trim();
  return `the answer does not have the expected shape: ${line.length > 300 ? `${line.slice(0, 300)}…` : line}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
