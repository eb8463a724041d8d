import {
  type AnyMachineSnapshot,
  type AnyStateMachine,
  createActor,
  type EventObject,
  fromPromise,
  getInitialMicrosteps,
  type InputFrom,
} from 'xstate';
import type { StepRecord } from './coverage.js';
import { toJson } from './events.js';
import { stubbedSources } from './invokes.js';
import { activeStateNodes } from './state-nodes.js';
import { transitionName } from './transition-names.js';
import type { Traversal } from './traversal.js';
import {
  type ActorSystemLike,
  checkXStateSupport,
  microstepTransitions,
  type ScheduledEvent,
  scheduledEvents,
} from './xstate-internals.js';

// Replay: a path against a REAL actor of the machine. Traversal only applied events to
// snapshots; here actions run, invokes start, inputs are computed and timers are set. Every
// invoked src is replaced (with machine.provide) by a scripted promise that waits until a
// step of the path settles it with that step's output or error, and never answers otherwise:
// no real child runs. Delays run on a clock of our own that fires exactly the timer an
// `after` step names, so no real timer ever fires and timers due together fire one step at a
// time, in the order the path (and the traversal before it) gives. After every step the actor
// must agree with the path.

/** One start of a scripted child during a replay. */
export interface ChildCall<Src extends string = string, Input = unknown> {
  /** The invoke's id. */
  readonly id: string;
  /** The key of its logic in setup({ actors }). */
  readonly src: Src;
  /** The input the machine computed for it. */
  readonly input: Input;
  /** Settled by a step (`output`, `error`), stopped by the machine leaving its state, or still `waiting`. */
  readonly outcome: 'output' | 'error' | 'stopped' | 'waiting';
}

type ActorLogics<M extends AnyStateMachine> = NonNullable<Parameters<M['provide']>[0]['actors']>;
type CallsBySrc<M extends AnyStateMachine> = {
  [Src in keyof ActorLogics<M> & string]: ChildCall<
    Src,
    InputFrom<NonNullable<ActorLogics<M>[Src]>>
  >;
}[keyof ActorLogics<M> & string];

/**
 * The child calls of a machine's replays: one ChildCall per src of setup({ actors }), with
 * that logic's input type, so `call.src === 'draftReply'` narrows `call.input`.
 */
export type ChildCallOf<M extends AnyStateMachine> = [CallsBySrc<M>] extends [never]
  ? ChildCall
  : CallsBySrc<M>;

/** What the real actor did on one path. */
export interface PathReplay<S = AnyMachineSnapshot, C extends ChildCall = ChildCall> {
  readonly name: string;
  /** The actor's last snapshot. */
  readonly snapshot: S;
  /** The transitions it took, named as in `allTransitionNames(machine, 'path')`. */
  readonly transitions: ReadonlySet<string>;
  /** The state nodes it entered (transient ones included), as `a.b` paths. */
  readonly stateNodes: ReadonlySet<string>;
  /** Every child it invoked (all are scripted stand-ins), in order. */
  readonly calls: readonly C[];
}

/** The real actor left the path: `step` is the index in `path.steps`. */
export class PathReplayError extends Error {
  override readonly name = 'PathReplayError';
  readonly step: number;
  /** What the path (the machine's model) says, as compared. */
  readonly expected: string;
  /** What the real actor did, as compared. */
  readonly actual: string;
  constructor(message: string, step: number, expected: string, actual: string) {
    super(message);
    this.step = step;
    this.expected = expected;
    this.actual = actual;
  }
}

export interface ReplayStep<S> {
  readonly event: EventObject;
  /** The event's name in the path name (`(start)` for the first step). */
  readonly name: string;
  /** The snapshot the machine's model says the step ends in. */
  readonly state: S;
}

/** What the model says about a step besides its snapshot. */
export interface StepModel extends StepRecord {
  /** The invoked children that must be waiting for an answer after the step, sorted. */
  readonly waiting: readonly string[];
}

type Settle = { readonly output: unknown } | { readonly error: unknown };

/** The scripted children of one replay: each start waits for a step to settle it. */
class ScriptedChildren {
  readonly calls: { -readonly [K in keyof ChildCall]: ChildCall[K] }[] = [];
  readonly #waiting = new Map<string, { call: ChildCall; settle: (s: Settle) => void }>();

  logic(src: string) {
    return fromPromise<unknown, unknown>(
      ({ input, self, signal }) =>
        new Promise((resolve, reject) => {
          const call = { id: self.id, src, input, outcome: 'waiting' as ChildCall['outcome'] };
          this.calls.push(call);
          const settle = (s: Settle) => {
            this.#waiting.delete(call.id);
            call.outcome = 'output' in s ? 'output' : 'error';
            if ('output' in s) resolve(s.output);
            else reject(s.error);
          };
          this.#waiting.set(call.id, { call, settle });
          signal.addEventListener('abort', () => {
            if (this.#waiting.get(call.id)?.call !== call) return;
            this.#waiting.delete(call.id);
            call.outcome = 'stopped';
          });
        }),
    );
  }

  waiting(): string[] {
    return [...this.#waiting.keys()].sort();
  }

  settle(id: string, s: Settle): boolean {
    const waiting = this.#waiting.get(id);
    waiting?.settle(s);
    return waiting !== undefined;
  }
}

/**
 * A clock for xstate's scheduler that fires nothing by itself: a step fires one timer, the
 * one that delivers its event, and time moves to that timer's end.
 */
class ReplayClock {
  system: ActorSystemLike | undefined;
  #now = 0;
  #next = 0;
  readonly #timers = new Map<
    number,
    { fn: () => void; due: number; scheduled: ScheduledEvent | undefined }
  >();
  readonly #claimed = new WeakSet<object>();

  setTimeout(fn: () => void, delay: number): number {
    const id = this.#next++;
    // xstate's scheduler records the delayed event just before it sets the timer.
    const system = this.system;
    const scheduled = system && scheduledEvents(system).find((s) => !this.#claimed.has(s));
    if (scheduled) this.#claimed.add(scheduled);
    this.#timers.set(id, { fn, due: this.#now + delay, scheduled });
    return id;
  }

  clearTimeout(id: number): void {
    this.#timers.delete(id);
  }

  /** The event types of the timers pending for `target`. */
  pending(target: unknown): string[] {
    return [...this.#timers.values()].flatMap(({ scheduled }) =>
      scheduled && scheduled.target === target ? [scheduled.event.type] : [],
    );
  }

  /** Fires the timer that delivers `type` to `target`; false when none is pending. */
  fire(type: string, target: unknown): boolean {
    for (const [id, timer] of this.#timers) {
      if (timer.scheduled?.event.type !== type || timer.scheduled.target !== target) continue;
      this.#timers.delete(id);
      this.#now = Math.max(this.#now, timer.due);
      timer.fn();
      return true;
    }
    return false;
  }
}

const flush = (): Promise<void> =>
  new Promise((resolve) => (globalThis.setImmediate ?? setTimeout)(resolve));

/** Replays `steps` (steps[0] is the start) on a real actor of `machine`. */
export async function replayPath<S extends AnyMachineSnapshot, C extends ChildCall = ChildCall>(
  t: Traversal<S>,
  name: string,
  steps: readonly ReplayStep<S>[],
  models: readonly StepModel[],
  machine: AnyStateMachine = t.machine,
): Promise<PathReplay<S, C>> {
  checkXStateSupport();
  const scripted = new ScriptedChildren();
  const sources = stubbedSources(machine, t.caller);
  const actors = Object.fromEntries([...sources.keys()].map((src) => [src, scripted.logic(src)]));
  // biome-ignore lint/suspicious/noExplicitAny: provide() types actors by the machine's own logic.
  const provided = machine.provide({ actors } as any);

  // The first microstep of a start is not reported to inspection; the rest are.
  const [first] = getInitialMicrosteps(provided, t.input);
  const stateNodes = new Set(first ? activeStateNodes(first[0]) : []);
  const transitions = new Set<string>();
  const clock = new ReplayClock();
  const actor = createActor(provided, {
    input: t.input,
    clock,
    inspect: (event) => {
      if (event.type !== '@xstate.microstep' || event.actorRef.sessionId !== event.rootId) return;
      for (const node of activeStateNodes(event.snapshot as AnyMachineSnapshot)) {
        stateNodes.add(node);
      }
      for (const tr of microstepTransitions(event)) transitions.add(transitionName(tr, 'path'));
    },
  });
  clock.system = actor.system;
  // An error status is data the steps compare; without an observer xstate rethrows it.
  actor.subscribe({ error: () => {} });

  const fail = (i: number, what: string, expected: string, actual: string, hint = '') => {
    const waiting = scripted.waiting();
    const stubs =
      waiting.length > 0 && !what.startsWith('the children')
        ? `\n  waiting:  ${toJson(waiting)} (stand-ins for the invoked actors: each answers only when a step settles it)`
        : '';
    return new PathReplayError(
      `${name}: step ${i} (${steps[i]?.name}): ${what}${hint}\n  expected: ${expected}\n  actual:   ${actual}${stubs}`,
      i,
      expected,
      actual,
    );
  };

  let last: S;
  let calls: C[];
  try {
    for (const [i, step] of steps.entries()) {
      const { event } = step;
      const actorId = (event as { actorId?: unknown }).actorId;
      const isOutcome = /^xstate\.(done|error)\.actor\./.test(event.type);
      if (i === 0) {
        actor.start();
      } else if (isOutcome && typeof actorId === 'string') {
        const settled = event.type.startsWith('xstate.done.')
          ? scripted.settle(actorId, { output: (event as { output?: unknown }).output })
          : scripted.settle(actorId, { error: (event as { error?: unknown }).error });
        if (!settled) {
          throw fail(
            i,
            `no child '${actorId}' is waiting to be settled`,
            actorId,
            toJson(scripted.waiting()),
          );
        }
      } else if (event.type.startsWith('xstate.after.')) {
        if (!clock.fire(event.type, actor)) {
          const pending = clock.pending(actor).map((type) => t.events.delayName(type));
          throw fail(i, 'the delayed transition has no timer pending', step.name, toJson(pending));
        }
      } else {
        actor.send(event);
      }
      await flush();
      check(i, step.state, models[i]);
    }
    // Before stop(), which would mark the end's snapshot stopped and its children stopped.
    last = actor.getSnapshot() as S;
    calls = scripted.calls.map((call) => ({ ...call }) as C);
  } finally {
    actor.stop();
  }
  return { name, snapshot: last, transitions, stateNodes, calls };

  function check(i: number, expected: S, model: StepModel | undefined): void {
    const actual = actor.getSnapshot() as S;
    const pairs: [string, string, string, string?][] = [
      ['the state value differs', toJson(expected.value), toJson(actual.value)],
      ['the status differs', expected.status, actual.status],
      [
        'the snapshot differs (by serializeState)',
        t.serializeState(expected),
        t.serializeState(actual),
      ],
      ['the output differs', toJson(expected.output), toJson(actual.output)],
      ['the error differs', toJson(expected.error), toJson(actual.error)],
      [
        'the children waiting for an answer differ',
        toJson(model?.waiting ?? []),
        toJson(scripted.waiting()),
        ' (a child the state invokes must be running, and no other)',
      ],
    ];
    for (const [what, e, a, hint] of pairs) {
      if (e !== a) throw fail(i, what, e, a, hint);
    }
  }
}
