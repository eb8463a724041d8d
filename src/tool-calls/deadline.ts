/** What a deadline's promise resolves with when its time is up. */
export const DEADLINE: unique symbol = Symbol('deadline');

/**
 * A promise that resolves with DEADLINE after `ms`, to race a wait against; `clear` it once
 * the wait is over, so no timer outlives it.
 */
export function deadlineAfter(ms: number): {
  readonly reached: Promise<typeof DEADLINE>;
  clear(): void;
} {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const reached = new Promise<typeof DEADLINE>((resolve) => {
    timer = setTimeout(() => resolve(DEADLINE), ms);
  });
  return { reached, clear: () => clearTimeout(timer) };
}
