import {
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyStateNode,
  type AnyTransitionDefinition,
  createActor,
  type EventObject,
  fromPromise,
  getInitialMicrosteps,
  SimulatedClock,
} from 'xstate';
import { toJson } from './events.js';
import { scriptedSources } from './invokes.js';
import { activeStateNodes } from './state-nodes.js';
import { transitionName } from './transition-names.js';
import type { Traversal } from './traversal.js';

// Replay: a path against a REAL actor of the machine. Traversal only applied events to
// snapshots; here actions run, invokes start, inputs are computed and timers are set. Each
// invoked child listed in `actors` is replaced (by its src, with machine.provide) by a
// scripted promise that waits until the path's step settles it with that step's output or
// error. Delays run on XState's SimulatedClock, advanced only by the path's `after` steps, so
// no real timer ever fires. After every step the actor must agree with the path.

/** One start of a scripted child during a replay. */
export interface ChildCall {
  /** The invoke's id. */
  readonly id: string;
  readonly src: string;
  /** The input the machine computed for it. */
  readonly input: unknown;
  /** Settled by a step (`output`, `error`), stopped by the machine leaving its state, or still `waiting`. */
  readonly outcome: 'output' | 'error' | 'stopped' | 'waiting';
}

/** What the real actor did on one path. */
export interface PathReplay {
  readonly name: string;
  /** The actor's last snapshot. */
  readonly snapshot: AnyMachineSnapshot;
  /** The transitions it took, named as in `allTransitionNames(machine, 'path')`. */
  readonly transitions: ReadonlySet<string>;
  /** The state nodes it entered (transient ones included), as `a.b` paths. */
  readonly stateNodes: ReadonlySet<string>;
  /** Every scripted child it started, in order. */
  readonly calls: readonly ChildCall[];
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

const flush = (): Promise<void> =>
  new Promise((resolve) => (globalThis.setImmediate ?? setTimeout)(resolve));

/** Replays `steps` (steps[0] is the start) on a real actor of `machine`. */
export async function replayPath<S extends AnyMachineSnapshot>(
  t: Traversal<S>,
  name: string,
  steps: readonly ReplayStep<S>[],
  machine: AnyStateMachine = t.machine,
): Promise<PathReplay> {
  const scripted = new ScriptedChildren();
  const sources = machine === t.machine ? t.sources : scriptedSources(machine, ids(t), t.caller);
  const actors = Object.fromEntries([...sources.keys()].map((src) => [src, scripted.logic(src)]));
  // biome-ignore lint/suspicious/noExplicitAny: provide() types actors by the machine's own logic.
  const provided = machine.provide({ actors } as any);
  const scriptedIds = new Set([...sources.values()].flat());

  // The first microstep of a start is not reported to inspection; the rest are.
  const [first] = getInitialMicrosteps(provided, t.input);
  const stateNodes = new Set(first ? activeStateNodes(first[0]) : []);
  const transitions = new Set<string>();
  const clock = new SimulatedClock();
  const actor = createActor(provided, {
    input: t.input,
    clock,
    inspect: (event) => {
      if (event.type !== '@xstate.microstep' || event.actorRef.sessionId !== event.rootId) return;
      for (const node of activeStateNodes(event.snapshot as AnyMachineSnapshot)) {
        stateNodes.add(node);
      }
      for (const tr of event._transitions as AnyTransitionDefinition[]) {
        transitions.add(transitionName(tr, 'path'));
      }
    },
  });
  // An error status is data the steps compare; without an observer xstate rethrows it.
  actor.subscribe({ error: () => {} });
  // When each timer was set, in simulated time, so an `after` step advances to its end.
  const timerStarts = new WeakMap<object, number>();
  const noteTimers = () => {
    for (const timer of Object.values(actor.system.getSnapshot()._scheduledEvents)) {
      if (!timerStarts.has(timer)) timerStarts.set(timer, clock.now());
    }
  };

  const fail = (i: number, what: string, expected: string, actual: string, hint = '') =>
    new PathReplayError(
      `${name}: step ${i} (${steps[i]?.name}): ${what}${hint}\n  expected: ${expected}\n  actual:   ${actual}`,
      i,
      expected,
      actual,
    );

  let last: AnyMachineSnapshot;
  let calls: ChildCall[];
  try {
    for (const [i, step] of steps.entries()) {
      const { event } = step;
      const actorId = (event as { actorId?: unknown }).actorId;
      const isOutcome = /^xstate\.(done|error)\.actor\./.test(event.type);
      if (i === 0) {
        actor.start();
      } else if (isOutcome && typeof actorId === 'string' && scriptedIds.has(actorId)) {
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
        const timer = Object.values(actor.system.getSnapshot()._scheduledEvents).find(
          (s) => s.event.type === event.type && s.target === actor,
        );
        if (!timer) {
          throw fail(i, 'the delayed transition has no timer pending', event.type, 'none');
        }
        const due = (timerStarts.get(timer) ?? clock.now()) + timer.delay;
        clock.increment(Math.max(0, due - clock.now()));
      } else {
        actor.send(event);
      }
      await flush();
      noteTimers();
      check(i, step.state);
    }
    // Before stop(), which would mark the end's snapshot stopped and its children stopped.
    last = actor.getSnapshot();
    calls = scripted.calls.map((call) => ({ ...call }));
  } finally {
    actor.stop();
  }
  return { name, snapshot: last, transitions, stateNodes, calls };

  function check(i: number, expected: S): void {
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
        toJson(waitingIn(expected, scriptedIds)),
        toJson(scripted.waiting()),
        ' (a child the state invokes must be running, and no other)',
      ],
    ];
    for (const [what, e, a, hint] of pairs) {
      if (e !== a) {
        const timers = event(i).startsWith('xstate.after.')
          ? ' (the clock fires every timer that is due by then, shorter delays first)'
          : '';
        throw fail(i, what, e, a, hint ?? timers);
      }
    }
  }

  function event(i: number): string {
    return steps[i]?.event.type ?? '';
  }
}

function ids<S extends AnyMachineSnapshot>(t: Traversal<S>): string[] {
  return [...t.sources.values()].flat();
}

/** The scripted children a snapshot's state invokes: the ones that must be waiting. */
function waitingIn(snapshot: AnyMachineSnapshot, scripted: ReadonlySet<string>): string[] {
  if (snapshot.status !== 'active') return [];
  const nodes = snapshot._nodes as AnyStateNode[];
  const invoked = nodes.flatMap((node) => node.invoke.map((invoke) => invoke.id));
  return [...new Set(invoked.filter((id) => scripted.has(id)))].sort();
}
