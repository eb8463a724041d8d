import { createRequire } from 'node:module';
import {
  type AnyActorScope,
  type AnyMachineSnapshot,
  type AnyTransitionDefinition,
  createActor,
  createMachine,
  type EventObject,
  type ExecutableActionObject,
  fromCallback,
} from 'xstate';

// Every XState internal the path tests rely on, in one place. XState's public API has no way
// to run a macrostep and learn which transitions each microstep took (coverage needs them),
// nor to ask a running actor which delayed events it has pending (a replay ends exactly one
// timer per `after` step). What is used, and where:
// - an actor scope of our own for `machine.transition` / `getInitialSnapshot` (as xstate's
//   own pure `transition()` builds one), whose system reports `@xstate.microstep` events;
// - the `_transitions` of those events;
// - the `xstate.raise` / `xstate.cancel` actions the scope's action executor receives
//   (the same objects `transition()` returns): their params say which timers start and stop;
// - `system.getSnapshot()._scheduledEvents` of a real actor, in replays.
// checkXStateSupport() runs a tiny machine through all of them once, before first use, so a
// future xstate that changes them fails with one clear error instead of wrong results.

/** The installed xstate's version, for error messages. */
export function xstateVersion(): string {
  try {
    const pkg = createRequire(import.meta.url)('xstate/package.json') as { version?: unknown };
    return String(pkg.version);
  } catch {
    return '(unknown version)';
  }
}

export interface ScopeHooks {
  /** A microstep the machine took, with the transitions it took in it. */
  readonly microstep: (
    snapshot: AnyMachineSnapshot,
    transitions: AnyTransitionDefinition[],
  ) => void;
  /** An action the machine would execute (none is: the scope is inert). */
  readonly action: (action: ExecutableActionObject) => void;
}

/**
 * An inert actor scope (nothing starts, nothing runs) that reports every microstep and
 * every action: what xstate's pure `transition()` uses, plus the reports.
 */
export function tracingScope(hooks: ScopeHooks): AnyActorScope {
  // Not an actor of `machine`: creating one would start the machine, and a start that never
  // comes to rest would hang here instead of failing in the traced run below.
  const self = createActor(fromCallback(() => {}));
  self.system.inspect((event) => {
    if (event.type !== '@xstate.microstep') return;
    hooks.microstep(event.snapshot as AnyMachineSnapshot, microstepTransitions(event));
  });
  return {
    self,
    id: '',
    sessionId: '',
    logger: () => {},
    defer: () => {},
    emit: () => {},
    stopChild: () => {},
    system: self.system,
    actionExecutor: (action: ExecutableActionObject) => hooks.action(action),
  } as unknown as AnyActorScope;
}

/** The transitions of a `@xstate.microstep` inspection event. */
export function microstepTransitions(event: object): AnyTransitionDefinition[] {
  const transitions = (event as { _transitions?: unknown })._transitions;
  return Array.isArray(transitions) ? (transitions as AnyTransitionDefinition[]) : [];
}

/** A timer a `raise(event, { delay })` (every `after`) starts, from the action's params. */
export interface TimerStart {
  readonly sendId: string;
  readonly event: EventObject;
  readonly delay: number;
}

/** What an action does to timers: starts one, cancels one, or nothing. */
export function timerEffect(
  action: ExecutableActionObject,
): { readonly start: TimerStart } | { readonly cancel: string } | undefined {
  const params = action.params as Record<string, unknown> | undefined;
  if (action.type === 'xstate.raise' && typeof params?.delay === 'number') {
    const event = params.event as EventObject;
    return { start: { sendId: String(params.id ?? event.type), event, delay: params.delay } };
  }
  if (action.type === 'xstate.cancel' && typeof params?.sendId === 'string') {
    return { cancel: params.sendId };
  }
  return undefined;
}

/** One delayed event a real actor system has pending. */
export interface ScheduledEvent {
  readonly event: EventObject;
  readonly delay: number;
  readonly target: unknown;
}

/** What is read of an actor system: its snapshot. */
export interface ActorSystemLike {
  getSnapshot(): unknown;
}

/** The delayed events a real actor system has pending (an internal of xstate's scheduler). */
export function scheduledEvents(system: ActorSystemLike): ScheduledEvent[] {
  const snapshot = system.getSnapshot() as { _scheduledEvents?: Record<string, ScheduledEvent> };
  return Object.values(snapshot._scheduledEvents ?? {});
}

let supported = false;

/**
 * Throws a clear error, naming the installed xstate version, when something listed above is
 * missing. Runs the probe once; `probe` is replaceable for this function's own test.
 */
export function checkXStateSupport(probe: () => string[] = probeXState): void {
  if (supported && probe === probeXState) return;
  const missing = probe();
  if (missing.length > 0) {
    throw new Error(
      `statecraft/testing: the installed xstate ${xstateVersion()} lacks what path tests rely on: ${missing.join('; ')}. These are XState internals (statecraft/testing is built against xstate 5.33): install a 5.x version that has them, or report this with the version.`,
    );
  }
  if (probe === probeXState) supported = true;
}

function probeXState(): string[] {
  const missing: string[] = [];
  const machine = createMachine({
    id: 'probe',
    initial: 'a',
    states: { a: { always: 'b' }, b: { after: { 10: 'c' } }, c: {} },
  });
  const after = 'xstate.after.10.probe.b';
  const seen: AnyTransitionDefinition[][] = [];
  const actions: ExecutableActionObject[] = [];
  try {
    const scope = tracingScope({
      microstep: (_, transitions) => seen.push(transitions),
      action: (action) => actions.push(action),
    });
    const start = machine.getInitialSnapshot(scope, undefined);
    machine.transition(start, { type: after }, scope);
  } catch (error) {
    return [`running a machine on an actor scope of its own (${String(error)})`];
  }
  if (!seen.some((transitions) => transitions.length === 1)) {
    missing.push('`_transitions` on @xstate.microstep inspection events');
  }
  const effects = actions.map(timerEffect);
  if (!effects.some((e) => e && 'start' in e && e.start.event.type === after)) {
    missing.push('`after` timers as xstate.raise actions with { event, id, delay } params');
  }
  if (!effects.some((e) => e && 'cancel' in e && e.cancel === after)) {
    missing.push('xstate.cancel actions with { sendId } params');
  }
  const actor = createActor(machine, { clock: { setTimeout: () => 0, clearTimeout: () => {} } });
  actor.start();
  const pending = scheduledEvents(actor.system);
  actor.stop();
  if (!pending.some((s) => s.event?.type === after && s.delay === 10 && s.target === actor)) {
    missing.push('`system.getSnapshot()._scheduledEvents` of a running actor');
  }
  return missing;
}
