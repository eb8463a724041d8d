/**
 * A signal that follows `signal` for one request. The SDK adds an abort listener to the
 * signal of every request and never removes it, so handing it a run's long-lived signal
 * would leak one listener per tool call; this one is dropped when the request settles.
 */
export function followSignal(signal: AbortSignal): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  if (signal.aborted) {
    controller.abort(signal.reason);
    return { signal: controller.signal, release: () => {} };
  }
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    release: () => signal.removeEventListener('abort', onAbort),
  };
}
