import type { InspectionEvent, Observer } from 'xstate';
import type { RunInfo } from '../observe/run-info.js';
import type { RunObserver } from '../observe/run-observer.js';

// src/run-config/ holds what any run carries and how many runs go at once, whoever runs them:
// the config (here) and batch.ts. Both the run host (chains, tool loops) and Runnables use
// them, so they sit below both: this folder imports only src/observe (the observers a config
// carries, RunInfo) and the basics, never src/host, src/runnable, a kind of run or machines/.
//
// What travels with a run through every Runnable (SPEC R1–R3): the caller's signal and
// callbacks, the id of the run that started this one (so nested runs form a tree), and the
// intermediate results chains share along a sequence (SPEC C9). Passed explicitly, not through
// AsyncLocalStorage: a function step receives it as its second argument and hands it on, and
// what reaches a run is visible at the call site.

/**
 * Called around every run. Awaited: `onError` has finished before the error reaches the
 * caller. A callback that throws fails the run like any other code in it, so a broken logger
 * is seen, not silently skipped.
 */
export interface RunCallbacks {
  onStart?(run: RunInfo, input: unknown): void | Promise<void>;
  onEnd?(run: RunInfo, output: unknown): void | Promise<void>;
  onError?(run: RunInfo, error: unknown): void | Promise<void>;
}

/**
 * The intermediate results chains cache for the chains after them (SPEC C9), shared by the
 * steps of one sequence run: each chain starts from `current` and leaves its own results in it.
 */
export interface IntermediateResultsRef {
  current: Readonly<Record<string, unknown>>;
}

export interface RunConfig {
  /** Aborting ends the run (and the runs it started) with an AbortError. */
  readonly signal?: AbortSignal;
  readonly callbacks?: RunCallbacks | readonly RunCallbacks[];
  /** Set by the runnable that starts this run; callers leave it out. */
  readonly parentRunId?: string;
  /** Shown in callbacks and events instead of the runnable's own name. */
  readonly runName?: string;
  /** Created by a sequence when absent; chains in it read and extend it (SPEC C9). */
  readonly intermediateResults?: IntermediateResultsRef;
  /** The conversation memory loads and saves under (`withMemory`); default `'default'`. */
  readonly sessionId?: string;
  /** XState's inspection hook, handed to chains and tool loops. */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /**
   * Told of this run and of every run it starts (SPEC X4), besides the observers
   * `observeRuns` registered. Unlike callbacks, observers never fail or delay a run.
   */
  readonly observers?: RunObserver | readonly RunObserver[];
}

export function callbackList(config: RunConfig | undefined): readonly RunCallbacks[] {
  const callbacks = config?.callbacks;
  if (!callbacks) return [];
  return Array.isArray(callbacks) ? callbacks : [callbacks as RunCallbacks];
}
