import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from 'xstate';
import { invokeSites } from './invokes.js';
import { firstTimers, type Runtime, runningChildren } from './runtime.js';
import { descendants, nodePath } from './state-nodes.js';

// The events a traversal offers in a snapshot, and their names. Three kinds:
// - the outcomes of invoked children: each scripted output is one `xstate.done.actor.<id>`
//   event and each error one `xstate.error.actor.<id>`, offered while the child runs (it is
//   in `snapshot.children` and has not answered yet: a child answers once);
// - events from outside, which the caller lists (a list, or a function of the snapshot);
// - delayed transitions: `xstate.after.<delay>.<state id>`, named `after:<delay>@<state>`,
//   offered when their timer may be the next to end (runtime.ts says which may).

/**
 * What an invoked child may answer in the paths: each output and each error is one event. A
 * chain or tool loop that fails ends with an output (`status: 'failed'`), whether it runs as
 * its machine or durably, so one list of outputs serves both; `errors` are actors that threw.
 */
export interface ActorOutcomes {
  readonly outputs?: readonly unknown[];
  readonly errors?: readonly unknown[];
}

/**
 * An invoke's outcomes, or `'never'` for a child that never answers (the same as listing no
 * outcomes). Every invoke of the machine must be listed: an unlisted one would make every
 * verdict hold only for a child that never answers, and a replay would run the real actor.
 */
export type ActorScript = ActorOutcomes | 'never';

export type OfferedEvents<S> = readonly EventObject[] | ((snapshot: S) => readonly EventObject[]);

export interface EventSourceOptions<S> {
  readonly events?: OfferedEvents<S>;
  readonly actors?: Readonly<Record<string, ActorScript>>;
  /** Offer `after` transitions as events (default true). */
  readonly delays?: boolean;
  /** Names an event from outside in path names (default: its type, then its payload as JSON). */
  readonly describeEvent?: (event: EventObject) => string;
}

export class TraversalEvents<S extends AnyMachineSnapshot> {
  readonly #options: EventSourceOptions<S>;
  readonly #invokeIds: ReadonlySet<string>;
  /** The child outcome events, made once so each keeps its name (`classify:done#1`). */
  readonly #actorEvents = new Map<string, EventObject[]>();
  /** One event object per delayed event type, so each is one edge with one name. */
  readonly #delayEvents = new Map<string, EventObject>();
  readonly #names = new Map<EventObject, string>();
  /** `xstate.after.1000.app.a.a1` → `after:1000@a.a1`, for every `after` of the machine. */
  readonly #delayNames: ReadonlyMap<string, string>;

  constructor(machine: AnyStateMachine, options: EventSourceOptions<S>) {
    this.#options = options;
    this.#invokeIds = new Set(invokeSites(machine).map((site) => site.id));
    for (const [id, script] of Object.entries(options.actors ?? {})) {
      const outcomes = script === 'never' ? {} : script;
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
    this.#delayNames = new Map(
      [machine.root, ...descendants(machine.root)].flatMap((node) =>
        node.after.map((t) => [t.eventType, `after:${String(t.delay)}@${nodePath(node)}`] as const),
      ),
    );
  }

  #named(event: { readonly type: string; readonly [key: string]: unknown }, name: string) {
    this.#names.set(event, name);
    return event;
  }

  /** The invoked children running in `snapshot` (by invoke id): the ones that may answer. */
  running(snapshot: S, runtime: Runtime): string[] {
    return runningChildren(snapshot, runtime, this.#invokeIds);
  }

  /** The events offered in `snapshot`: children's outcomes, events from outside, delays. */
  offered(snapshot: S, runtime: Runtime): EventObject[] {
    if (snapshot.status !== 'active') return [];
    const children = this.running(snapshot, runtime).flatMap(
      (id) => this.#actorEvents.get(id) ?? [],
    );
    const { events = [] } = this.#options;
    const outside = typeof events === 'function' ? events(snapshot) : events;
    const delays =
      this.#options.delays === false
        ? []
        : firstTimers(runtime).map((timer) => this.#delayEvent(timer.eventType));
    return [...children, ...outside, ...delays];
  }

  #delayEvent(type: string): EventObject {
    let event = this.#delayEvents.get(type);
    if (!event) {
      event = this.#named({ type }, this.delayName(type));
      this.#delayEvents.set(type, event);
    }
    return event;
  }

  /** A delayed event's name: `after:1000@a.a1` (the delay as written, then the state). */
  delayName(type: string): string {
    return this.#delayNames.get(type) ?? type;
  }

  /** The event's name in path names and messages, e.g. `classify:done#0`, `after:5000@review`. */
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
