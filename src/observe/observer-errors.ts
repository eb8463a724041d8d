import type { RunObserver } from './run-observer.js';

// Observers are told, never asked: what one throws (or an async hook rejects with) is caught
// here, so a broken exporter cannot fail an agent run. It is reported on stderr once per
// observer and hook, so a hook that fails on every event does not flood the log. Inspectors
// registered with `inspectRuns` are held to the same rule.

const reported = new WeakMap<object, Set<string>>();

/** Calls one hook of one observer; never throws. */
export function notify(observer: RunObserver, hook: keyof RunObserver, call: () => unknown): void {
  const failed = (error: unknown) =>
    reportOnce(
      observer,
      hook,
      `a run observer's ${hook} failed; the run goes on without it (later failures of this observer's ${hook} are not reported):`,
      error,
    );
  try {
    const returned = call();
    if (isThenable(returned)) returned.then(undefined, failed);
  } catch (error) {
    failed(error);
  }
}

/** Writes `message` and `error` to stderr the first time `owner` fails at `what`. */
export function reportOnce(owner: object, what: string, message: string, error: unknown): void {
  let failures = reported.get(owner);
  if (!failures) {
    failures = new Set();
    reported.set(owner, failures);
  }
  if (failures.has(what)) return;
  failures.add(what);
  console.error(`statecraft: ${message}`, error);
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
