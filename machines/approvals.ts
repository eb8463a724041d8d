import type { ApprovalDecision, ApprovalRequest } from '../src/approvals/approval.js';
import { NO_DECISION_IN_TIME } from '../src/approvals/approval.js';
import {
  checkShape,
  DECISION_EVENT_SHAPES,
  shapeProblems,
} from '../src/approvals/decision-shape.js';
import { cappedReason } from '../src/approvals/reason.js';

// SPEC H2 as both machines keep it (chain.ts, tool-loop.ts): the calls of the step in
// progress that wait for a decision, and every decision of the run; the events that change
// them; what each event decides; and the bodies of the approval actions both machines name
// alike (recordApprovalRequest, recordDecision, forwardDecision, failOnApprovalTimeout).
// Pure, like the machines.

/** The calls of the step in progress that wait for a decision, and the run's decisions. */
export interface Approvals {
  readonly awaiting: readonly ApprovalRequest[];
  readonly decided: readonly ApprovalDecision[];
}

export const NO_APPROVALS: Approvals = { awaiting: [], decided: [] };

/** The approval events a machine takes: the host's two, and people's two. */
export type ApprovalEvent =
  /** The host: a call of the step needs a decision before it runs. */
  | { readonly type: 'approval.requested'; readonly request: ApprovalRequest }
  /** The host: no decision came within the call's approvalTimeoutMs. */
  | { readonly type: 'approval.timedOut'; readonly callId: string; readonly timeoutMs: number }
  /** Approves a call that awaits a decision; any other call id is ignored. */
  | { readonly type: 'APPROVE'; readonly callId: string }
  /** Rejects a call that awaits a decision: the model reads the reason. */
  | { readonly type: 'REJECT'; readonly callId: string; readonly reason?: string };

/** `approvals` with one more call waiting. */
export function withRequest(approvals: Approvals, request: ApprovalRequest): Approvals {
  return { ...approvals, awaiting: [...approvals.awaiting, request] };
}

/** `approvals` once `decision` is taken: its call no longer waits. */
export function withDecision(approvals: Approvals, decision: ApprovalDecision): Approvals {
  return {
    awaiting: approvals.awaiting.filter((a) => a.callId !== decision.callId),
    decided: [...approvals.decided, decision],
  };
}

/** Whether `callId` waits for a decision: only then does one count. */
export function isAwaiting(approvals: Approvals, callId: string): boolean {
  return approvals.awaiting.some((a) => a.callId === callId);
}

/**
 * Whether `event` decides a call that waits: only then does it count (another call id is
 * ignored). An APPROVE or REJECT an app sent in another shape (a call id that is no string, a
 * reason that is no text, a misspelled key) takes the transition too, for its action to
 * refuse it (approval(), rejection()): the run fails with an InputError, and the app's machine
 * gets it as the invoked actor's error, instead of a decision nobody meant or a silence. (An
 * action, because XState wraps what a guard throws in a plain Error, and keeps the class of
 * what an action throws.)
 */
export function decidesWaitingCall(
  approvals: Approvals,
  event: { readonly type: string; readonly callId?: unknown },
): boolean {
  if (isMisshapen(event)) return true;
  return typeof event.callId === 'string' && isAwaiting(approvals, event.callId);
}

function isMisshapen(event: { readonly type: string }): boolean {
  return (
    (event.type === 'APPROVE' || event.type === 'REJECT') &&
    shapeProblems(event, DECISION_EVENT_SHAPES[event.type]).length > 0
  );
}

/** An InputError naming every problem of an APPROVE or REJECT of another shape. */
function checkDecisionEvent(event: { readonly type: 'APPROVE' | 'REJECT' }): void {
  checkShape(event, DECISION_EVENT_SHAPES[event.type], `The ${event.type} event`);
}

/** `decision` with its reason cut to the run's limit (see cappedReason), before it is kept or sent. */
export function withinReasonLimit(
  decision: ApprovalDecision,
  config: { readonly maxApprovalReasonLength?: number },
): ApprovalDecision {
  if (decision.reason === undefined) return decision;
  const reason = cappedReason(decision.reason, config.maxApprovalReasonLength);
  return reason === decision.reason ? decision : { ...decision, reason };
}

export function approval(event: {
  readonly type: 'APPROVE';
  readonly callId: string;
}): ApprovalDecision {
  checkDecisionEvent(event);
  return { callId: event.callId, approved: true };
}

export function rejection(event: {
  readonly type: 'REJECT';
  readonly callId: string;
  readonly reason?: string;
}): ApprovalDecision {
  checkDecisionEvent(event);
  return event.reason
    ? { callId: event.callId, approved: false, reason: event.reason }
    : { callId: event.callId, approved: false };
}

/** A call whose deadline passed without a decision: rejected, and the model is told why. */
export function expiry(event: { readonly callId: string }): ApprovalDecision {
  return { callId: event.callId, approved: false, reason: NO_DECISION_IN_TIME, timedOut: true };
}

/** What a run that a call's deadline fails says (onApprovalTimeout 'fail'). */
export function approvalTimeoutMessage(
  approvals: Approvals,
  event: { readonly callId: string; readonly timeoutMs: number },
): string {
  const request = approvals.awaiting.find((a) => a.callId === event.callId);
  return `No decision on tool call ${event.callId} ('${request?.tool ?? 'unknown'}') within its approvalTimeoutMs (${event.timeoutMs} ms)`;
}

/**
 * What both machines' approval actions read: the decisions so far, and the reason limit.
 * Generic in the machine's context: each machine names them instantiated with its own
 * (`assign(withDecisionRecorded<ChainContext>)`), so XState types the action by that context.
 */
interface ApprovalContext {
  readonly approvals: Approvals;
  readonly config: { readonly maxApprovalReasonLength?: number };
}

/** Action `recordApprovalRequest`: the host asks; one more call waits for a decision. */
export function withApprovalRequest<TContext extends ApprovalContext>({
  context,
  event,
}: {
  readonly context: TContext;
  readonly event: { readonly type: string };
}): { approvals: Approvals } {
  const { request } = event as Extract<ApprovalEvent, { type: 'approval.requested' }>;
  return { approvals: withRequest(context.approvals, request) };
}

/**
 * Action `recordDecision`: the call no longer waits. A reason is cut to the run's limit before
 * it is kept, journaled or read by the model.
 */
export function withDecisionRecorded<TContext extends ApprovalContext>(
  { context }: { readonly context: TContext },
  params: { decision: ApprovalDecision },
): { approvals: Approvals } {
  const decision = withinReasonLimit(params.decision, context.config);
  return { approvals: withDecision(context.approvals, decision) };
}

/**
 * Action `forwardDecision`: the request to the effects host, which journals the decision and
 * runs the call, or answers it as not approved (the reason cut as it was kept).
 */
export function decisionRequest<TContext extends ApprovalContext>(
  { context }: { readonly context: TContext },
  params: { decision: ApprovalDecision },
): { readonly type: 'decide'; readonly decision: ApprovalDecision } {
  return { type: 'decide', decision: withinReasonLimit(params.decision, context.config) };
}

/** Action `failOnApprovalTimeout` (approvalTimeout 'fail'): a call's deadline passed. */
export function withApprovalTimeoutFailure<TContext extends ApprovalContext>(
  { context }: { readonly context: TContext },
  params: { callId: string; timeoutMs: number },
): { failure: { code: 'TIMEOUT'; message: string; limit: number } } {
  return {
    failure: {
      code: 'TIMEOUT',
      message: approvalTimeoutMessage(context.approvals, params),
      limit: params.timeoutMs,
    },
  };
}
