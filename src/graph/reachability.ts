import type { AnyMachineSnapshot, EventObject } from 'xstate';
import type { MachineGraph } from './machine-graph.js';

// SPEC D3 over a whole graph: "every reachable state can reach a final state" and the like.
// (canReach in can-reach.ts answers the other question: is one target reachable at all.)

export interface Violation {
  readonly property: string;
  readonly detail: string;
}

export interface ReachabilityCheck<S extends AnyMachineSnapshot, E extends EventObject> {
  readonly property: string;
  /** The snapshots to reach. */
  readonly isTarget: (snapshot: S) => boolean;
  /** The snapshots that must reach one (default: every reachable one). */
  readonly from?: (snapshot: S) => boolean;
  /** Edges not to use, e.g. ABORT, which alone takes every state to `failed`. */
  readonly skipEvent?: (event: E) => boolean;
}

/**
 * Every reachable snapshot (that `from` selects) can reach a target. A backward closure over
 * the graph's edges from the target vertices; every source vertex outside it is a violation.
 */
export function reachabilityViolations<S extends AnyMachineSnapshot, E extends EventObject>(
  graph: MachineGraph<S, E>,
  check: ReachabilityCheck<S, E>,
): Violation[] {
  const successors = new Map<string, Set<string>>();
  for (const key of graph.vertices.keys()) successors.set(key, new Set());
  for (const edge of graph.edges) {
    if (check.skipEvent?.(edge.event)) continue;
    successors.get(graph.keyOf(edge.from))?.add(graph.keyOf(edge.to));
  }
  const reaches = new Set(
    [...graph.vertices].filter(([, snapshot]) => check.isTarget(snapshot)).map(([key]) => key),
  );
  let grew = true;
  while (grew) {
    grew = false;
    for (const [key, next] of successors) {
      if (!reaches.has(key) && [...next].some((n) => reaches.has(n))) {
        reaches.add(key);
        grew = true;
      }
    }
  }
  const from = check.from ?? (() => true);
  return [...graph.vertices]
    .filter(([key, snapshot]) => from(snapshot) && !reaches.has(key))
    .map(([key]) => ({ property: check.property, detail: `no way on from ${key}` }));
}
