// The limits every walk of a user's machine has. xstate/graph's getAdjacencyMap walks until
// nothing new turns up, which for a machine with a counter in context is never; here every
// walk has limits, and exceeding one is an error that says which and why, never a hang and
// never a silently partial graph (an "unreachable" verdict on a partial graph would be wrong).

export interface TraversalLimits {
  /** Events on one path (default 50). */
  readonly maxDepth?: number;
  /** Generated paths (default 500). */
  readonly maxPaths?: number;
  /** Distinct snapshots, by `serializeState` (default 5000). */
  readonly maxStates?: number;
  /**
   * Microsteps one event may take before the machine comes to rest (default 1000): more is
   * taken for an endless `always` (or raised-event) cycle, which would otherwise hang.
   */
  readonly maxMicrosteps?: number;
}

export const DEFAULT_LIMITS: Required<TraversalLimits> = {
  maxDepth: 50,
  maxPaths: 500,
  maxStates: 5000,
  maxMicrosteps: 1000,
};

/** A traversal limit was exceeded; `limit` says which. */
export class TraversalLimitError extends Error {
  override readonly name = 'TraversalLimitError';
  readonly limit: keyof TraversalLimits;
  constructor(limit: keyof TraversalLimits, message: string) {
    super(message);
    this.limit = limit;
  }
}
