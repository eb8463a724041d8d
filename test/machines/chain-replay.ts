import { expect } from 'vitest';
import { createActor, fromCallback } from 'xstate';
import {
  type ChainConfig,
  type ChainEffectRequest,
  type ChainEvent,
  chainMachine,
} from '../../machines/chain.js';
import { duplicateCallResult } from '../../machines/chain-policy.js';
import { directReturnCall } from '../../machines/early-stopping.js';
import {
  answerTextOf,
  type ChainMachine,
  type ChainPath,
  type ChainPathEvent,
  type ChainSnapshot,
  eventName,
  PATH_CONFIG,
  pathInput,
  TIME_LIMIT_EVENT,
} from './chain-graph.js';
import { allTransitionNames, flush, json, transitionName } from './graph-kit.js';

// Replay (SPEC D2): a path of chain-graph.ts against a real actor whose `effects` host the
// test answers step by step, checking after every step that the actor agrees with the path
// and that the host holds exactly the requests the state makes.

/** The `effects` host as a script: it keeps each request until the test answers it. */
export class EffectsDriver {
  /** Requests not answered yet, in arrival order. */
  readonly pending: ChainEffectRequest[] = [];
  /** The `cancel` requests received: each drops what was pending, as the real host does. */
  readonly cancels: Extract<ChainEffectRequest, { type: 'cancel' }>[] = [];
  /** The decisions the machine forwarded (SPEC H2): the host runs or answers those calls. */
  readonly decisions: Extract<ChainEffectRequest, { type: 'decide' }>['decision'][] = [];
  started = false;
  stopped = false;
  #sendBack: ((event: ChainEvent) => void) | undefined;

  readonly logic = fromCallback<ChainEffectRequest>(({ sendBack, receive }) => {
    this.started = true;
    this.#sendBack = sendBack;
    receive((request) => {
      if (request.type === 'decide') this.decisions.push(request.decision);
      else if (request.type !== 'cancel') this.pending.push(request);
      else {
        this.cancels.push(request);
        this.pending.length = 0;
      }
    });
    return () => {
      // The run ended (final state): whatever it still waited for is dropped with it.
      this.stopped = true;
      this.pending.length = 0;
    };
  });

  /** An event the host sends without a request to answer (approval requests, deadlines). */
  send(event: ChainEvent): void {
    this.#sendBack?.(event);
  }

  /** Answers the one pending request of `type` with `event`, as the real host would. */
  answer(event: ChainEvent): void {
    const type = event.type.split('.')[0];
    const requests = this.pending.filter((request) => request.type === type);
    if (requests.length !== 1 || !this.#sendBack) {
      throw new Error(
        `cannot answer ${event.type}: ${requests.length} pending ${type} request(s), ` +
          `pending: [${this.pending.map((r) => r.type).join(', ')}]`,
      );
    }
    this.pending.splice(this.pending.indexOf(requests[0] as ChainEffectRequest), 1);
    this.#sendBack(event);
  }
}

/** The part of a snapshot a path step must agree on. */
function observed(snapshot: ChainSnapshot) {
  const { context } = snapshot;
  return {
    value: snapshot.value,
    status: snapshot.status,
    iterations: context.iterations,
    warned: context.warned,
    tokens: context.usage.totalTokens,
    limit: context.limitReached,
    answer: answerTextOf(snapshot),
    failure: context.failure?.code,
    steps: context.steps.length,
    approvals: context.approvals,
  };
}

/** The request the state a snapshot rests in must have sent, built from the snapshot. */
function expectedRequests(snapshot: ChainSnapshot): unknown[] {
  const { context } = snapshot;
  const callModel = (final: boolean) => ({
    type: 'callModel',
    input: {
      messages: context.request.toJSON(),
      iteration: context.iterations,
      ...(final && { final }),
    },
  });
  if (snapshot.matches('thinking')) return [callModel(false)];
  if (snapshot.matches('concluding')) return [callModel(true)];
  // A step waiting for decisions still waits for its tools' answer.
  if (snapshot.matches('doing') || snapshot.matches('awaitingApproval')) {
    // The request named every call but the blocked duplicates, which the machine answered:
    // the results that came since (`executeTools.result`) change nothing of it.
    const blocked = new Set(
      context.toolCalls
        .filter((call) =>
          context.stepResults.some(
            (r) => JSON.stringify(r) === JSON.stringify(duplicateCallResult(call)),
          ),
        )
        .map((call) => call.id),
    );
    const calls = context.toolCalls.filter((call) => !blocked.has(call.id));
    // The one call whose output would be the answer is named, so its stream is read whole.
    const direct = directReturnCall(context.toolCalls, context.config.returnDirectTools);
    const directCallId = direct && calls.includes(direct) ? direct.id : undefined;
    return [{ type: 'executeTools', input: { calls, ...(directCallId && { directCallId }) } }];
  }
  if (snapshot.matches('validating')) {
    return [{ type: 'validateResult', input: { text: answerTextOf(snapshot) } }];
  }
  return [];
}

/** The time limit fires (and cancels the effects) only while no limit has stopped the run. */
function expectedCancels(path: ChainPath, upTo: number): number {
  return path.steps
    .slice(1, upTo + 1)
    .filter(
      (step, i) =>
        step.event.type === TIME_LIMIT_EVENT &&
        path.steps[i]?.state.context.limitReached === undefined,
    ).length;
}

/** Every transition the chain defines, by `transitionName`. */
export function chainTransitionNames(machine: ChainMachine = chainMachine): string[] {
  return allTransitionNames(machine);
}

export interface ReplayResult {
  /** The transitions the real actor took, by `transitionName`. */
  readonly transitions: ReadonlySet<string>;
}

/**
 * Replays `path` on a real actor: the first step starts it; each later step answers the
 * request the event belongs to through the `effects` host (or sends ABORT or the time limit
 * from outside); after every step the actor must agree with the path's snapshot, and the host
 * must hold exactly the request that state makes, with the input its context implies, and
 * have been told to cancel once for every time the time limit stopped the run.
 */
export async function replayPath(
  path: ChainPath,
  machine: ChainMachine = chainMachine,
  config: ChainConfig = PATH_CONFIG,
): Promise<ReplayResult> {
  const driver = new EffectsDriver();
  const transitions = new Set<string>();
  const actor = createActor(machine.provide({ actors: { effects: driver.logic } }), {
    input: pathInput(config),
    inspect: (event) => {
      if (event.type === '@xstate.microstep') {
        for (const t of event._transitions) transitions.add(transitionName(t));
      }
    },
  });
  try {
    for (const [i, step] of path.steps.entries()) {
      const event = step.event as ChainPathEvent | { type: 'xstate.init' };
      const where = `step ${i} (${eventName(event)})`;
      if (event.type === 'xstate.init') actor.start();
      else if (
        event.type === 'ABORT' ||
        event.type === TIME_LIMIT_EVENT ||
        event.type === 'APPROVE' ||
        event.type === 'REJECT'
      )
        actor.send(event as never);
      else if (
        event.type === 'approval.requested' ||
        event.type === 'approval.timedOut' ||
        event.type === 'executeTools.result'
      )
        driver.send(event);
      else driver.answer(event);
      await flush();
      expect(observed(actor.getSnapshot()), where).toEqual(observed(step.state));
      expect(json(driver.pending), `${where}: requests waiting for an answer`).toEqual(
        json(expectedRequests(step.state)),
      );
      expect(driver.cancels.length, `${where}: cancel requests`).toBe(expectedCancels(path, i));
      // Every decision the machine took reached the host, once, in order (SPEC H2).
      expect(json(driver.decisions), `${where}: decisions forwarded`).toEqual(
        json(step.state.context.approvals.decided),
      );
    }
    const end = actor.getSnapshot();
    expect(end.status, 'after the last step').toBe(path.state.status);
    if (end.status === 'done') {
      expect(driver.stopped, 'the effects host stops with the run').toBe(driver.started);
      expect(json(end.output), 'output').toEqual(json(path.state.output));
    }
  } finally {
    actor.stop();
  }
  return { transitions };
}
