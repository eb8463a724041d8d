import { expect } from 'vitest';
import { type Actor, createActor, fromCallback } from 'xstate';
import {
  type ChainConfig,
  type ChainEffectRequest,
  type ChainEvent,
  type ChainInput,
  chainMachine,
} from '../../machines/chain.js';
import type { JournalEntry } from '../../src/durable/journal-entry.js';
import type { JournalMismatchError } from '../../src/durable/journal-mismatch.js';
import { type JournaledCall, RunJournal } from '../../src/durable/run-journal.js';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import { type JournaledEffects, performJournaled } from '../../src/host/durable-run.js';
import type { ToolResult } from '../../src/messages.js';
import {
  type ChainPath,
  type ChainPathEvent,
  type ChainSnapshot,
  eventName,
  pathInput,
  TIME_LIMIT_EVENT,
} from '../machines/chain-graph.js';
import { flush } from '../machines/graph-kit.js';
import { storeWithPrefix } from './helpers.js';

// A durable run of the chain machine driven by a path of the chain path suite
// (test/machines/chain-graph.ts): the `effects` host journals like createChain's does (whole
// answers, and a `result` entry for each call of a tool step that finishes before the step
// ends) and replays from the journal on resume, while the test plays the outside world: it
// answers each live request with the path's next answer event, sends ABORT (journaled first)
// and the time limit's event from outside.

export const RUN_ID = 'replay-path';

type Request = Exclude<ChainEffectRequest, { type: 'cancel' } | { type: 'decide' }>;

/** A live request the host waits for the test to answer; `ready` once its intent is journaled. */
interface Pending {
  readonly request: Request;
  readonly seq: number;
  readonly ready: Promise<unknown>;
}

/** Changes a replayed answer before it is delivered: to prove the checks can fail. */
export type Tamper = (event: ChainEvent, request: Request) => ChainEvent;

/** A wait that gives up: nothing here should take more than a few event-loop turns. */
async function bounded<T>(promise: Promise<T>, what: string, ms = 5_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`gave up waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The chain's `effects` actor for a journaled run: replays what the journal holds, then waits. */
export class JournaledHost {
  readonly pending: Pending[] = [];
  /** Answers delivered from the journal, and external events (ABORT, timer) it held. */
  replayed = 0;
  held = 0;
  mismatch: JournalMismatchError | undefined;
  #sendBack: ((event: ChainEvent) => void) | undefined;

  constructor(
    readonly journal: RunJournal,
    readonly tamper?: Tamper,
  ) {
    journal.onMismatch((error) => {
      this.mismatch = error;
    });
  }

  readonly logic = fromCallback<ChainEffectRequest>(({ sendBack, receive }) => {
    const send = sendBack as (event: ChainEvent | { readonly type: string }) => void;
    this.#sendBack = send;
    const { journal } = this;
    // A tool step's calls the journal has results for, delivered as they were live: one
    // event each, before the step's answer or what stopped it (SPEC Q8).
    const finished = (calls: Iterable<JournaledCall>) => {
      for (const call of calls) {
        if (!call.finished) continue;
        this.replayed++;
        send({ type: 'executeTools.result', result: call.result as ToolResult });
      }
    };
    const effects: JournaledEffects<Request> = {
      journal,
      kind: 'chain',
      sendBack: (event) => {
        this.held++;
        send(event);
      },
      held: (_request, outcome) => finished(outcome.calls),
      timerEvent: TIME_LIMIT_EVENT,
      describe: (request) => request.type,
      replay: (request, outcome) => {
        finished(outcome.calls);
        this.replayed++;
        // A chain's effect answers once.
        const event = outcome.answers[0] as ChainEvent;
        send(this.tamper ? this.tamper(event, request) : event);
      },
      live: (request, outcome) => {
        // A step in flight at the crash: what finished is answered from the journal.
        finished(outcome.calls.values());
        const ready = journal.requested(outcome, request.type);
        // Awaited by whoever answers it; a failure is reported there, not as unhandled.
        ready.catch(() => {});
        this.pending.push({ request, seq: outcome.seq, ready });
      },
    };
    receive((request) => {
      if (request.type === 'cancel') {
        // Only the deadline cancels a chain's effects: journaled as the timer firing.
        journal.timerFired('maxExecutionTime');
        this.pending.length = 0;
        return;
      }
      if (request.type === 'decide') return;
      performJournaled(effects, request);
    });
    return () => {
      this.pending.length = 0;
    };
  });

  /**
   * A call of the pending tool step finished: its result journaled, then delivered; the step
   * still waits for its answer.
   */
  async finish(event: Extract<ChainEvent, { type: 'executeTools.result' }>): Promise<void> {
    const found = this.pending.find((p) => p.request.type === 'executeTools');
    if (!found || !this.#sendBack)
      throw new Error('no tool step is pending for executeTools.result');
    await bounded(found.ready, 'the executeTools request to be journaled');
    const { result } = event;
    this.journal.callFinished(found.seq, result.toolCallId, result);
    this.#sendBack(event);
  }

  /** Answers the one pending live request `event` belongs to, journaling the answer first. */
  async answer(event: ChainEvent): Promise<void> {
    const type = event.type.split('.')[0];
    const matching = this.pending.filter((p) => p.request.type === type);
    const found = matching[0];
    if (matching.length !== 1 || !found || !this.#sendBack) {
      throw new Error(
        `cannot answer ${event.type}: ${matching.length} pending ${type} request(s), ` +
          `pending: [${this.pending.map((p) => p.request.type).join(', ')}]`,
      );
    }
    await bounded(found.ready, `the ${type} request to be journaled`);
    if (!this.pending.includes(found)) throw new Error(`${type} was cancelled before its answer`);
    this.pending.splice(this.pending.indexOf(found), 1);
    this.journal.answered(found.seq, event);
    this.#sendBack(event);
  }
}

export type ChainActor = Actor<typeof chainMachine>;

/** Runs the actor's queued work until it rests: final, or waiting for an answer. */
async function settle(actor: ChainActor, host: JournaledHost, where: string): Promise<void> {
  for (let turn = 0; turn < 100; turn++) {
    await flush();
    if (host.mismatch) throw host.mismatch;
    if (actor.getSnapshot().status !== 'active' || host.pending.length > 0) return;
  }
  throw new Error(`${where}: the run neither ended nor asked for anything`);
}

/** Delivers one path event as the outside world does. */
async function deliver(actor: ChainActor, host: JournaledHost, event: ChainPathEvent) {
  if (event.type === 'ABORT') {
    host.journal.aborted(event.reason);
    actor.send(event);
  } else if (event.type === TIME_LIMIT_EVENT) {
    // The delayed event, as the path sends it; the machine then cancels, which journals it.
    actor.send(event as never);
  } else if (event.type === 'executeTools.result') {
    await host.finish(event);
  } else {
    await host.answer(event);
  }
}

/** The part of a snapshot a run must agree on with the path (and with another run). */
export function observed(snapshot: ChainSnapshot) {
  const { context } = snapshot;
  return {
    value: snapshot.value,
    status: snapshot.status,
    iterations: context.iterations,
    warned: context.warned,
    tokens: context.usage.totalTokens,
    limit: context.limitReached,
    failure: context.failure?.code,
    steps: context.steps.length,
    transcript: context.transcript.toArray().length,
  };
}

/** The events of a path after its start. */
export const pathEvents = (path: ChainPath): ChainPathEvent[] =>
  path.steps.slice(1).map((step) => step.event);

/** Journal entries that deliver one path event each on replay. */
const DELIVERING = new Set(['answer', 'abort', 'timer', 'result']);

export interface RunResult {
  readonly snapshot: ChainSnapshot;
  readonly entries: readonly JournalEntry[];
  readonly host: JournaledHost;
}

/**
 * Drives `actor` through `events` (path steps `from`…), checking it rests where the path
 * says after each, then ends the journal: which must accept the run.
 */
async function drive(
  actor: ChainActor,
  host: JournaledHost,
  path: ChainPath,
  from: number,
): Promise<ChainSnapshot> {
  const events = pathEvents(path);
  for (let i = from; i < events.length; i++) {
    const event = events[i] as ChainPathEvent;
    const where = `step ${i + 1} (${eventName(event)})`;
    await deliver(actor, host, event);
    await settle(actor, host, where);
    expect(observed(actor.getSnapshot()), where).toEqual(
      observed((path.steps[i + 1] as { state: ChainSnapshot }).state),
    );
  }
  const snapshot = actor.getSnapshot();
  if (snapshot.status !== 'done') throw new Error(`the path ended with the run ${snapshot.status}`);
  const output = snapshot.output;
  await host.journal.end(output?.status === 'failed' ? 'failed' : 'succeeded');
  return snapshot;
}

const machineWith = (host: JournaledHost) =>
  chainMachine.provide({ actors: { effects: host.logic } });

/** The uncrashed run: `path` driven live from the start, journaled into a fresh memory store. */
export async function runLive(path: ChainPath, config: ChainConfig): Promise<RunResult> {
  const store = memoryStore();
  const input = pathInput(config);
  const journal = await RunJournal.begin(store, { runId: RUN_ID, kind: 'chain', input, config });
  const host = new JournaledHost(journal);
  const actor = createActor(machineWith(host), { input });
  try {
    actor.start();
    await settle(actor, host, 'start');
    const snapshot = await drive(actor, host, path, 0);
    return { snapshot, entries: (await store.read(RUN_ID)) ?? [], host };
  } finally {
    actor.stop();
  }
}

/**
 * A crash after the first `count` entries of `entries`: a fresh actor, with the input the
 * journal holds, replays from a store holding only those, must rest where the path says after
 * the events they delivered, and then continues live with the rest of the path.
 */
export async function resume(
  path: ChainPath,
  config: ChainConfig,
  entries: readonly JournalEntry[],
  count: number,
  tamper?: Tamper,
): Promise<RunResult> {
  const store = await storeWithPrefix(RUN_ID, entries, count);
  const journal = await RunJournal.reopen(store, RUN_ID, 'chain', config);
  const host = new JournaledHost(journal, tamper);
  const actor = createActor(machineWith(host), { input: journal.input as ChainInput });
  try {
    actor.start();
    await settle(actor, host, 'replay');
    const delivered = entries.slice(1, count).filter((e) => DELIVERING.has(e.type)).length;
    expect(host.replayed + host.held, 'events delivered from the journal').toBe(delivered);
    expect(observed(actor.getSnapshot()), `after replaying ${count} entries`).toEqual(
      observed((path.steps[delivered] as { state: ChainSnapshot }).state),
    );
    const snapshot = await drive(actor, host, path, delivered);
    return { snapshot, entries: (await store.read(RUN_ID)) ?? [], host };
  } finally {
    actor.stop();
  }
}
