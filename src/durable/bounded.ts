import { JournalError } from './journal-error.js';

/** How long a run host waits for one operation of a store that does not say (`timeoutMs`). */
export const DEFAULT_STORE_TIMEOUT_MS = 30_000;

/**
 * `work`, or a JournalError `timed-out` once `ms` have passed without it settling (SPEC Q2:
 * every wait is bounded, a store that never answers included). The operation itself may still
 * finish later: what it writes then is what a crash at that moment would have left, which a
 * resume reads like any journal.
 */
export function bounded<T>(
  work: Promise<T>,
  ms: number,
  doing: string,
  runId?: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(
        new JournalError(
          'timed-out',
          `The journal store did not finish ${doing} within ${ms} ms${runId === undefined ? '' : ` (run '${runId}')`}: it may be stalled (a hung disk or network file system, a server that does not answer). Resume the run once it answers again`,
          runId === undefined ? {} : { runId },
        ),
      );
    }, ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
