import { assign, fromPromise, setup } from 'xstate';

// A small app machine for the path-test helper's tests: an order is classified by one
// invoked actor, a risky one waits for a human (APPROVE / REJECT, or a review timeout), and
// then another invoked actor fulfils it. `isLowRisk` is a guard on the child's output and
// `recordRisk` a named action: both can be broken on purpose with machine.provide().
// CANCEL is defined but no test offers it: coverage must report it missing.

export interface OrderInput {
  readonly orderId: string;
  readonly amount: number;
}

export interface OrderContext {
  readonly orderId: string;
  readonly amount: number;
  readonly risk: 'low' | 'high' | undefined;
  readonly approved: boolean;
  readonly reason: string | undefined;
  readonly trackingId: string | undefined;
  readonly error: string | undefined;
}

export type OrderEvent =
  | { readonly type: 'APPROVE' }
  | { readonly type: 'REJECT'; readonly reason: string }
  | { readonly type: 'CANCEL' };

export interface Classification {
  readonly risk: 'low' | 'high';
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

export const orderMachine = setup({
  types: {
    input: {} as OrderInput,
    context: {} as OrderContext,
    events: {} as OrderEvent,
  },
  actors: {
    classify: fromPromise<Classification, { amount: number }>(async () => {
      throw new Error('provide classify');
    }),
    fulfil: fromPromise<{ trackingId: string }, { orderId: string }>(async () => {
      throw new Error('provide fulfil');
    }),
  },
  actions: {
    recordRisk: assign((_, params: { risk: Classification['risk'] }) => ({ risk: params.risk })),
  },
  guards: {
    isLowRisk: (_, params: { risk: Classification['risk'] }) => params.risk === 'low',
  },
}).createMachine({
  id: 'order',
  context: ({ input }) => ({
    orderId: input.orderId,
    amount: input.amount,
    risk: undefined,
    approved: false,
    reason: undefined,
    trackingId: undefined,
    error: undefined,
  }),
  initial: 'classifying',
  states: {
    classifying: {
      invoke: {
        id: 'classify',
        src: 'classify',
        input: ({ context }) => ({ amount: context.amount }),
        onDone: [
          {
            guard: { type: 'isLowRisk', params: ({ event }) => ({ risk: event.output.risk }) },
            target: 'fulfilling',
            actions: { type: 'recordRisk', params: ({ event }) => ({ risk: event.output.risk }) },
          },
          {
            target: 'awaitingReview',
            actions: { type: 'recordRisk', params: ({ event }) => ({ risk: event.output.risk }) },
          },
        ],
        onError: {
          target: 'failed',
          actions: assign({ error: ({ event }) => message(event.error) }),
        },
      },
    },
    awaitingReview: {
      on: {
        APPROVE: { target: 'fulfilling', actions: assign({ approved: true }) },
        REJECT: { target: 'rejected', actions: assign({ reason: ({ event }) => event.reason }) },
        CANCEL: 'cancelled',
      },
      after: {
        60000: { target: 'rejected', actions: assign({ reason: 'review timed out' }) },
      },
    },
    fulfilling: {
      invoke: {
        id: 'fulfil',
        src: 'fulfil',
        input: ({ context }) => ({ orderId: context.orderId }),
        onDone: {
          target: 'done',
          actions: assign({ trackingId: ({ event }) => event.output.trackingId }),
        },
        onError: {
          target: 'failed',
          actions: assign({ error: ({ event }) => message(event.error) }),
        },
      },
    },
    done: { type: 'final' },
    rejected: { type: 'final' },
    cancelled: { type: 'final' },
    failed: { type: 'final' },
  },
});

export const ORDER_INPUT: OrderInput = { orderId: 'o-1', amount: 120 };

/** The outcomes the children may answer, and the human's events in review. */
export const ORDER_OPTIONS = {
  input: ORDER_INPUT,
  events: (snapshot: { matches: (value: 'awaitingReview') => boolean }) =>
    snapshot.matches('awaitingReview')
      ? [{ type: 'APPROVE' } as const, { type: 'REJECT', reason: 'too risky' } as const]
      : [],
  actors: {
    classify: {
      outputs: [{ risk: 'low' }, { risk: 'high' }] satisfies Classification[],
      errors: [new Error('model down')],
    },
    fulfil: { outputs: [{ trackingId: 'T-1' }], errors: [new Error('warehouse offline')] },
  },
};
