import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate';
import type { Edge, MachineGraph } from './machine-graph.js';
import type { PathReplay } from './replay.js';
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

/** Coverage of paths over a traversal graph: the start, then every edge of every path. */
export function pathsCoverage<S extends AnyMachineSnapshot>(
  machine: AnyStateMachine,
  graph: MachineGraph<S, EventObject>,
  paths: readonly (readonly Edge<S, EventObject>[])[],
): Coverage {
  const states = new Set(graph.initialMicrosteps.flatMap(activeStateNodes));
  const transitions = new Set(graph.initialTransitions.map((t) => transitionName(t, 'path')));
  for (const edge of paths.flat()) {
    for (const snapshot of edge.microsteps) {
      for (const node of activeStateNodes(snapshot)) states.add(node);
    }
    for (const t of edge.transitions) transitions.add(transitionName(t, 'path'));
  }
  return coverageOf(machine, states, transitions);
}

/** Coverage of what real actors did in some replays. */
export function replaysCoverage(machine: AnyStateMachine, replays: Iterable<PathReplay>): Coverage {
  const states = new Set<string>();
  const transitions = new Set<string>();
  for (const replay of replays) {
    for (const node of replay.stateNodes) states.add(node);
    for (const t of replay.transitions) transitions.add(t);
  }
  return coverageOf(machine, states, transitions);
}
