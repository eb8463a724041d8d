import type { ActorSystem, AnyActorRef } from 'xstate';
import type { RunRecorder } from './run-details.js';

// biome-ignore lint/suspicious/noExplicitAny: any actor system, whatever its actors.
export type AnyActorSystem = ActorSystem<any>;

/**
 * Where a run's effects actor finds what the run owns besides its JSON context. A run that
 * invoke(), stream() or resume() starts is found by its actor system: the run host creates
 * its resources and registers them before the machine starts. A run an app's machine invokes
 * has no run host around it; while someone observes runs (SPEC R5, X4) its recorder is found
 * by its actor, the parent of the effects actor, and the kind makes the rest from it.
 */
export class RunRegistry<Resources> {
  readonly #runs = new WeakMap<AnyActorSystem, Resources>();
  /** The recorders of runs an app's machine invoked, by the run's actor. */
  readonly #childRecorders = new WeakMap<AnyActorRef, RunRecorder>();

  register(system: AnyActorSystem, resources: Resources): void {
    this.#runs.set(system, resources);
  }

  /** An observed run an app's machine invoked starts, before the actors it invokes. */
  registerChild(actor: AnyActorRef, recorder: RunRecorder): void {
    this.#childRecorders.set(actor, recorder);
  }

  forgetChild(actor: AnyActorRef): void {
    this.#childRecorders.delete(actor);
  }

  /**
   * The resources of the run whose effects actor is `self`: registered for its system, or
   * made by `ownResources` from the recorder of the observed run its parent is (undefined
   * when nobody observes it).
   */
  find(
    system: AnyActorSystem,
    self: AnyActorRef,
    ownResources: (recorder: RunRecorder | undefined) => Resources,
  ): Resources {
    const registered = this.#runs.get(system);
    if (registered !== undefined) return registered;
    return ownResources(self._parent && this.#childRecorders.get(self._parent));
  }
}
