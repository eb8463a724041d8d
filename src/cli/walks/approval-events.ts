import type { ApprovalEvent, Approvals } from '../../../machines/approvals.js';

// The approval events a walk of the chain or the tool loop offers (SPEC H2), shared by
// `statecraft paths` and the project's chain path suite: the host asks for a decision on the
// step's call (once per run, which keeps the graph small), a second call asks while the
// first waits, and each waiting call is approved, rejected, or reaches its deadline.

const request = (callId: string) => ({
  type: 'approval.requested' as const,
  request: { callId, tool: 'lookup', arguments: { q: 'France' } },
});

export const APPROVAL_EVENTS = {
  approvalRequested: request('call_1'),
  secondApprovalRequested: request('call_2'),
  approve: { type: 'APPROVE', callId: 'call_1' },
  reject: { type: 'REJECT', callId: 'call_1', reason: 'not now' },
  approvalTimedOut: { type: 'approval.timedOut', callId: 'call_1', timeoutMs: 1_000 },
  approveSecond: { type: 'APPROVE', callId: 'call_2' },
} as const satisfies Record<string, ApprovalEvent>;

/**
 * What a walk offers while a step's tools run (`tools`: a request, once per run) and while
 * calls wait (`awaiting`: a second request, and decisions on the waiting calls).
 */
export function approvalEvents(
  where: 'tools' | 'awaiting' | 'elsewhere',
  approvals: Approvals,
): ApprovalEvent[] {
  const { awaiting, decided } = approvals;
  const asked = awaiting.length + decided.length;
  if (where === 'tools') return asked === 0 ? [APPROVAL_EVENTS.approvalRequested] : [];
  if (where !== 'awaiting') return [];
  const waits = (callId: string) => awaiting.some((a) => a.callId === callId);
  return [
    ...(asked === 1 ? [APPROVAL_EVENTS.secondApprovalRequested] : []),
    ...(waits('call_1')
      ? [APPROVAL_EVENTS.approve, APPROVAL_EVENTS.reject, APPROVAL_EVENTS.approvalTimedOut]
      : []),
    ...(waits('call_2') ? [APPROVAL_EVENTS.approveSecond] : []),
  ];
}

/** Where a chain in `state` is, for approvalEvents. */
export function chainPhase(state: string): 'tools' | 'awaiting' | 'elsewhere' {
  return state === 'doing' ? 'tools' : state === 'awaitingApproval' ? 'awaiting' : 'elsewhere';
}
