import {
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyStateNode,
  type AnyTransitionDefinition,
  type EventObject,
  getInitialMicrosteps,
  getMicrosteps,
} from 'xstate';
import { getAdjacencyMap, type TraversalOptions } from 'xstate/graph';

// What every machine's path suite shares (SPEC D2, D3): the reachable graph with the
// microsteps of each edge (transient states show only there), reachability over it,
// transition names stable across provide() copies, and the small helpers of a replay.

export interface Edge<S extends AnyMachineSnapshot, E extends EventObject> {
  readonly from: S;
  readonly event: E;
  readonly to: S;
  /** The snapshots the edge passes through, transient states included, ending at `to`. */
  readonly microsteps: readonly S[];
}

export interface MachineGraph<S extends AnyMachineSnapshot, E extends EventObject> {
  readonly initialMicrosteps: readonly S[];
  readonly vertices: ReadonlyMap<string, S>;
  readonly edges: readonly Edge<S, E>[];
  /** The key of a snapshot: the traversal's serialization. */
  readonly keyOf: (snapshot: S) => string;
}

/** The reachable graph of `machine` under the traversal's events and serialization. */
export function machineGraph<S extends AnyMachineSnapshot, E extends EventObject>(
  machine: AnyStateMachine,
  options: TraversalOptions<S, E, unknown> & {
    readonly input: unknown;
    readonly serializeState: (snapshot: S) => string;
  },
): MachineGraph<S, E> {
  // biome-ignore lint/suspicious/noExplicitAny: getAdjacencyMap types options by the machine's own snapshot.
  const adjacency = getAdjacencyMap(machine, options as any);
  const vertices = new Map<string, S>();
  const edges: Edge<S, E>[] = [];
  for (const [key, { state, transitions }] of Object.entries(adjacency)) {
    vertices.set(key, state as S);
    const next = Object.values(transitions) as { event: E; state: S }[];
    for (const { event, state: to } of next) {
      const microsteps = getMicrosteps(machine, state, event).map(([snapshot]) => snapshot as S);
      edges.push({ from: state as S, event, to, microsteps });
    }
  }
  const initialMicrosteps = getInitialMicrosteps(machine, options.input).map(([s]) => s as S);
  return { initialMicrosteps, vertices, edges, keyOf: (s) => options.serializeState(s) };
}

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
 * SPEC D3: every reachable snapshot can reach a target. A backward closure over the graph's
 * edges from the target vertices; every source vertex outside it is a violation.
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

/** Every snapshot the graph holds: resting ones and the microsteps on the way. */
export function allSnapshots<S extends AnyMachineSnapshot, E extends EventObject>(
  graph: MachineGraph<S, E>,
): S[] {
  return [
    ...graph.initialMicrosteps,
    ...graph.vertices.values(),
    ...graph.edges.flatMap((edge) => edge.microsteps),
  ];
}

/** The state nodes (as `a.b` paths) the graph passes through, transient ones included. */
export function visitedStateNodes<S extends AnyMachineSnapshot, E extends EventObject>(
  graph: MachineGraph<S, E>,
): Set<string> {
  const visited = new Set<string>();
  for (const snapshot of allSnapshots(graph)) {
    for (const node of snapshot._nodes as AnyStateNode[]) {
      if (node.path.length > 0) visited.add(node.path.join('.'));
    }
  }
  return visited;
}

/** Every state node of a machine below the root, as `a.b` paths. */
export function stateNodePaths(machine: AnyStateMachine): string[] {
  return descendants(machine.root).map((node) => node.path.join('.'));
}

function descendants(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((child) => [child, ...descendants(child)]);
}

/** A transition's name, stable across `provide()` copies: source, trigger, index, guard, target. */
export function transitionName(t: AnyTransitionDefinition): string {
  const siblings = t.eventType ? t.source.transitions.get(t.eventType) : t.source.always;
  const index = siblings?.indexOf(t) ?? -1;
  const guard =
    typeof t.guard === 'string'
      ? t.guard
      : t.guard && typeof t.guard === 'object' && 'type' in t.guard
        ? String(t.guard.type)
        : t.guard
          ? 'inline guard'
          : undefined;
  const target = t.target?.map((node) => node.key).join(',') ?? '(stays)';
  return `${t.source.key} ${t.eventType || 'always'}#${index}${guard ? ` [${guard}]` : ''} → ${target}`;
}

/** Every transition the machine defines, at any depth, by `transitionName`. */
export function allTransitionNames(machine: AnyStateMachine): string[] {
  return [machine.root, ...descendants(machine.root)].flatMap((node) =>
    [...[...node.transitions.values()].flat(), ...(node.always ?? [])].map(transitionName),
  );
}

/** Lets an actor and the actors it invoked finish whatever the last event started. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A value as JSON would carry it: what a replay compares. */
export function json(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value ?? null));
}
