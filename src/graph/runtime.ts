import type { AnyMachineSnapshot, EventObject } from 'xstate';
import type { Macrostep } from './stepper.js';
import { timerEffect } from './xstate-internals.js';

// What a running actor knows and its snapshot does not: which `after` timers are pending and
// when each ends, and which invoked children have already answered (a child that finished
// while its state stays active is still in `snapshot.children`, in a real actor as after
// xstate's pure `transition`). A traversal carries it along every edge, and it is part of a
// vertex's identity: the same snapshot with other timers pending has other next events.
//
// Time. Within a run of `after` events the clock is known: each moves it to its timer's end.
// An event from outside or a child's answer comes after an unknown wait, so it opens a new
// epoch (later epochs have waited at least as long); a timer firing returns to the epoch it
// was set in. Timer T surely ends before U when T was set in the same or an earlier epoch and
// ends no later in known time (ties: the one set first fires first, as timers do). Only
// timers that nothing surely precedes are offered: `after: { 1000, 5000 }` offers only 1000;
// a timer set before an outside event and one set after it may each end first.

export interface PendingTimer {
  /** The raise action's id (for `after`, the event type), which `cancel` names. */
  readonly sendId: string;
  readonly eventType: string;
  readonly delay: number;
  /** When it ends, in the known time of its epoch. */
  readonly due: number;
  readonly epoch: number;
  /** The order timers were set in. */
  readonly seq: number;
}

export interface Runtime {
  /** Known time in the current epoch. */
  readonly now: number;
  readonly epoch: number;
  /** The newest epoch opened so far. */
  readonly lastEpoch: number;
  readonly seq: number;
  /** In the order they were set. */
  readonly timers: readonly PendingTimer[];
  /** Invoke id → the child (actor ref in `snapshot.children`) that has answered. */
  readonly settled: ReadonlyMap<string, unknown>;
}

const START: Runtime = { now: 0, epoch: 0, lastEpoch: 0, seq: 0, timers: [], settled: new Map() };

/** Only `after` timers are modelled: they are the delayed events a traversal offers. */
const isAfter = (type: string) => type.startsWith('xstate.after.');

/** The runtime after `event` took `step` from `from` (no `from`: the start). */
export function nextRuntime(
  prev: Runtime | undefined,
  from: AnyMachineSnapshot | undefined,
  event: EventObject,
  step: Macrostep<AnyMachineSnapshot>,
): Runtime {
  const before = prev ?? START;
  const fired = isAfter(event.type)
    ? before.timers.find((t) => t.eventType === event.type)
    : undefined;
  const answered = /^xstate\.(done|error)\.actor\./.test(event.type)
    ? (event as { actorId?: unknown }).actorId
    : undefined;
  // An event that changed nothing (unhandled) is as if it never came: time may pass anyway.
  const noOp = !fired && answered === undefined && step.transitions.length === 0;
  const opens = !fired && !noOp && from !== undefined;
  const now = fired ? fired.due : before.now;
  const lastEpoch = opens ? before.lastEpoch + 1 : before.lastEpoch;
  const epoch = fired ? fired.epoch : opens ? lastEpoch : before.epoch;
  let seq = before.seq;
  let timers = before.timers.filter((t) => t !== fired);
  for (const action of step.actions) {
    const effect = timerEffect(action);
    if (!effect) continue;
    if ('cancel' in effect) {
      timers = timers.filter((t) => t.sendId !== effect.cancel);
      continue;
    }
    const { sendId, event: raised, delay } = effect.start;
    if (!isAfter(raised.type)) continue;
    timers = timers.filter((t) => t.sendId !== sendId);
    timers.push({ sendId, eventType: raised.type, delay, due: now + delay, epoch, seq: seq++ });
  }
  const to = step.snapshot;
  // A machine that stopped (done, error) cancels its timers and stops its children.
  if (to.status !== 'active') {
    return { now, epoch, lastEpoch, seq, timers: [], settled: new Map() };
  }

  const settled = new Map<string, unknown>();
  for (const [id, child] of before.settled) {
    if (to.children[id] === child) settled.set(id, child);
  }
  if (typeof answered === 'string' && from) {
    const child = from.children[answered];
    // Still the same child in `to`: its state stayed active, and the child is finished.
    if (child && to.children[answered] === child) settled.set(answered, child);
  }
  return { now, epoch, lastEpoch, seq, timers, settled };
}

/** The timers that may fire next: those no other pending timer surely precedes. */
export function firstTimers(runtime: Runtime): PendingTimer[] {
  const { timers } = runtime;
  return timers.filter(
    (t) =>
      !timers.some(
        (u) =>
          u !== t && u.epoch <= t.epoch && (u.due < t.due || (u.due === t.due && u.seq < t.seq)),
      ),
  );
}

/** The invoked children still running in `snapshot`: started and not yet answered. */
export function runningChildren(
  snapshot: AnyMachineSnapshot,
  runtime: Runtime,
  invokeIds: ReadonlySet<string>,
): string[] {
  if (snapshot.status !== 'active') return [];
  return Object.keys(snapshot.children)
    .filter((id) => invokeIds.has(id) && snapshot.children[id] && !runtime.settled.has(id))
    .sort();
}

/**
 * The part of the runtime that decides what can happen next, as a canonical text ('' when
 * nothing is pending or settled): each timer's time left and the order of the epochs it and
 * the present belong to, and the settled children. Equal texts, equal futures.
 */
export function runtimeKey(runtime: Runtime): string {
  if (runtime.timers.length === 0 && runtime.settled.size === 0) return '';
  const epochs = [...new Set([...runtime.timers.map((t) => t.epoch), runtime.epoch])].sort(
    (a, b) => a - b,
  );
  const timers = runtime.timers.map(
    (t) => `${t.eventType}:${t.due - runtime.now}:${epochs.indexOf(t.epoch)}`,
  );
  return JSON.stringify([
    timers,
    epochs.indexOf(runtime.epoch),
    [...runtime.settled.keys()].sort(),
  ]);
}

/** The runtime in words, for a vertex whose snapshot also rests with another runtime. */
export function describeRuntime(runtime: Runtime, timerName: (type: string) => string): string {
  const parts = [
    ...runtime.timers.map((t) => `${timerName(t.eventType)} due in ${t.due - runtime.now} ms`),
    ...[...runtime.settled.keys()].sort().map((id) => `${id} answered`),
  ];
  return parts.join(', ') || 'nothing pending';
}
