import type { Approvals } from '../../machines/approvals.js';
import type { ApprovalDecision, ApprovalRequest } from '../approvals/approval.js';

/** The stream events of SPEC H2, the same for chains and tool loops. */
export type ApprovalStreamEvent =
  | { readonly type: 'approval-requested'; readonly request: ApprovalRequest }
  | { readonly type: 'approval-decided'; readonly decision: ApprovalDecision };

/**
 * The approval events between two snapshots' approvals: a call newly waiting is requested, a
 * decision newly taken is decided. Unchanged approvals (the same object) yield nothing.
 */
export function approvalStreamEvents(
  last: Approvals | undefined,
  next: Approvals,
): ApprovalStreamEvent[] {
  if (next === last) return [];
  const asked = new Set(last?.awaiting.map((a) => a.callId));
  return [
    ...next.awaiting
      .filter((request) => !asked.has(request.callId))
      .map((request) => ({ type: 'approval-requested' as const, request })),
    ...next.decided
      .slice(last?.decided.length ?? 0)
      .map((decision) => ({ type: 'approval-decided' as const, decision })),
  ];
}
