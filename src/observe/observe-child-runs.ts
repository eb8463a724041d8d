import type { AnyActorRef, AnyActorScope, AnyStateMachine } from 'xstate';
import { randomUUID } from '../lazy-crypto.js';
import type { ObservedAgent } from './observe-agent-run.js';
import { reportOnce } from './observer-errors.js';
import { observersFor } from './registry.js';
import { observedTime, RunObservation } from './run-observation.js';

// SPEC R5 + X4: a chain's or tool loop's `machine` invoked (or spawned) by an app's own
// machine is a run too, though no invoke() started it and no per-run options reach it: it
// reports to the process-wide observers (`observeRuns`). The runtime sees such an actor only
// through the machine's ActorLogic methods, so two are wrapped: `getInitialSnapshot`, where a
// child actor (while anyone observes) gets its observation and a subscription (every
// snapshot, and its end however it comes), and `start`, where the run starts, before the
// actors its first state invokes (a machine starts them there, ahead of its first snapshot).
// Root actors are left alone: invoke(), stream() and batch() observe theirs already, and an
// actor you create yourself is yours to subscribe to. Nobody observing costs one array-length
// check per actor created; a restored (persisted) child actor is not observed.

/** How a child run ended, as its actor shows it. */
export type ChildRunEnd =
  | { readonly how: 'done'; readonly output: unknown }
  /** Stopped before a final state: its parent left the state that invoked it (a timeout, an event). */
  | { readonly how: 'stopped'; readonly context: unknown }
  /** The machine itself threw (a bug, or a provided action that failed). */
  | { readonly how: 'crashed'; readonly error: unknown; readonly context: unknown };

export interface ChildRunReporting {
  /** What observers are told the run started with: the machine's input, shaped as `invoke()` takes it. */
  runInput(machineInput: unknown): unknown;
  /**
   * The run starts, before the actors it invokes do: make `observation` reachable from them
   * (their `_parent` is `actor`), and return what reports the run's end, called once.
   */
  begin(actor: AnyActorRef, observation: RunObservation): (end: ChildRunEnd) => void;
}

/** Makes every child actor of `machine` an observed run; returns `machine` itself, wrapped. */
export function observeChildRuns<M extends AnyStateMachine>(
  machine: M,
  agent: ObservedAgent,
  reporting: ChildRunReporting,
): M {
  const initialSnapshot = machine.getInitialSnapshot.bind(machine) as (
    scope: AnyActorScope,
    input: unknown,
  ) => unknown;
  const start = machine.start.bind(machine) as (snapshot: unknown, scope: AnyActorScope) => void;
  /** Child runs created and not started yet, by actor. */
  const unstarted = new WeakMap<AnyActorRef, ChildRun>();
  wrap(machine, 'getInitialSnapshot', (scope: AnyActorScope, input: unknown) => {
    // xstate/graph and the path-test helpers call this with a stand-in root actor: not a run.
    const actor = scope.self;
    if (actor._parent !== undefined) {
      const observers = observersFor(undefined);
      if (observers.length > 0) {
        const run = new ChildRun(observers, agent, actor, input, reporting);
        unstarted.set(actor, run);
        watchChildRun(run);
      }
    }
    return initialSnapshot(scope, input);
  });
  wrap(machine, 'start', (snapshot: unknown, scope: AnyActorScope | undefined) => {
    const run = scope && unstarted.get(scope.self);
    if (run) {
      unstarted.delete(scope.self);
      guarded(() => run.start());
    }
    start(snapshot, scope as AnyActorScope);
  });
  return machine;
}

/** Replaces one method of this machine object only; not enumerable, so its data stays XState's. */
function wrap(machine: AnyStateMachine, method: 'getInitialSnapshot' | 'start', value: unknown) {
  Object.defineProperty(machine, method, {
    configurable: true,
    writable: true,
    enumerable: false,
    value,
  });
}

/** One child actor's run: started once, ended once. */
class ChildRun {
  readonly observation: RunObservation;
  readonly actor: AnyActorRef;
  readonly #input: unknown;
  readonly #reporting: ChildRunReporting;
  #end: ((end: ChildRunEnd) => void) | undefined;
  #ended = false;

  constructor(
    observers: ConstructorParameters<typeof RunObservation>[0],
    agent: ObservedAgent,
    actor: AnyActorRef,
    input: unknown,
    reporting: ChildRunReporting,
  ) {
    const { model } = agent;
    this.observation = new RunObservation(observers, {
      runId: randomUUID(),
      parentRunId: undefined,
      name: childRunName(agent.name, actor),
      kind: agent.kind,
      machine: agent.machine,
      ...(model && { model: { provider: model.provider, modelId: model.modelId } }),
      startTime: observedTime(),
    });
    this.actor = actor;
    this.#input = input;
    this.#reporting = reporting;
  }

  start(): void {
    if (this.#end) return;
    this.#end = this.#reporting.begin(this.actor, this.observation);
    this.observation.start(this.#reporting.runInput(this.#input));
  }

  end(end: ChildRunEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    this.start(); // an actor whose initial state threw ends without having started
    this.#end?.(end);
  }
}

/**
 * Reports the actor's snapshots and its end. A child created and stopped without starting
 * hears nothing here, and is no run at all; one whose machine reached a final state or
 * threw while starting is started by its first report.
 */
function watchChildRun(run: ChildRun): void {
  const { actor, observation } = run;
  // XState reports what a subscriber throws as an uncaught error: nothing may escape these.
  actor.subscribe({
    next: (snapshot) =>
      guarded(() => {
        run.start();
        observation.state(snapshot.value, snapshot.context);
      }),
    error: (error) =>
      guarded(() => run.end({ how: 'crashed', error, context: actor.getSnapshot().context })),
    complete: () =>
      guarded(() => {
        // Called after the final snapshot (status 'done'), or once stopped (status 'stopped').
        const snapshot = actor.getSnapshot();
        run.end(
          snapshot.status === 'done'
            ? { how: 'done', output: snapshot.output }
            : { how: 'stopped', context: snapshot.context },
        );
      }),
  });
}

function guarded(work: () => void): void {
  try {
    work();
  } catch (error) {
    reportOnce(
      guarded,
      'child run',
      'observing a chain or tool loop invoked by a machine failed; the machine goes on (later failures are not reported):',
      error,
    );
  }
}

/**
 * `chain:classify` for a chain invoked with the id `classify`: what tells an app's agents
 * apart when they share a name. XState's generated ids (a session id, `0.app.state`) say
 * nothing and are left out.
 */
function childRunName(name: string, actor: AnyActorRef): string {
  const { id } = actor;
  return !id || id === actor.sessionId || /^\d+\./.test(id) ? name : `${name}:${id}`;
}
