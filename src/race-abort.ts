/** What `raceAbort` resolves with when the signal wins. */
export const ABORTED: unique symbol = Symbol('aborted');

/**
 * `work`, or `ABORTED` as soon as `signal` aborts, whichever comes first. Used wherever we
 * call code that may ignore its signal (a tool, a remote executor): the run must not wait on
 * it. A late rejection of `work` is swallowed, since nobody is listening any more.
 */
export async function raceAbort<T>(
  work: Promise<T>,
  signal: AbortSignal,
): Promise<T | typeof ABORTED> {
  if (signal.aborted) {
    work.catch(() => {});
    return ABORTED;
  }
  let onAbort: () => void = () => {};
  const aborted = new Promise<typeof ABORTED>((resolve) => {
    onAbort = () => resolve(ABORTED);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    const winner = await Promise.race([work, aborted]);
    if (winner === ABORTED) work.catch(() => {});
    return winner;
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
