import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate';
import { type ActorScript, type OfferedEvents, TraversalEvents, toJson } from './events.js';
import { checkAllListed, scriptedSources } from './invokes.js';
import { DEFAULT_LIMITS, TraversalLimitError, type TraversalLimits } from './limits.js';
import type { Edge, MachineGraph } from './machine-graph.js';
import { describeRuntime, nextRuntime, type Runtime, runtimeKey } from './runtime.js';
import { type Macrostep, Stepper } from './stepper.js';

// A user machine's reachable graph, breadth first from its start, within limits (limits.ts).
// A vertex is a snapshot by `serializeState` plus what the snapshot does not hold and decides
// what comes next: pending timers and children that already answered (runtime.ts). Vertices
// are kept in a Map under internal ids, so no key (`__proto__`, `1`) has special meaning, and
// the walk starts at the machine's start, found by its snapshot, not by a key's position.

export { DEFAULT_LIMITS, TraversalLimitError, type TraversalLimits };

/** How to walk a machine: shared by generatePathTests, canReach and the assertions. */
export interface GraphOptions<S extends AnyMachineSnapshot = AnyMachineSnapshot> {
  /** The machine's input. */
  readonly input?: unknown;
  /** Events from outside offered in each snapshot: a list, or a function of the snapshot. */
  readonly events?: OfferedEvents<S>;
  /**
   * Outcomes of invoked children, keyed by the invoke's `id`; every invoke must be listed,
   * `'never'` for a child that never answers. A replay stubs every invoked src.
   */
  readonly actors?: Readonly<Record<string, ActorScript>>;
  /** Offer `after` transitions as events (default true). */
  readonly delays?: boolean;
  readonly limits?: TraversalLimits;
  /**
   * What makes two snapshots the same vertex. Default: value, status and the whole context
   * as JSON (`serializeSnapshot`). Every distinct context is a vertex, so a counter or a
   * growing list in context multiplies the graph: return a coarser key (bucket counters,
   * drop transcripts) when the limits trip. Replays compare contexts through it too.
   */
  readonly serializeState?: (snapshot: S) => string;
  /** Names an event from outside in path names (default: type, then payload as JSON). */
  readonly describeEvent?: (event: EventObject) => string;
}

/** The default `serializeState`: value, status and context, errors kept readable. */
export function serializeSnapshot(snapshot: AnyMachineSnapshot): string {
  return toJson({ value: snapshot.value, status: snapshot.status, context: snapshot.context });
}

export interface Traversal<S extends AnyMachineSnapshot> {
  readonly machine: AnyStateMachine;
  readonly input: unknown;
  /** Starting the machine. */
  readonly initial: Macrostep<S>;
  /** Edges of unhandled events (no transition, same vertex) are left out. */
  readonly graph: MachineGraph<S, EventObject>;
  /** The start's internal vertex id. */
  readonly initialKey: string;
  /** Each vertex's edges (by internal id), in the order the events were offered. */
  readonly out: ReadonlyMap<string, readonly Edge<S, EventObject>[]>;
  /**
   * The internal ids of the vertices an edge of the graph leaves and reaches. Not the snapshots'
   * ids: XState hands back the same snapshot object for a step that changes only
   * the runtime (a timer that fired without a transition), so one snapshot object can be two
   * vertices, and a path rebuilt by snapshot ids could loop forever.
   */
  readonly endsOf: (edge: Edge<S, EventObject>) => { readonly from: string; readonly to: string };
  readonly events: TraversalEvents<S>;
  readonly stepper: Stepper<S>;
  readonly limits: Required<TraversalLimits>;
  readonly serializeState: (snapshot: S) => string;
  readonly caller: string;
  /** Distinct snapshots found (all of them, unless the walk stopped at a hit). */
  readonly explored: number;
  /** With `until`: the first snapshot (microsteps included) it holds for, breadth first. */
  readonly hit?: { readonly path: readonly Edge<S, EventObject>[]; readonly state: S };
}

interface Vertex<S> {
  readonly snapshot: S;
  readonly depth: number;
  /** The edge it was first reached by. */
  readonly via?: Edge<S, EventObject>;
}

/** Walks `machine` breadth first under `options`, within the limits; stops at `until`'s first hit. */
export function traverse<S extends AnyMachineSnapshot>(
  machine: AnyStateMachine,
  options: GraphOptions<S>,
  caller: string,
  until?: (snapshot: S) => boolean,
): Traversal<S> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const listed = Object.keys(options.actors ?? {});
  scriptedSources(machine, listed, caller);
  checkAllListed(machine, listed, caller);
  const events = new TraversalEvents<S>(machine, options);
  const stepper = new Stepper<S>(machine, options.input, limits.maxMicrosteps, caller);
  const serializeState = options.serializeState ?? (serializeSnapshot as (s: S) => string);

  const runtimes = new WeakMap<S, Runtime>();
  const ids = new WeakMap<S, string>();
  const vertexOf = new Map<string, Vertex<S>>();
  // The graph users see keys vertices by serializeState; a snapshot that also rests with
  // other timers pending gets the runtime in words after it.
  const exposedOf = new Map<string, string>();
  const vertices = new Map<string, S>();
  const edges: Edge<S, EventObject>[] = [];
  const out = new Map<string, Edge<S, EventObject>[]>();
  const ends = new WeakMap<Edge<S, EventObject>, { readonly from: string; readonly to: string }>();
  const endsOf = (edge: Edge<S, EventObject>) => {
    const known = ends.get(edge);
    if (!known) throw new Error(`${caller}: an edge that is not of this traversal`);
    return known;
  };

  const identify = (snapshot: S, runtime: Runtime): string => {
    const id = `k:${serializeState(snapshot)}\u0000${runtimeKey(runtime)}`;
    ids.set(snapshot, id);
    runtimes.set(snapshot, runtime);
    return id;
  };
  const pathTo = (vertex: Vertex<S> | undefined): Edge<S, EventObject>[] => {
    const path: Edge<S, EventObject>[] = [];
    for (let edge = vertex?.via; edge; edge = vertexOf.get(endsOf(edge).from)?.via) {
      path.unshift(edge);
    }
    return path;
  };
  const names = (path: readonly Edge<S, EventObject>[]) =>
    path.map((edge) => events.name(edge.event)).join(' → ') || 'no events';
  const add = (id: string, vertex: Vertex<S>): void => {
    if (vertexOf.size + 1 > limits.maxStates) {
      throw new TraversalLimitError(
        'maxStates',
        `${caller}: limits.maxStates (${limits.maxStates}) exceeded: more than ${limits.maxStates} distinct snapshots (by serializeState, and timers pending), the last after ${names([...pathTo(vertex)])}. Offer fewer events, make serializeState coarser, or raise limits.maxStates.`,
      );
    }
    if (vertex.depth > limits.maxDepth) {
      throw new TraversalLimitError(
        'maxDepth',
        `${caller}: limits.maxDepth (${limits.maxDepth}) exceeded: a new snapshot is first reached after ${vertex.depth} events: ${names(pathTo(vertex))}. If the graph grows with every event (a counter or a list in context), make serializeState bucket it; else raise limits.maxDepth.`,
      );
    }
    vertexOf.set(id, vertex);
    const serialized = serializeState(vertex.snapshot);
    let exposed = serialized;
    if (vertices.has(exposed)) {
      const runtime = runtimes.get(vertex.snapshot) as Runtime;
      exposed = `${serialized} (${describeRuntime(runtime, (type) => events.delayName(type))})`;
      for (let n = 2; vertices.has(exposed); n++) exposed = `${serialized} #${n}`;
    }
    exposedOf.set(id, exposed);
    vertices.set(exposed, vertex.snapshot);
  };

  const initial = stepper.initial();
  const start = initial.snapshot;
  const initialKey = identify(
    start,
    nextRuntime(undefined, undefined, { type: 'xstate.init' }, initial),
  );
  add(initialKey, { snapshot: start, depth: 0 });
  let hit: Traversal<S>['hit'];
  const atStart = until && initial.microsteps.find(until);
  if (atStart) hit = { path: [], state: atStart };

  const queue = hit ? [] : [initialKey];
  walk: for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
    const from = vertexOf.get(id) as Vertex<S>;
    const runtime = runtimes.get(from.snapshot) as Runtime;
    const own: Edge<S, EventObject>[] = [];
    out.set(id, own);
    // Events with the same key are one edge (the last one offered, in the first one's place).
    const offered = new Map<string, EventObject>();
    for (const event of events.offered(from.snapshot, runtime))
      offered.set(events.key(event), event);
    for (const event of offered.values()) {
      const step = stepper.step(from.snapshot, event, events.name(event));
      const to = step.snapshot;
      const toId = identify(to, nextRuntime(runtime, from.snapshot, event, step));
      if (step.transitions.length === 0 && toId === id) continue;
      const edge: Edge<S, EventObject> = {
        from: from.snapshot,
        event,
        to,
        microsteps: step.microsteps,
        transitions: step.transitions,
      };
      ends.set(edge, { from: id, to: toId });
      own.push(edge);
      edges.push(edge);
      const found = until && step.microsteps.find(until);
      if (found) {
        hit = { path: [...pathTo(from), edge], state: found };
        break walk;
      }
      if (!vertexOf.has(toId)) {
        add(toId, { snapshot: to, depth: from.depth + 1, via: edge });
        queue.push(toId);
      }
    }
  }

  return {
    machine,
    input: options.input,
    initial,
    graph: {
      initialMicrosteps: initial.microsteps,
      initialTransitions: initial.transitions,
      vertices,
      edges,
      keyOf: (snapshot) => exposedOf.get(ids.get(snapshot) ?? '') ?? serializeState(snapshot),
    },
    initialKey,
    out,
    endsOf,
    events,
    stepper,
    limits,
    serializeState,
    caller,
    explored: vertexOf.size,
    ...(hit && { hit }),
  };
}
