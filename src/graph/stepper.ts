import {
  type AnyActorScope,
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type AnyTransitionDefinition,
  type EventObject,
  type ExecutableActionObject,
  getInitialMicrosteps,
} from 'xstate';
import { TraversalLimitError } from './limits.js';
import { stateName } from './state-nodes.js';
import { checkXStateSupport, tracingScope } from './xstate-internals.js';

// One macrostep of a machine, as xstate's pure `transition` runs it (nothing starts, nothing
// runs), plus what `transition` does not return and the graph needs: every microstep on the
// way (transient `always` states exist only there), the transitions each took (coverage), and
// the actions (which timers start and stop). A macrostep that does not come to rest within
// limits.maxMicrosteps is an error, not a hang.

export interface Macrostep<S> {
  /** Where the machine rests. */
  readonly snapshot: S;
  /** The snapshots on the way, transient ones included, ending at `snapshot`. */
  readonly microsteps: readonly S[];
  /** The transitions taken, in microstep order; empty when the event is unhandled. */
  readonly transitions: readonly AnyTransitionDefinition[];
  /** The actions the machine would execute, in order. */
  readonly actions: readonly ExecutableActionObject[];
}

export class Stepper<S extends AnyMachineSnapshot> {
  readonly machine: AnyStateMachine;
  readonly input: unknown;
  readonly #maxMicrosteps: number;
  readonly #caller: string;
  readonly #scope: AnyActorScope;
  #microsteps: S[] = [];
  #transitions: AnyTransitionDefinition[] = [];
  #actions: ExecutableActionObject[] = [];
  #where = '';
  /** The limit error the inspection hook threw: xstate turns errors of a start into data. */
  #endlessError: TraversalLimitError | undefined;

  constructor(machine: AnyStateMachine, input: unknown, maxMicrosteps: number, caller: string) {
    checkXStateSupport();
    this.machine = machine;
    this.input = input;
    this.#maxMicrosteps = maxMicrosteps;
    this.#caller = caller;
    this.#scope = tracingScope({
      microstep: (snapshot, transitions) => {
        this.#microsteps.push(snapshot as S);
        this.#transitions.push(...transitions);
        if (this.#microsteps.length > this.#maxMicrosteps) {
          this.#endlessError = this.#endless(snapshot);
          throw this.#endlessError;
        }
      },
      action: (action) => this.#actions.push(action),
    });
  }

  /** Starting the machine. */
  initial(): Macrostep<S> {
    this.#reset('the start');
    const snapshot = this.machine.getInitialSnapshot(this.#scope, this.input) as S;
    if (this.#endlessError) throw this.#endlessError;
    // The first microstep of a start is not reported to inspection: take them all from
    // getInitialMicrosteps (safe now: the start came to rest above).
    const microsteps = getInitialMicrosteps(this.machine, this.input).map(([s]) => s as S);
    return { snapshot, microsteps, transitions: this.#transitions, actions: this.#actions };
  }

  /** `event` in `from`; `eventName` names it in the error for a macrostep that never rests. */
  step(from: S, event: EventObject, eventName: string): Macrostep<S> {
    this.#reset(`${eventName} in ${stateName(from)}`);
    const snapshot = this.machine.transition(from, event, this.#scope) as S;
    if (this.#endlessError) throw this.#endlessError;
    return {
      snapshot,
      microsteps: this.#microsteps,
      transitions: this.#transitions,
      actions: this.#actions,
    };
  }

  #reset(where: string): void {
    this.#microsteps = [];
    this.#transitions = [];
    this.#actions = [];
    this.#where = where;
    this.#endlessError = undefined;
  }

  #endless(snapshot: AnyMachineSnapshot): TraversalLimitError {
    const max = this.#maxMicrosteps;
    return new TraversalLimitError(
      'maxMicrosteps',
      `${this.#caller}: limits.maxMicrosteps (${max}) exceeded: ${this.#where} does not come to rest: after ${max} microsteps it is in ${stateName(snapshot)}. An \`always\` transition (or a raised event) cycles without a guard that ends it: fix the machine, or raise limits.maxMicrosteps if it really takes that many steps.`,
    );
  }
}
