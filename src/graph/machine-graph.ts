import type {
  AnyMachineSnapshot,
  AnyStateMachine,
  AnyTransitionDefinition,
  EventObject,
} from 'xstate';
import type { TraversalOptions } from 'xstate/graph';
import { DEFAULT_LIMITS } from './limits.js';
import { activeStateNodes } from './state-nodes.js';
import { Stepper } from './stepper.js';

// The reachable graph of a machine under some events and a serialization, plus what xstate's
// adjacency map leaves out and properties need: the microsteps of each edge (transient
// `always` states exist only there) and the transition definitions each microstep took (for
// transition coverage). traversal.ts builds the graphs of statecraft/testing; machineGraph
// below is the plain walk the chain and tool-loop suites use (test/machines).

export interface Edge<S, E extends EventObject> {
  readonly from: S;
  readonly event: E;
  readonly to: S;
  /** The snapshots the edge passes through, transient states included, ending at `to`. */
  readonly microsteps: readonly S[];
  /** The transitions the edge takes, in microstep order; empty when the event is unhandled. */
  readonly transitions: readonly AnyTransitionDefinition[];
}

export interface MachineGraph<S, E extends EventObject> {
  /** The snapshots of starting the machine: the initial state, then any `always` steps. */
  readonly initialMicrosteps: readonly S[];
  /** The transitions starting takes (eventless ones out of transient initial states). */
  readonly initialTransitions: readonly AnyTransitionDefinition[];
  /** Every snapshot found, by key, the start first. */
  readonly vertices: ReadonlyMap<string, S>;
  readonly edges: readonly Edge<S, E>[];
  /** The key of a snapshot: the traversal's serialization. */
  readonly keyOf: (snapshot: S) => string;
}

/**
 * The reachable graph of `machine` under the events and serialization, breadth first, as
 * xstate/graph's getAdjacencyMap walks it (every offered event is an edge, unhandled ones
 * too; events with the same serializeEvent are one edge; `stopWhen` and `limit` as there),
 * kept in Maps, so no key has a special meaning, and started from the machine's start.
 */
export function machineGraph<S extends AnyMachineSnapshot, E extends EventObject>(
  machine: AnyStateMachine,
  options: TraversalOptions<S, E, unknown> & {
    readonly input: unknown;
    readonly serializeState: (snapshot: S) => string;
  },
): MachineGraph<S, E> {
  const stepper = new Stepper<S>(
    machine,
    options.input,
    DEFAULT_LIMITS.maxMicrosteps,
    'machineGraph',
  );
  const serializeEvent = options.serializeEvent ?? ((event: E) => JSON.stringify(event));
  const keyOf = (snapshot: S) => options.serializeState(snapshot);
  const initial = stepper.initial();
  const vertices = new Map<string, S>([[keyOf(initial.snapshot), initial.snapshot]]);
  const edges: Edge<S, E>[] = [];
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  let iterations = 1;
  for (const [, from] of vertices) {
    // A vertex where `stopWhen` holds is kept, and not walked on from.
    if (options.stopWhen?.(from)) continue;
    const offered = new Map<string, E>();
    const events = typeof options.events === 'function' ? options.events(from) : options.events;
    for (const event of events ?? []) offered.set(serializeEvent(event), event);
    for (const event of offered.values()) {
      if (++iterations > limit) throw new Error('Traversal limit exceeded');
      const step = stepper.step(from, event, event.type);
      const { microsteps, transitions } = step;
      edges.push({ from, event, to: step.snapshot, microsteps, transitions });
      const key = keyOf(step.snapshot);
      if (!vertices.has(key)) vertices.set(key, step.snapshot);
    }
  }
  return {
    initialMicrosteps: initial.microsteps,
    initialTransitions: initial.transitions,
    vertices,
    edges,
    keyOf,
  };
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
  return new Set(allSnapshots(graph).flatMap(activeStateNodes));
}
