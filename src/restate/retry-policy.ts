/**
 * How soon Restate re-dispatches an invocation whose worker died or failed: at once, then
 * backing off. The server's default waits half a second first; a dead worker's runs should
 * continue elsewhere sooner than that (the kill-to-continuation row of bench:restate).
 */
export const REDISPATCH = {
  initialInterval: 50,
  exponentiationFactor: 2,
  maxInterval: 10_000,
} as const;
