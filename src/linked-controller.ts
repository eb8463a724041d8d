/** A controller that aborts when `outer` does; `unlink` detaches it from a long-lived `outer`. */
export interface LinkedController {
  readonly controller: AbortController;
  readonly unlink: () => void;
}

/**
 * A signal of one's own that follows `outer`. Hand it to code that adds an abort listener and
 * never removes it (several SDKs do, per request), or that must be cancelled alone (a stream
 * decided early), then `unlink` when done: the caller's long-lived signal collects nothing.
 */
export function linkedController(outer: AbortSignal | undefined): LinkedController {
  const controller = new AbortController();
  if (!outer) return { controller, unlink: () => {} };
  if (outer.aborted) {
    controller.abort(outer.reason);
    return { controller, unlink: () => {} };
  }
  const onAbort = () => controller.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  return { controller, unlink: () => outer.removeEventListener('abort', onAbort) };
}
