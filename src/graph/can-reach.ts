import type { AnyMachineSnapshot, AnyStateMachine, EventObject, SnapshotFrom } from 'xstate';
import type { Edge } from './machine-graph.js';
import type { PathTestOptions } from './path-tests.js';
import { stateName, stateNodePaths } from './state-nodes.js';
import { type GraphOptions, type Traversal, traverse } from './traversal.js';

// SPEC D3 for users' machines: is a state (or any snapshot a predicate picks) reachable
// under the events, child outcomes and delays offered? A breadth-first walk that stops at the
// first hit, so the witness is a shortest one and a hit needs only the graph up to it (a hit
// within the limits is a valid yes). Transient states count: each step's microsteps are
// checked too. A "no" holds only for what was offered and needs the whole graph within the
// limits; exceeding a limit is an error, never a "no".

/** A state value (`'done'`, `'review.waiting'`) or a predicate on snapshots. */
export type ReachTarget<S> = string | ((snapshot: S) => boolean);

export type ReachOptions<TMachine extends AnyStateMachine> = Omit<
  PathTestOptions<TMachine>,
  'paths'
>;

export interface ReachWitness<S> {
  /** The events from the start, in order. */
  readonly events: readonly EventObject[];
  /** `classify:done#1 → REJECT {"reason":"x"} ⇒ rejected` */
  readonly name: string;
  /** The events step by step, each with the state it leads to. */
  readonly steps: readonly { readonly event: string; readonly state: string }[];
  /** The snapshot that matched (may be a transient microstep). */
  readonly state: S;
}

export type ReachResult<S> =
  | { readonly reachable: true; readonly path: ReachWitness<S>; readonly explored: number }
  | { readonly reachable: false; readonly explored: number };

export function canReach<TMachine extends AnyStateMachine>(
  machine: TMachine,
  target: ReachTarget<SnapshotFrom<TMachine>>,
  options: NoInfer<ReachOptions<TMachine>> = {},
): ReachResult<SnapshotFrom<TMachine>> {
  return search(machine, target, options, 'canReach') as ReachResult<SnapshotFrom<TMachine>>;
}

/** Throws unless `target` is reachable; returns the shortest witness. */
export function assertCanReach<TMachine extends AnyStateMachine>(
  machine: TMachine,
  target: ReachTarget<SnapshotFrom<TMachine>>,
  options: NoInfer<ReachOptions<TMachine>> = {},
): ReachWitness<SnapshotFrom<TMachine>> {
  const result = search(machine, target, options, 'assertCanReach');
  if (!result.reachable) {
    throw new Error(
      `assertCanReach: ${describe(target)} is not reachable: explored ${result.explored} snapshots, all that the offered events, child outcomes and delays reach. If it should be, check what is offered: \`events\` (the events from outside, per snapshot), \`actors\` (each invoke's outputs and errors) and \`delays\`.`,
    );
  }
  return result.path as ReachWitness<SnapshotFrom<TMachine>>;
}

/** Throws with the shortest witness, step by step, if `target` is reachable. */
export function assertUnreachable<TMachine extends AnyStateMachine>(
  machine: TMachine,
  target: ReachTarget<SnapshotFrom<TMachine>>,
  options: NoInfer<ReachOptions<TMachine>> = {},
): { readonly explored: number } {
  const result = search(machine, target, options, 'assertUnreachable');
  if (result.reachable) {
    const { steps } = result.path;
    const lines = steps.map((s, i) => `  ${i + 1}. ${s.event} ⇒ ${s.state}`);
    throw new Error(
      [
        `assertUnreachable: ${describe(target)} is reachable in ${steps.length} event(s) (a shortest witness):`,
        ...(lines.length > 0 ? lines : [`  (at the start) ⇒ ${stateName(result.path.state)}`]),
      ].join('\n'),
    );
  }
  return { explored: result.explored };
}

function describe(target: ReachTarget<never>): string {
  return typeof target === 'string' ? `'${target}'` : target.name || 'the target predicate';
}

function search(
  machine: AnyStateMachine,
  target: ReachTarget<never>,
  options: object,
  caller: string,
): ReachResult<AnyMachineSnapshot> {
  if (typeof target === 'string' && !stateNodePaths(machine).includes(target)) {
    // A typo must not pass as "unreachable".
    throw new Error(
      `${caller}: the machine has no state '${target}'; its states: ${stateNodePaths(machine).join(', ')}.`,
    );
  }
  const isTarget =
    typeof target === 'string'
      ? (s: AnyMachineSnapshot) => s.matches(target)
      : (target as (s: AnyMachineSnapshot) => boolean);
  const t = traverse(machine, options as GraphOptions<AnyMachineSnapshot>, caller, isTarget);
  const { explored, hit } = t;
  return hit
    ? { reachable: true, path: witness(t, hit.path, hit.state), explored }
    : { reachable: false, explored };
}

function witness(
  t: Traversal<AnyMachineSnapshot>,
  path: readonly Edge<AnyMachineSnapshot, EventObject>[],
  state: AnyMachineSnapshot,
): ReachWitness<AnyMachineSnapshot> {
  const steps = path.map((edge, i) => ({
    event: t.events.name(edge.event),
    state: stateName(i === path.length - 1 ? state : edge.to),
  }));
  const events = steps.map((s) => s.event);
  return {
    events: path.map((edge) => edge.event),
    name: `${events.length > 0 ? events.join(' → ') : '(start)'} ⇒ ${stateName(state)}`,
    steps,
    state,
  };
}
