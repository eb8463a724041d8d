import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate';
import { type ActorOutcomes, type OfferedEvents, TraversalEvents, toJson } from './events.js';
import { scriptedSources } from './invokes.js';
import { type Edge, type MachineGraph, machineGraph } from './machine-graph.js';

// A user machine's reachable graph, kept finite. xstate/graph's getAdjacencyMap walks until
// nothing new turns up, which for a machine with a counter in context is never; here every
// walk has limits, and exceeding one is an error that says which and why, never a hang and
// never a silently partial graph (an "unreachable" verdict on a partial graph would be wrong).

export interface TraversalLimits {
  /** Events on one path (default 50). */
  readonly maxDepth?: number;
  /** Generated paths (default 500). */
  readonly maxPaths?: number;
  /** Distinct snapshots, by `serializeState` (default 5000). */
  readonly maxStates?: number;
}

export const DEFAULT_LIMITS: Required<TraversalLimits> = {
  maxDepth: 50,
  maxPaths: 500,
  maxStates: 5000,
};

/** A traversal limit was exceeded; `limit` says which. */
export class TraversalLimitError extends Error {
  override readonly name = 'TraversalLimitError';
  readonly limit: keyof TraversalLimits;
  constructor(limit: keyof TraversalLimits, message: string) {
    super(message);
    this.limit = limit;
  }
}

/** How to walk a machine: shared by generatePathTests, canReach and the assertions. */
export interface GraphOptions<S extends AnyMachineSnapshot = AnyMachineSnapshot> {
  /** The machine's input. */
  readonly input?: unknown;
  /** Events from outside offered in each snapshot: a list, or a function of the snapshot. */
  readonly events?: OfferedEvents<S>;
  /** Outcomes of invoked children, keyed by the invoke's `id`. */
  readonly actors?: Readonly<Record<string, ActorOutcomes>>;
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
  /** Edges of unhandled events (no transition, same vertex) are left out. */
  readonly graph: MachineGraph<S, EventObject>;
  readonly initialKey: string;
  /** Each vertex's edges, in the order the events were offered. */
  readonly out: ReadonlyMap<string, readonly Edge<S, EventObject>[]>;
  readonly events: TraversalEvents<S>;
  /** The invoked sources a replay replaces, with the invoke ids of each. */
  readonly sources: ReadonlyMap<string, readonly string[]>;
  readonly limits: Required<TraversalLimits>;
  readonly serializeState: (snapshot: S) => string;
  readonly caller: string;
}

interface Arrival {
  readonly depth: number;
  readonly prev?: AnyMachineSnapshot;
  readonly event?: EventObject;
}

/** Walks `machine` breadth first under `options`, within the limits. */
export function traverse<S extends AnyMachineSnapshot>(
  machine: AnyStateMachine,
  options: GraphOptions<S>,
  caller: string,
): Traversal<S> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  const sources = scriptedSources(machine, Object.keys(options.actors ?? {}), caller);
  const events = new TraversalEvents<S>(options);
  const serializeState = options.serializeState ?? (serializeSnapshot as (s: S) => string);

  // getAdjacencyMap is breadth first and calls serializeState(next, event, prev) once per
  // transition it queues, then stopWhen once per new vertex: enough to know how many events
  // first reach each vertex, and by which, without a walk of our own.
  const arrivals = new WeakMap<AnyMachineSnapshot, Arrival>();
  let vertices = 0;
  const witness = (snapshot: AnyMachineSnapshot): string => {
    const names: string[] = [];
    for (let a = arrivals.get(snapshot); a?.prev && a.event; a = arrivals.get(a.prev)) {
      names.unshift(events.name(a.event));
    }
    return names.join(' → ');
  };
  const raw = machineGraph<S, EventObject>(machine, {
    input: options.input,
    events: (snapshot) => events.offered(snapshot),
    serializeEvent: (event) => events.key(event),
    serializeState: (snapshot: S, event?: EventObject, prev?: S) => {
      if (!arrivals.has(snapshot)) {
        const depth = prev ? (arrivals.get(prev)?.depth ?? 0) + 1 : 0;
        arrivals.set(snapshot, { depth, prev, event });
      }
      return serializeState(snapshot);
    },
    stopWhen: (snapshot) => {
      vertices++;
      if (vertices > limits.maxStates) {
        throw new TraversalLimitError(
          'maxStates',
          `${caller}: limits.maxStates (${limits.maxStates}) exceeded: more than ${limits.maxStates} distinct snapshots (by serializeState), the last after ${witness(snapshot) || 'no events'}. Offer fewer events, make serializeState coarser, or raise limits.maxStates.`,
        );
      }
      const depth = arrivals.get(snapshot)?.depth ?? 0;
      if (depth > limits.maxDepth) {
        throw new TraversalLimitError(
          'maxDepth',
          `${caller}: limits.maxDepth (${limits.maxDepth}) exceeded: a new snapshot is first reached after ${depth} events: ${witness(snapshot)}. If the graph grows with every event (a counter or a list in context), make serializeState bucket it; else raise limits.maxDepth.`,
        );
      }
      return false;
    },
  });

  const keyOf = (snapshot: S) => serializeState(snapshot);
  const edges = raw.edges.filter(
    (edge) => edge.transitions.length > 0 || keyOf(edge.to) !== keyOf(edge.from),
  );
  const out = new Map<string, Edge<S, EventObject>[]>();
  for (const key of raw.vertices.keys()) out.set(key, []);
  for (const edge of edges) out.get(keyOf(edge.from))?.push(edge);
  const [initialKey] = raw.vertices.keys();
  return {
    machine,
    input: options.input,
    graph: { ...raw, edges, keyOf },
    initialKey: initialKey as string,
    out,
    events,
    sources,
    limits,
    serializeState,
    caller,
  };
}
