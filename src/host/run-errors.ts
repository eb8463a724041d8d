import {
  AbortError,
  ModelError,
  type StatecraftError,
  type StatecraftErrorOptions,
  TimeoutError,
} from '../errors.js';

/**
 * The error of a failed model call: an abort stays an AbortError, a time limit a TimeoutError, a ModelError keeps its
 * `retryable` and `status`, anything else becomes a ModelError with it as the cause.
 */
export function modelCallError(
  message: string,
  cause: unknown,
  options: StatecraftErrorOptions,
): StatecraftError {
  if (AbortError.isInstance(cause)) return new AbortError(message, options);
  // A call cut by a time limit of the run (the final call of earlyStopping 'generate').
  if (TimeoutError.isInstance(cause)) return new TimeoutError(cause.timeoutMs, message, options);
  if (ModelError.isInstance(cause)) {
    return new ModelError(message, {
      ...options,
      retryable: cause.retryable,
      ...(cause.status !== undefined && { status: cause.status }),
    });
  }
  return new ModelError(message, options);
}

/** The words an AbortSignal's reason adds to "The run was cancelled"; none for a bare abort. */
export function reasonText(reason: unknown): string | undefined {
  if (reason === undefined) return undefined;
  if (reason instanceof Error) return reason.name === 'AbortError' ? undefined : reason.message;
  return String(reason);
}
