import {
  type AnyActorScope,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyTransitionDefinition,
  createActor,
  type EventObject,
  getInitialMicrosteps,
} from 'xstate';
import { getAdjacencyMap, type TraversalOptions } from 'xstate/graph';
import { activeStateNodes } from './state-nodes.js';

// The reachable graph of a machine under a traversal's events and serialization, built with
// xstate/graph's getAdjacencyMap, plus what that map leaves out and properties need: the
// microsteps of each edge (transient `always` states exist only there) and the transition
// definitions each microstep took (for transition coverage).

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
  const tracer = new MacrostepTracer(machine, options.input);
  const vertices = new Map<string, S>();
  const edges: Edge<S, E>[] = [];
  for (const [key, { state, transitions }] of Object.entries(adjacency)) {
    vertices.set(key, state as S);
    const next = Object.values(transitions) as { event: E; state: S }[];
    for (const { event, state: to } of next) {
      edges.push({ from: state as S, event, to, ...tracer.step<S>(state as S, event) });
    }
  }
  const initialMicrosteps = getInitialMicrosteps(machine, options.input).map(([s]) => s as S);
  const initialTransitions = tracer.initial();
  return {
    initialMicrosteps,
    initialTransitions,
    vertices,
    edges,
    keyOf: (s) => options.serializeState(s),
  };
}

/**
 * Runs one macrostep as xstate's getMicrosteps does (pure: an actor scope that never starts
 * or stops anything), and also collects the transitions of each microstep, which
 * getMicrosteps drops: the machine reports them to the system's `@xstate.microstep`
 * inspection events, the same events a real actor's `inspect` option receives.
 */
class MacrostepTracer {
  readonly #machine: AnyStateMachine;
  readonly #input: unknown;
  readonly #scope: AnyActorScope;
  #seen: { snapshot: AnyMachineSnapshot; transitions: AnyTransitionDefinition[] }[] = [];

  constructor(machine: AnyStateMachine, input: unknown) {
    this.#machine = machine;
    this.#input = input;
    const self = createActor(machine, { input });
    this.#scope = {
      self,
      id: '',
      sessionId: '',
      logger: () => {},
      defer: () => {},
      emit: () => {},
      stopChild: () => {},
      system: self.system,
      actionExecutor: () => {},
    } as unknown as AnyActorScope;
    self.system.inspect((event) => {
      if (event.type === '@xstate.microstep') {
        this.#seen.push({
          snapshot: event.snapshot as AnyMachineSnapshot,
          transitions: event._transitions as AnyTransitionDefinition[],
        });
      }
    });
  }

  step<S extends AnyMachineSnapshot>(from: S, event: EventObject) {
    this.#seen = [];
    this.#machine.transition(from, event, this.#scope);
    const seen = this.#seen;
    return {
      microsteps: seen.map((s) => s.snapshot as S),
      transitions: seen.flatMap((s) => s.transitions),
    };
  }

  initial(): AnyTransitionDefinition[] {
    this.#seen = [];
    this.#machine.getInitialSnapshot(this.#scope, this.#input);
    return this.#seen.flatMap((s) => s.transitions);
  }
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
