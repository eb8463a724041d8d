// Who a run is in the tree of runs: what every Runnable's callbacks, stream events and run
// observers are told. It lives with the observers (the lowest folder that needs it), so the run
// config (src/run-config/) and src/runnable/ read it from here and src/observe/ imports neither.

/** What kind of work a run is: every Runnable reports one. */
export type RunKind =
  | 'chain'
  | 'tool-loop'
  | 'model'
  | 'function'
  | 'sequence'
  | 'parallel'
  | 'retry'
  | 'fallbacks'
  | 'memory'
  | 'tool';

/** One run in the tree of runs: given to every callback and stream event. */
export interface RunInfo {
  readonly runId: string;
  /** The run that started this one; undefined for the run the caller started. */
  readonly parentRunId: string | undefined;
  readonly name: string;
  readonly kind: RunKind;
}
