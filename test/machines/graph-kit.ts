// What every machine's path suite shares (SPEC D2, D3). The graph, reachability, state node
// and transition names live in src/graph/ (published through statecraft/testing for users'
// machines); this file re-exports them for the chain and tool-loop suites and keeps the two
// small helpers only those suites' hand-written replays use.

export {
  allSnapshots,
  type Edge,
  type MachineGraph,
  machineGraph,
  visitedStateNodes,
} from '../../src/graph/machine-graph.js';
export {
  type ReachabilityCheck,
  reachabilityViolations,
  type Violation,
} from '../../src/graph/reachability.js';
export { stateNodePaths } from '../../src/graph/state-nodes.js';
export { allTransitionNames, transitionName } from '../../src/graph/transition-names.js';

/** Lets an actor and the actors it invoked finish whatever the last event started. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A value as JSON would carry it: what a replay compares. */
export function json(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null));
}
