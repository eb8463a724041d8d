import type { AnyMachineSnapshot, AnyStateMachine, AnyTransitionDefinition } from 'xstate';
import { activeStateNodes, stateNodePaths } from './state-nodes.js';
import { allTransitionNames, transitionName } from './transition-names.js';

// How much of a machine some paths exercise: its state nodes entered and its transitions
// taken, against everything the machine defines. Transient (`always`) states and eventless
// transitions count: the edges carry their microsteps. Names are `a.b` paths, so the
// numbers of the model's paths and of real replays on a provide() copy compare.

export interface CoverageCount {
  readonly covered: number;
  readonly total: number;
  /** What is defined but never entered or taken, in document order. */
  readonly missing: readonly string[];
}

export interface Coverage {
  /** State nodes below the root, as `a.b` paths. */
  readonly states: CoverageCount;
  /** Transitions, named by `transitionName(t, 'path')`, e.g. `review APPROVE#0 → done`. */
  readonly transitions: CoverageCount;
}

export function coverageOf(
  machine: AnyStateMachine,
  states: ReadonlySet<string>,
  transitions: ReadonlySet<string>,
): Coverage {
  return {
    states: count(stateNodePaths(machine), states),
    transitions: count(allTransitionNames(machine, 'path'), transitions),
  };
}

function count(defined: readonly string[], seen: ReadonlySet<string>): CoverageCount {
  const missing = defined.filter((name) => !seen.has(name));
  return { covered: defined.length - missing.length, total: defined.length, missing };
}

/** One step of a path as recomputed from the start: its microsteps and transitions. */
export interface StepRecord {
  readonly microsteps: readonly AnyMachineSnapshot[];
  readonly transitions: readonly AnyTransitionDefinition[];
}

/**
 * Coverage of paths from their steps, each recomputed from the start with the path's events
 * (not from the graph's edges: a coarse serializeState merges snapshots, and an edge leaves
 * from the first one found, which a path through the same vertex may not be in).
 */
export function stepsCoverage(machine: AnyStateMachine, steps: Iterable<StepRecord>): Coverage {
  const states = new Set<string>();
  const transitions = new Set<string>();
  for (const step of steps) {
    for (const snapshot of step.microsteps) {
      for (const node of activeStateNodes(snapshot)) states.add(node);
    }
    for (const t of step.transitions) transitions.add(transitionName(t, 'path'));
  }
  return coverageOf(machine, states, transitions);
}

/** What a replay visited (a `PathReplay` is one): its state nodes and transitions, by name. */
export interface ReplayVisits {
  readonly stateNodes: ReadonlySet<string>;
  readonly transitions: ReadonlySet<string>;
}

/** Coverage of what real actors did in some replays. */
export function replaysCoverage(
  machine: AnyStateMachine,
  replays: Iterable<ReplayVisits>,
): Coverage {
  const states = new Set<string>();
  const transitions = new Set<string>();
  for (const replay of replays) {
    for (const node of replay.stateNodes) states.add(node);
    for (const t of replay.transitions) transitions.add(t);
  }
  return coverageOf(machine, states, transitions);
}
