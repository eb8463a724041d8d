import { type AnyActorRef, type CallbackActorLogic, type EventObject, fromCallback } from 'xstate';
import type { RunKind } from '../durable/journal-entry.js';
import type { RunJournal } from '../durable/run-journal.js';
import { throwIfAborted } from '../errors.js';
import {
  elapsedMs,
  type HeldEffect,
  type JournaledEffects,
  type LiveEffect,
  performJournaled,
  type ReplayedEffect,
  refuseRestoredRun,
} from './durable-run.js';
import type { AnyActorSystem } from './run-registry.js';

// A run's machine invokes one actor for all its effects: it performs each effect the machine
// requests and answers with its `.done` / `.error` event. What is the same for every kind is
// here: finding the run's resources, refusing a run restored mid-way, journaling a durable
// run's requests (replayed, held or live) and answers. What an effect does, and what
// `cancel` stops, is the kind's (chain/effects.ts, tool-loop/effects.ts).

/** A machine's effect request: `cancel`, or an effect with its input. */
export type EffectRequest = { readonly type: string } & EventObject;
/**
 * The effects a machine asks for: every request but `cancel` and `decide`, which are not
 * effects but orders about those in flight (stop them; run or refuse a call that waited for
 * approval, SPEC H2).
 */
export type EffectOf<Request extends EffectRequest> = Exclude<
  Request,
  { type: 'cancel' } | { type: 'decide' }
>;
type Cancel<Request extends EffectRequest> = Extract<Request, { type: 'cancel' }>;
type Decide<Request extends EffectRequest> = Extract<Request, { type: 'decide' }>;

/** What one effects actor does for its run; the kind makes it as the actor starts. */
export interface EffectsSession<Request extends EffectRequest> {
  /** A durable run's journal: its requests go through it. */
  readonly journal: RunJournal | undefined;
  /** Sends the machine an event; what the journal replays or holds goes through it too. */
  send(event: EventObject): void;
  /** The machine cancels what is in flight (a deadline, an ABORT). */
  cancel(request: Cancel<Request>): void;
  /** The machine took a decision on a call that waits for one (SPEC H2). */
  decide?(request: Decide<Request>): void;
  /** Runs an effect; `live` is a durable run's, whose request and answer are journaled. */
  perform(request: EffectOf<Request>, live?: LiveEffect): void;
  /** Delivers a finished effect's journaled answers (and records it for details()). */
  replay(request: EffectOf<Request>, outcome: ReplayedEffect): void;
  /** Delivers what a held effect had told the machine before ABORT or the deadline stopped it. */
  held?(request: EffectOf<Request>, outcome: HeldEffect): void;
  /** The actor stops: its run ended, or the machine that invoked it moved on. */
  stop(): void;
}

/** A kind's effects: what a mismatch calls each, and the session of each actor. */
export interface EffectsKind<Request extends EffectRequest, Resources> {
  /** `model call`, `tool step`…: how a journal mismatch names a request. */
  readonly names: { readonly [Type in EffectOf<Request>['type']]: string };
  open(run: Resources, sendBack: (event: EventObject) => void): EffectsSession<Request>;
}

/** What an effects actor needs of its run host. */
export interface EffectsHost<Resources> {
  /** How messages call the kind: `chain`, `tool loop`. */
  readonly noun: 'chain' | 'tool loop';
  readonly journalKind: RunKind;
  /** The event of the run's deadline, as a journal replays its firing. */
  readonly timerEvent: string;
  resourcesOf(system: AnyActorSystem, self: AnyActorRef): Resources;
}

/** The effects actor of a kind's machine, its session made from the run's resources. */
export function effectsActor<Request extends EffectRequest, Resources>(
  host: EffectsHost<Resources>,
  kind: EffectsKind<Request, Resources>,
): CallbackActorLogic<Request> {
  return fromCallback<Request>(({ sendBack, receive, system, self }) => {
    const session = kind.open(host.resourcesOf(system, self), sendBack);
    const { journal } = session;
    // A deadline that passed while no process ran the run fires before any live effect.
    journal?.onOverdue(() => session.send({ type: host.timerEvent }));
    let asked = false;
    refuseRestoredRun(self, () => asked, sendBack, host.noun);
    const journaled: JournaledEffects<EffectOf<Request> & { input: unknown }> | undefined =
      journal && {
        journal,
        kind: host.journalKind,
        sendBack: (event) => session.send(event),
        timerEvent: host.timerEvent,
        describe: (request) => kind.names[request.type as EffectOf<Request>['type']],
        live: (request, outcome) => session.perform(request, outcome),
        replay: (request, outcome) => session.replay(request, outcome),
        held: (request, outcome) => session.held?.(request, outcome),
      };
    receive((request) => {
      asked = true;
      if (request.type === 'cancel') return session.cancel(request as Cancel<Request>);
      if (request.type === 'decide') return session.decide?.(request as Decide<Request>);
      if (journaled) {
        return performJournaled(journaled, request as EffectOf<Request> & { input: unknown });
      }
      return session.perform(request as EffectOf<Request>);
    });
    return () => session.stop();
  });
}

/**
 * How an effects actor answers the machine. Each effect runs and is answered with its
 * `<type>.done` or `<type>.error` event. A durable run's live effect journals its request
 * first, and its answer as it is delivered: the journal's order is the order the machine saw.
 */
export class EffectAnswers<Event> {
  readonly #journal: RunJournal | undefined;
  readonly #journaled: (event: Event) => unknown;
  readonly #send: (event: Event) => void;

  /** `journaled`: an answer as journaled (results journaled call by call are left out of it). */
  constructor(
    journal: RunJournal | undefined,
    journaled: (event: Event) => unknown,
    send: (event: Event) => void,
  ) {
    this.#journal = journal;
    this.#journaled = journaled;
    this.#send = send;
  }

  /**
   * Runs `work` under `signal` and answers with its outcome. The signal also stops it from
   * starting once its request is journaled; an answer `deliverable` refuses (the machine no
   * longer waits for it) is neither journaled nor sent.
   */
  answer(
    type: string,
    work: (signal: AbortSignal) => Promise<unknown>,
    signal: AbortSignal,
    live: LiveEffect | undefined,
    deliverable: (signal: AbortSignal) => boolean,
  ): void {
    const journal = this.#journal;
    const startedAt = live && performance.now();
    const settle = (event: Event) => {
      if (!deliverable(signal)) return;
      if (live && journal) {
        journal.answered(live.seq, this.#journaled(event), elapsedMs(startedAt));
      }
      this.#send(event);
    };
    let started: Promise<unknown>;
    try {
      started =
        live && journal
          ? journal.requested(live, type).then(() => {
              // A deadline already past fires first, and cancels this effect if it counts.
              journal.deliverOverdueDeadline();
              // Stopped or cancelled while its request was written: it does not start.
              throwIfAborted(signal);
              return work(signal);
            })
          : work(signal);
    } catch (error) {
      started = Promise.reject(error);
    }
    started.then(
      (output) => settle({ type: `${type}.done`, output } as Event),
      (error: unknown) => settle({ type: `${type}.error`, error } as Event),
    );
  }
}
