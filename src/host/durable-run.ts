import {
  type AnyActorRef,
  type AnyStateMachine,
  fromPromise,
  type OutputFrom,
  type PromiseActorLogic,
  type SnapshotFrom,
} from 'xstate';
import { ApprovalPendingError } from '../approvals/approval.js';
import { JournalCodecError } from '../durable/codec-error.js';
import { inputChanges } from '../durable/config-fields.js';
import type { RunKind } from '../durable/journal-entry.js';
import { JournalError } from '../durable/journal-error.js';
import { JournalMismatchError } from '../durable/journal-mismatch.js';
import { requestHash } from '../durable/request-hash.js';
import { type EffectOutcome, RunJournal } from '../durable/run-journal.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import { ConfigError, type PartialResult, type StatecraftError } from '../errors.js';
import { runActor } from './run-actor.js';
import type { RunRecorder } from './run-details.js';

/** Where a durable run keeps its journal, and under which id (invoke / stream options). */
export interface DurableRunOptions {
  /**
   * Makes the run durable: its journal is written to `store` under this id, and a process
   * that dies mid-run can resume it (`resume(runId, { store })`) without repeating a finished
   * model or tool call. Starting an id the store holds attaches to that run instead of
   * starting it twice. Letters, digits, `.`, `_` and `-`; at most 128.
   */
  readonly runId?: string;
  /** The journal store of a durable run (`fileStore(dir)`, `memoryStore()`); needs `runId`. */
  readonly store?: JournalStore;
}

/** A durable run's id and store, checked. */
export interface DurableRun {
  readonly runId: string;
  readonly store: JournalStore;
}

/** `runId` and `store` come together; either alone is a ConfigError naming the other. */
export function durableOptionsOf(options: DurableRunOptions, what: string): DurableRun | undefined {
  const { runId, store } = options;
  if (runId === undefined && store === undefined) return undefined;
  if (store === undefined) {
    throw new ConfigError('store', `${what}: runId needs a store to journal the run in`);
  }
  if (typeof store !== 'object' || store === null || typeof store.append !== 'function') {
    throw new ConfigError(
      'store',
      `${what}: store must be a JournalStore (fileStore(dir), memoryStore())`,
    );
  }
  if (runId === undefined) {
    throw new ConfigError('runId', `${what}: a store needs the runId to journal the run under`);
  }
  return { runId, store };
}

/**
 * The journal of a durable run that invoke() or stream() starts with `runId`: begun, or, when
 * the store already holds the id, reopened to attach to that run (replayed, and continued if
 * it had not ended). Attaching with another input than the run started with is a
 * JournalMismatchError, and lets the run go for another process to take.
 */
export async function openJournal(
  durable: DurableRun,
  kind: RunKind,
  input: unknown,
  config: unknown,
  fields: unknown = config,
): Promise<RunJournal> {
  const { runId, store } = durable;
  try {
    return await RunJournal.begin(store, { runId, kind, input, config, fields });
  } catch (error) {
    if (!(JournalError.isInstance(error) && error.reason === 'run-exists')) throw error;
  }
  const journal = await RunJournal.reopen(store, runId, kind, config, fields);
  const expected = requestHash(journal.input);
  const actual = requestHash(input);
  if (expected !== actual) {
    await journal.close();
    // The start entry holds the whole input: what differs can always be said.
    throw new JournalMismatchError({
      entry: 0,
      expectedHash: expected,
      actualHash: actual,
      request: `input of run '${runId}'`,
      changes: inputChanges(journal.input, input),
      advice: 'A run id starts one run: resume it, or use a new id for this input.',
    });
  }
  return journal;
}

/** A durable run going on in this process; `attached`: someone else started it. */
export interface LiveRun<Output> {
  readonly ended: Promise<{ readonly output: Output; readonly recorder: RunRecorder }>;
  readonly attached: boolean;
}

/**
 * The durable runs going on in this process, by store and id: starting or resuming one of
 * them again attaches to it (one writer per journal) instead of running it twice.
 */
export class LiveRuns<Output> {
  readonly #runs = new WeakMap<JournalStore, Map<string, LiveRun<Output>>>();

  run(
    durable: DurableRun,
    start: () => Promise<{ readonly output: Output; readonly recorder: RunRecorder }>,
  ): LiveRun<Output> {
    let runs = this.#runs.get(durable.store);
    const running = runs?.get(durable.runId);
    if (running) return { ended: running.ended, attached: true };
    if (!runs) {
      runs = new Map();
      this.#runs.set(durable.store, runs);
    }
    const live = { ended: start(), attached: false };
    const forget = () => {
      if (runs.get(durable.runId) === live) runs.delete(durable.runId);
    };
    runs.set(durable.runId, live);
    live.ended.then(forget, forget);
    return live;
  }
}

/** The event type XState sends when `delay` fires in `machine` (`xstate.after.<delay>.<id>`). */
export function delayedEventType(machine: AnyStateMachine, delay: string): string {
  const pending = [machine.root];
  for (let node = pending.pop(); node; node = pending.pop()) {
    for (const transition of node.after) {
      if (transition.delay === delay) return transition.eventType;
    }
    pending.push(...Object.values(node.states));
  }
  throw new Error(`delayedEventType: the machine has no delay named '${delay}'`);
}

/** A request of a durable run its journal lets run live (its request journaled first). */
export type LiveEffect = Extract<EffectOutcome, { kind: 'live' }>;
/** A request its journal answers: the effect finished before the process died. */
export type ReplayedEffect = Extract<EffectOutcome, { kind: 'replayed' }>;
/** A request ABORT or the deadline stopped while it was in flight. */
export type HeldEffect = Extract<EffectOutcome, { kind: 'held' }>;

/** How one run host performs and replays its effects (chain and tool loop each have one). */
export interface JournaledEffects<
  Request extends { readonly type: string; readonly input: unknown },
> {
  readonly journal: RunJournal;
  readonly kind: RunKind;
  /** Sends the machine an event (the effects actor's `sendBack`). */
  readonly sendBack: (event: { readonly type: string; readonly reason?: string }) => void;
  /** The event of the run's deadline (see delayedEventType). */
  readonly timerEvent: string;
  /** How a mismatch names the request: `model call`, `tool step`… */
  describe(request: Request): string;
  /** Delivers a finished effect's journaled answers (and records it for details()). */
  replay(request: Request, outcome: ReplayedEffect): void;
  /** Delivers what a held effect had told the machine before the stop (its finished calls). */
  held?(request: Request, outcome: HeldEffect): void;
  /** Runs the effect (journaling its request first; see RunJournal.requested). */
  live(request: Request, outcome: LiveEffect): void;
}

/**
 * One request of a durable run's machine, decided by its journal: replayed, held (ABORT or
 * the deadline reached the journaled run while it was in flight: that is delivered
 * instead), or run live. On a mismatch nothing is delivered; the run host ends the run with
 * `journal.mismatch`.
 */
export function performJournaled<
  Request extends { readonly type: string; readonly input: unknown },
>(effects: JournaledEffects<Request>, request: Request): void {
  const outcome = effects.journal.request(request.type, request.input, effects.describe(request));
  if (outcome === undefined) return;
  switch (outcome.kind) {
    case 'replayed':
      effects.replay(request, outcome);
      return;
    case 'live':
      effects.live(request, outcome);
      return;
    case 'held': {
      const { external } = outcome;
      // The calls of a tool step that finished before the stop reached the machine first.
      effects.held?.(request, outcome);
      effects.sendBack(
        external.type === 'abort'
          ? { type: 'ABORT', ...(external.reason !== undefined && { reason: external.reason }) }
          : { type: effects.timerEvent },
      );
      return;
    }
  }
}

/**
 * runActor for a durable run: its ABORT is journaled before the machine gets it, and a replay
 * that disagrees with the journal ends the run with the JournalMismatchError (the machine is
 * left waiting for an answer no one will give; the caller stops it).
 */
export function runJournaled<A extends AnyActorRef>(
  actor: A,
  journal: RunJournal,
  options: {
    readonly signal?: AbortSignal | undefined;
    readonly onSnapshot?: ((snapshot: SnapshotFrom<A>) => void) | undefined;
  },
): Promise<OutputFrom<A>> {
  const mismatch = new Promise<never>((_, reject) => journal.onMismatch(reject));
  const parked = new Promise<never>((_, reject) => journal.onParked(reject));
  // A write that failed (a full disk, a stalled store): nothing more can be journaled.
  const failed = new Promise<never>((_, reject) => journal.onFailed(reject));
  journal.bindRun(options.signal);
  return Promise.race([
    runActor(actor, { ...options, beforeAbort: (reason) => journal.aborted(reason) }),
    mismatch,
    parked,
    failed,
  ]);
}

/**
 * An error of the journal itself (not of the run), or a run parked until people decide: it
 * ends the run in this process as it is, with no output.
 */
export function isJournalProblem(error: unknown): boolean {
  return (
    JournalError.isInstance(error) ||
    JournalCodecError.isInstance(error) ||
    JournalMismatchError.isInstance(error) ||
    ApprovalPendingError.isInstance(error)
  );
}

/** A JournalError of the store itself (its disk, its permissions, its time): not of the run. */
export function isStoreFault(error: unknown): boolean {
  if (!JournalError.isInstance(error)) return false;
  return STORE_FAULTS.has(error.reason);
}

const STORE_FAULTS: ReadonlySet<string> = new Set([
  'no-space',
  'no-permission',
  'too-large',
  'timed-out',
  'store-failed',
]);

/**
 * A journal problem as the run's caller gets it: a store's fault or a value the journal
 * cannot hold carries the run as it was when it stopped (`partial`), like any failed run; a
 * mismatch or a park does not (the run is not over, only this process's part of it).
 */
export function withPartialRun(error: unknown, partial: () => PartialResult): unknown {
  const carries = JournalError.isInstance(error) || JournalCodecError.isInstance(error);
  if (!carries || (error as StatecraftError).partial !== undefined) return error;
  try {
    Object.defineProperty(error, 'partial', { value: partial(), enumerable: true });
  } catch {
    // The run's state could not be reported: the error alone.
  }
  return error;
}

/** Milliseconds since `startedAt` (a `performance.now()` time), to a tenth; undefined without one. */
export function elapsedMs(startedAt: number | undefined): number | undefined {
  return startedAt === undefined
    ? undefined
    : Math.round((performance.now() - startedAt) * 10) / 10;
}

/**
 * XState restarts a machine's effects host when it restores a snapshot, but does not run again
 * the entry action that sent the request the machine is waiting for: restored in the middle
 * of a run, a chain or tool loop would wait forever. A host asked nothing while it starts,
 * under a machine resting in a state (every resting state waits for an effect), was restored
 * so: it ends the run with an ABORT that says how to make such runs survive restarts.
 */
export function refuseRestoredRun(
  self: AnyActorRef,
  asked: () => boolean,
  sendBack: (event: { readonly type: 'ABORT'; readonly reason: string }) => void,
  what: 'chain' | 'tool loop',
): void {
  const parent = self._parent;
  if (!parent) return;
  // A fresh run's first request reaches its host while the host starts, before this.
  queueMicrotask(() => {
    if (asked()) return;
    const snapshot = parent.getSnapshot() as { status?: string; value?: unknown };
    if (snapshot.status !== 'active') return;
    sendBack({ type: 'ABORT', reason: restoredMidRun(what, stateValueText(snapshot.value)) });
  });
}

function restoredMidRun(what: 'chain' | 'tool loop', state: string): string {
  const name = what === 'chain' ? 'chain' : 'loop';
  return (
    `the ${what} was restored from a snapshot in the middle of a run (state '${state}'), and ` +
    'XState does not send again the request it was waiting for. A run that must survive ' +
    `restarts is a durable run: invoke \`${name}.durable(store)\` with input { runId, input } ` +
    'instead of its machine; restoring re-invokes it, and it resumes from its journal ' +
    'without repeating a finished call'
  );
}

function stateValueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value !== 'object' || value === null) return String(value);
  return Object.entries(value as Record<string, unknown>)
    .map(([key, inner]) => {
      const rest = stateValueText(inner);
      return rest ? `${key}.${rest}` : key;
    })
    .join(', ');
}

/** What an app's machine gives the actor of `chain.durable(store)` / `loop.durable(store)`. */
export interface DurableActorInput<RunInput> {
  /** The run's id in the store: the same id on every restore, so the run resumes. */
  readonly runId: string;
  readonly input: RunInput;
}

/**
 * A promise actor that runs `input.input` as the durable run `input.runId`. XState re-invokes
 * a promise actor when it restores a snapshot; the journal makes that harmless: the run
 * attaches to what it had done (replayed, not repeated) and goes on.
 *
 * One failure path into app machines: `start` resolves with the run's machine output, a
 * failed run included (`status: 'failed'`, its journal ended), exactly as the kind's machine
 * invoked directly would end. It rejects only where this process could not bring the run to
 * an end, and the run may still be resumed: input it cannot start (ConfigError, InputError),
 * a journal that cannot be opened, written or read (JournalError, JournalCodecError), one
 * that disagrees with the run (JournalMismatchError), a run held by another writer, or one
 * parked until people decide (ApprovalPendingError). The same rule for chains and loops.
 */
export function durableActor<RunInput, Result>(
  what: string,
  start: (input: RunInput, runId: string, signal: AbortSignal) => Promise<Result>,
): PromiseActorLogic<Result, DurableActorInput<RunInput>> {
  return fromPromise<Result, DurableActorInput<RunInput>>(({ input, signal }) => {
    if (typeof input !== 'object' || input === null || typeof input.runId !== 'string') {
      throw new ConfigError(
        'input',
        `${what}.durable(store): invoke it with input { runId: string, input }`,
      );
    }
    return start(input.input, input.runId, signal);
  });
}

/**
 * Where a machine's delay finds its durable run's journal, so a deadline counts from the
 * journaled start across restarts. By the run's own config object, which the machine's
 * context holds: a delay sees only its context, and XState computes the root's delays while
 * it creates the actor, before the run could be registered by its actor system.
 */
export class RunDeadlines {
  readonly #journals = new WeakMap<object, RunJournal>();

  /** A copy of `config` for one durable run, whose delays count from its journal's start. */
  configFor<Config extends object>(config: Config, journal: RunJournal): Config {
    const own = { ...config };
    this.#journals.set(own, journal);
    return own;
  }

  /** Milliseconds until `limitMs`: from the journaled start for a durable run, else from now. */
  delay(config: object, limitMs: number): number {
    const journal = this.#journals.get(config);
    return journal ? journal.remaining(limitMs) : limitMs;
  }
}
