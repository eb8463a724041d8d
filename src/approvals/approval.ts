import { InputError, StatecraftError } from '../errors.js';
import { failedToolResult, type ToolCall, type ToolResult } from '../messages.js';
import { ANSWER_SHAPE, kindOf, shapeProblems } from './decision-shape.js';

// SPEC H2: a person approves a tool call before it runs. A tool declares `needsApproval`; a
// call of it parks its run in the machine's `awaitingApproval` state until a decision comes:
// from the run's `approve` callback, from `approvals(store)` in any process (a durable run),
// or as an APPROVE / REJECT event from the app machine that invoked the chain. Approved
// calls run; rejected ones answer the model with a failed result that gives the reason.

/** What a `needsApproval` predicate is told besides the arguments. */
export interface ApprovalContext {
  readonly toolCallId: string;
  /** The durable run's id; undefined for a run without one. */
  readonly runId?: string;
  readonly signal: AbortSignal;
}

/** `true`, or a predicate of the call's (validated) arguments. */
export type NeedsApproval<Args = unknown> =
  | boolean
  | ((args: Args, context: ApprovalContext) => boolean | Promise<boolean>);

/** A call that waits for a decision, as the machine, stream events and `approvals` show it. */
export interface ApprovalRequest {
  readonly callId: string;
  readonly tool: string;
  readonly arguments: unknown;
}

/** A decision on one call; `timedOut`: no one decided within its `approvalTimeoutMs`. */
export interface ApprovalDecision {
  readonly callId: string;
  readonly approved: boolean;
  readonly reason?: string;
  readonly timedOut?: true;
}

/**
 * What a run's `approve` callback answers: approve (`true`), reject (`false`, or a reason),
 * or `undefined` to leave the call to another decider (approvals(store), an app machine).
 */
export type ApprovalAnswer =
  | boolean
  | { readonly approved: true }
  | { readonly approved: false; readonly reason?: string }
  | undefined;

/** The run option that decides approvals in the run's own process (a CLI prompt, a policy). */
export type ApproveCallback = (
  request: ApprovalRequest & { readonly runId?: string },
  context: { readonly signal: AbortSignal },
) => ApprovalAnswer | Promise<ApprovalAnswer>;

/** The run options of approvals (invoke, stream, resume). */
export interface ApprovalRunOptions {
  /**
   * Decides calls that need approval in the run's own process: asked once per call as it
   * starts to wait; answering `undefined` leaves it to approvals(store) or an app machine.
   */
  readonly approve?: ApproveCallback;
  /**
   * A durable run only: once every call of its step that can run has, and the rest wait for
   * people, the process lets the run go (nothing stays in memory; its journal holds it) and
   * `invoke` rejects with an ApprovalPendingError. Decide with approvals(store), then resume.
   */
  readonly parkForApproval?: boolean;
}

/** What happens when a call's approvalTimeoutMs passes without a decision. */
export type ApprovalTimeoutPolicy = 'reject' | 'fail';

/** The reason a call rejected by its deadline gives the model. */
export const NO_DECISION_IN_TIME = 'no decision in time';

/** The failed result the model reads for a rejected call. */
export function rejectedResult(call: ToolCall, reason: string | undefined): ToolResult {
  return failedToolResult(call, reason ? `Not approved: ${reason}` : 'Not approved.');
}

/**
 * The decision an `approve` callback's answer makes, or undefined for none. An answer it
 * cannot read is an InputError naming what is wrong (never quoting the answer, which may be
 * anything); the gate rejects the call with it.
 */
export function decisionOf(callId: string, answer: ApprovalAnswer): ApprovalDecision | undefined {
  if (answer === undefined) return undefined;
  if (answer === true) return { callId, approved: true };
  if (answer === false) return { callId, approved: false };
  const expected = 'approve: answer true, false, { approved, reason? } or undefined';
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    throw new InputError(`${expected}; got ${kindOf(answer)}`);
  }
  const problems = shapeProblems(answer, ANSWER_SHAPE);
  if (problems.length > 0)
    throw new InputError(`${expected}; got an object: ${problems.join('; ')}`);
  const reason = answer.approved ? undefined : answer.reason;
  return {
    callId,
    approved: answer.approved,
    ...(typeof reason === 'string' && reason !== '' && { reason }),
  };
}

/**
 * A durable run started with `parkForApproval` has nothing left to do but wait for people:
 * this process lets it go (its journal holds everything), and `invoke` rejects with this
 * error. Decide with `approvals(store)` from any process, then `resume(runId, { store })`.
 */
export class ApprovalPendingError extends StatecraftError {
  static override readonly code: string = 'APPROVAL_PENDING';
  readonly runId: string;
  readonly approvals: readonly ApprovalRequest[];
  /**
   * Epoch milliseconds the run's own deadline (maxExecutionTime, a tool loop's timeout) ends,
   * if it has one: resume it by then, decided or not, for the deadline to take effect.
   */
  readonly deadlineAt: number | undefined;

  constructor(runId: string, approvals: readonly ApprovalRequest[], deadlineAt?: number) {
    super(
      `Run '${runId}' is parked until ${approvals.length === 1 ? 'a call is' : `${approvals.length} calls are`} decided (${approvals.map((a) => `${a.callId}: ${a.tool}`).join(', ')}): decide with approvals(store).approve / reject, then resume(runId, { store })`,
    );
    this.runId = runId;
    this.approvals = approvals;
    this.deadlineAt = deadlineAt;
  }
}
