import { AbortError } from '../errors.js';

// When a run stops because it was cancelled: a retry never retries it and a fallback never
// falls back from it. Shared by createRunnable and the runs of retries and fallbacks.

/** Whether an error means the run was cancelled: ours, or a platform AbortError (fetch, SDKs). */
export function isCancellation(error: unknown): boolean {
  return (
    AbortError.isInstance(error) ||
    (error instanceof Error && error.name === 'AbortError') ||
    (typeof DOMException !== 'undefined' &&
      error instanceof DOMException &&
      error.name === 'AbortError')
  );
}

/**
 * Throws the signal's abort as an AbortError: the reason itself when it is one, else one whose
 * message says the reason (errors.ts's throwIfAborted keeps the reason as the cause only).
 */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (!signal?.aborted) return;
  const reason: unknown = signal.reason;
  throw AbortError.isInstance(reason)
    ? reason
    : new AbortError(
        reason === undefined
          ? 'The run was cancelled'
          : `The run was cancelled: ${reason instanceof Error ? reason.message : String(reason)}`,
        { cause: reason },
      );
}
