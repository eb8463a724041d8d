import type { AnyMachineSnapshot, AnyStateNode, EventObject } from 'xstate';

// The events a traversal offers in a snapshot, and their names. Three kinds:
// - events from outside, which the caller lists (a list, or a function of the snapshot);
// - the outcomes of invoked children: each scripted output is one `xstate.done.actor.<id>`
//   event and each error one `xstate.error.actor.<id>`, offered only while a state node
//   that invokes `<id>` is active (a child that is not running cannot answer);
// - delayed transitions: `xstate.after.<delay>.<state id>`, offered while their state is
//   active, as if the delay could end at any moment (a replay ends it with a clock).

/** What an invoked child may answer in the paths: each output and each error is one event. */
export interface ActorOutcomes {
  readonly outputs?: readonly unknown[];
  readonly errors?: readonly unknown[];
}

export type OfferedEvents<S> = readonly EventObject[] | ((snapshot: S) => readonly EventObject[]);

export interface EventSourceOptions<S> {
  readonly events?: OfferedEvents<S>;
  readonly actors?: Readonly<Record<string, ActorOutcomes>>;
  /** Offer `after` transitions as events (default true). */
  readonly delays?: boolean;
  /** Names an event from outside in path names (default: its type, then its payload as JSON). */
  readonly describeEvent?: (event: EventObject) => string;
}

export class TraversalEvents<S extends AnyMachineSnapshot> {
  readonly #options: EventSourceOptions<S>;
  /** The child outcome events, made once so each keeps its name (`classify:done#1`). */
  readonly #actorEvents = new Map<string, EventObject[]>();
  readonly #delayEvents = new Map<string, EventObject>();
  readonly #names = new Map<EventObject, string>();

  constructor(options: EventSourceOptions<S>) {
    this.#options = options;
    for (const [id, outcomes] of Object.entries(options.actors ?? {})) {
      const events = [
        ...(outcomes.outputs ?? []).map((output, i) =>
          this.#named({ type: `xstate.done.actor.${id}`, output, actorId: id }, `${id}:done#${i}`),
        ),
        ...(outcomes.errors ?? []).map((error, i) =>
          this.#named({ type: `xstate.error.actor.${id}`, error, actorId: id }, `${id}:error#${i}`),
        ),
      ];
      this.#actorEvents.set(id, events);
    }
  }

  #named(event: { readonly type: string; readonly [key: string]: unknown }, name: string) {
    this.#names.set(event, name);
    return event;
  }

  /** The events offered in `snapshot`: children's outcomes, events from outside, delays. */
  offered(snapshot: S): EventObject[] {
    if (snapshot.status !== 'active') return [];
    const nodes = snapshot._nodes as AnyStateNode[];
    const ids = new Set(nodes.flatMap((node) => node.invoke.map((invoke) => invoke.id)));
    const children = [...ids].flatMap((id) => this.#actorEvents.get(id) ?? []);
    const { events = [] } = this.#options;
    const outside = typeof events === 'function' ? events(snapshot) : events;
    const delays = this.#options.delays === false ? [] : nodes.flatMap((n) => this.#delays(n));
    return [...children, ...outside, ...delays];
  }

  #delays(node: AnyStateNode): EventObject[] {
    return node.after.map((t) => {
      let event = this.#delayEvents.get(t.eventType);
      if (!event) {
        event = this.#named({ type: t.eventType }, `after:${String(t.delay)}`);
        this.#delayEvents.set(t.eventType, event);
      }
      return event;
    });
  }

  /** The event's name in path names and messages, e.g. `classify:done#0`, `after:5000`, `APPROVE`. */
  name(event: EventObject): string {
    if (event.type === 'xstate.init') return '(start)';
    return (
      this.#names.get(event) ?? this.#options.describeEvent?.(event) ?? describeEventDefault(event)
    );
  }

  /** The traversal's serialization of an event: events with the same key are one edge. */
  key(event: EventObject): string {
    return this.#names.get(event) ?? `event ${toJson(event)}`;
  }
}

/** `APPROVE`, or `REJECT {"reason":"too risky"}` for an event with a payload. */
export function describeEventDefault(event: EventObject): string {
  const { type, ...payload } = event;
  return Object.keys(payload).length > 0 ? `${type} ${toJson(payload)}` : type;
}

/**
 * JSON in which errors keep their name and message (plain JSON turns every Error into `{}`,
 * so two different failures would look the same to a serialization or a comparison).
 */
export function toJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) =>
      v instanceof Error ? { error: v.name, message: v.message } : v,
    ) ?? 'undefined'
  );
}
