// SPEC D3 for users' machines: reachability from statecraft/testing, with shortest witnesses.
import {
  assertCanReach,
  assertUnreachable,
  canReach,
  generatePathTests,
  reachabilityViolations,
} from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { assign, setup } from 'xstate';
import { ORDER_OPTIONS, type OrderContext, orderMachine } from './order-machine.js';

/** The property an order flow must keep: a risky order is fulfilled only once approved. */
function fulfilsUnapprovedRiskyOrder(snapshot: {
  matches: (v: 'fulfilling') => boolean;
  context: OrderContext;
}): boolean {
  return (
    snapshot.matches('fulfilling') && snapshot.context.risk === 'high' && !snapshot.context.approved
  );
}

describe('canReach', () => {
  it('finds a shortest witness for a state value', () => {
    const result = canReach(orderMachine, 'done', ORDER_OPTIONS);
    if (!result.reachable) throw new Error('done should be reachable');
    expect(result.path.name).toBe('classify:done#0 → fulfil:done#0 ⇒ done');
    expect(result.path.events).toEqual([
      { type: 'xstate.done.actor.classify', output: { risk: 'low' }, actorId: 'classify' },
      { type: 'xstate.done.actor.fulfil', output: { trackingId: 'T-1' }, actorId: 'fulfil' },
    ]);
    expect(result.path.state.context.trackingId).toBe('T-1');
    // Breadth first, stopping at the first hit: the start and the three outcomes of classify.
    expect(result.explored).toBe(4);
  });

  it('answers no, with how many snapshots it explored, for a state no offered event leads to', () => {
    expect(canReach(orderMachine, 'cancelled', ORDER_OPTIONS)).toEqual({
      reachable: false,
      explored: 11,
    });
  });

  it('answers yes once the event is offered', () => {
    const result = canReach(orderMachine, 'cancelled', {
      ...ORDER_OPTIONS,
      events: (s) => (s.matches('awaitingReview') ? [{ type: 'CANCEL' }] : []),
    });
    expect(result.reachable && result.path.name).toBe('classify:done#1 → CANCEL ⇒ cancelled');
  });

  it('reaches transient states and nested state values', () => {
    const triage = setup({
      types: {
        context: {} as { score: number },
        events: {} as { type: 'SCORE'; score: number } | { type: 'OK' },
      },
      guards: { isUrgent: ({ context }) => context.score > 5 },
    }).createMachine({
      id: 'triage',
      context: { score: 0 },
      initial: 'idle',
      states: {
        idle: {
          on: {
            SCORE: { target: 'routing', actions: assign({ score: ({ event }) => event.score }) },
          },
        },
        // Transient: never a resting snapshot, only a microstep.
        routing: { always: [{ guard: 'isUrgent', target: 'review.urgent' }, 'review.normal'] },
        review: {
          initial: 'normal',
          states: { normal: { on: { OK: '#triage.closed' } }, urgent: {} },
        },
        closed: { type: 'final' },
      },
    });
    const options = { events: [{ type: 'SCORE', score: 1 } as const, { type: 'OK' } as const] };
    const routing = canReach(triage, 'routing', options);
    expect(routing.reachable && routing.path.name).toBe('SCORE {"score":1} ⇒ routing');
    expect(canReach(triage, 'review.normal', options).reachable).toBe(true);
    // Only a score over 5 is urgent: unreachable with the score offered, reachable with 9.
    expect(canReach(triage, 'review.urgent', options)).toMatchObject({ reachable: false });
    const urgent = canReach(triage, 'review.urgent', {
      events: [...options.events, { type: 'SCORE', score: 9 }],
    });
    expect(urgent.reachable && urgent.path.name).toBe('SCORE {"score":9} ⇒ review.urgent');
  });
});

describe('assertCanReach / assertUnreachable', () => {
  it('assertCanReach returns the witness, or throws saying how much it explored', () => {
    expect(assertCanReach(orderMachine, 'rejected', ORDER_OPTIONS).name).toBe(
      'classify:done#1 → REJECT {"reason":"too risky"} ⇒ rejected',
    );
    expect(() => assertCanReach(orderMachine, 'cancelled', ORDER_OPTIONS)).toThrow(
      "assertCanReach: 'cancelled' is not reachable: explored 11 snapshots, all that the offered events, child outcomes and delays reach. If it should be, check what is offered: `events` (the events from outside, per snapshot), `actors` (each invoke's outputs and errors) and `delays`.",
    );
  });

  it('refuses a state value the machine does not have, rather than calling it unreachable', () => {
    expect(() => assertUnreachable(orderMachine, 'canceled', ORDER_OPTIONS)).toThrow(
      "assertUnreachable: the machine has no state 'canceled'; its states: classifying, awaitingReview, fulfilling, done, rejected, cancelled, failed.",
    );
  });

  it('assertUnreachable throws with the witness, step by step', () => {
    expect(() => assertUnreachable(orderMachine, 'rejected', ORDER_OPTIONS)).toThrow(
      [
        "assertUnreachable: 'rejected' is reachable in 2 event(s) (a shortest witness):",
        '  1. classify:done#1 ⇒ awaitingReview',
        '  2. REJECT {"reason":"too risky"} ⇒ rejected',
      ].join('\n'),
    );
  });

  it('proves a property of the app (a risky order is fulfilled only once approved) and catches a broken copy', () => {
    expect(assertUnreachable(orderMachine, fulfilsUnapprovedRiskyOrder, ORDER_OPTIONS)).toEqual({
      explored: 11,
    });
    const broken = orderMachine.provide({ guards: { isLowRisk: () => true } });
    expect(() => assertUnreachable(broken, fulfilsUnapprovedRiskyOrder, ORDER_OPTIONS)).toThrow(
      [
        'assertUnreachable: fulfilsUnapprovedRiskyOrder is reachable in 1 event(s) (a shortest witness):',
        '  1. classify:done#1 ⇒ fulfilling',
      ].join('\n'),
    );
  });

  it('every reachable snapshot can reach a final state, on the suite graph (reachabilityViolations)', () => {
    const isFinal = (s: { status: string }) => s.status === 'done';
    const { graph } = generatePathTests(orderMachine, ORDER_OPTIONS);
    expect(reachabilityViolations(graph, { property: 'final', isTarget: isFinal })).toEqual([]);
    // Without the human's events, a risky order waits for ever... but for the review timeout.
    const noHuman = generatePathTests(orderMachine, { ...ORDER_OPTIONS, events: [] });
    expect(reachabilityViolations(noHuman.graph, { property: 'final', isTarget: isFinal })).toEqual(
      [],
    );
    const noTimeout = generatePathTests(orderMachine, {
      ...ORDER_OPTIONS,
      events: [],
      delays: false,
    });
    const violations = reachabilityViolations(noTimeout.graph, {
      property: 'final',
      isTarget: isFinal,
    });
    expect(
      violations.map((v) => JSON.parse(v.detail.replace('no way on from ', '')).value),
    ).toEqual(['awaitingReview']);
  });
});
