import { InputError } from '../errors.js';
import { isRecord } from '../is-record.js';
import { parseApprovalId } from './approval-id.js';

// SPEC E3 / H2: a person approves in the browser. The AI SDK's chat client marks the tool part
// `approval-responded` with `approval: { id, approved, reason }` and posts the whole
// conversation again; these helpers read those answers from the last assistant message and
// post them as decisions on the durable run, where the run's host takes them as it takes any
// other decider's. Only the approval's id, `approved` and `reason` are read from the client:
// what the call does (tool, arguments) is the run's own record, never what the page sent back.

/** One answer a person gave in the browser. */
export interface UIApprovalResponse {
  readonly approvalId: string;
  readonly runId: string;
  readonly callId: string;
  readonly approved: boolean;
  readonly reason?: string;
}

/**
 * The answers in the last message of a chat client's POST (`body.messages`), when it is an
 * assistant message: every tool part in state `approval-responded`. `runId` is the run the
 * server holds for this chat; an answer naming another run, an approval id no statecraft
 * stream made, or a part of another shape is an InputError (nothing is decided). No answers
 * (a new user message): an empty list.
 */
export function uiApprovalResponses(
  messages: unknown,
  options: { readonly runId: string },
): UIApprovalResponse[] {
  if (!Array.isArray(messages)) {
    throw new InputError(
      'uiApprovalResponses: messages must be the array of UI messages the chat client posted',
    );
  }
  const runId = isRecord(options) ? options.runId : undefined;
  if (typeof runId !== 'string' || runId === '') {
    throw new InputError(
      'uiApprovalResponses: options.runId must be the id of the run this chat holds',
    );
  }
  const last: unknown = messages.at(-1);
  if (!isRecord(last) || last.role !== 'assistant') return [];
  if (!Array.isArray(last.parts)) {
    throw new InputError('uiApprovalResponses: the last message has no parts array');
  }
  const responses: UIApprovalResponse[] = [];
  for (const part of last.parts as unknown[]) {
    if (!isRecord(part) || part.state !== 'approval-responded') continue;
    const { approval, toolCallId } = part;
    if (
      !isRecord(approval) ||
      typeof approval.id !== 'string' ||
      typeof approval.approved !== 'boolean' ||
      (approval.reason !== undefined && typeof approval.reason !== 'string')
    ) {
      throw new InputError(
        'uiApprovalResponses: an approval-responded part needs approval: { id: string, approved: boolean, reason?: string }',
      );
    }
    const named = parseApprovalId(approval.id);
    if (named.runId !== runId) {
      throw new InputError(
        `uiApprovalResponses: approval '${approval.id.slice(0, 200)}' is for another run than this chat's ('${runId}')`,
      );
    }
    if (toolCallId !== undefined && toolCallId !== named.callId) {
      throw new InputError(
        `uiApprovalResponses: approval '${approval.id.slice(0, 200)}' is on a part of another call ('${String(toolCallId).slice(0, 200)}')`,
      );
    }
    const reason = approval.reason as string | undefined;
    responses.push({
      approvalId: approval.id,
      runId,
      callId: named.callId,
      approved: approval.approved,
      ...(reason !== undefined && reason !== '' && !approval.approved && { reason }),
    });
  }
  return responses;
}

/** What `decide` of `approvals(store)` needs (an `Approvals`). */
export interface UIApprovalDecider {
  decide(
    runId: string,
    decision: { readonly callId: string; readonly approved: boolean; readonly reason?: string },
  ): Promise<boolean>;
}

/** What decideUIApprovals did with each answer. */
export interface UIApprovalOutcome {
  /** Answers recorded as the call's decision. */
  readonly decided: readonly UIApprovalResponse[];
  /**
   * Answers that changed nothing: the call had been decided before (this answer posted twice,
   * another decider, its deadline) or its run had ended.
   */
  readonly ignored: readonly UIApprovalResponse[];
}

/**
 * Posts the browser's answers (see uiApprovalResponses) as decisions with `approvals(store)`.
 * A stale answer is ignored and listed; an answer on a call the run never asked about is the
 * store's JournalError `unknown-call` (an unknown run: `unknown-run`), thrown before any later
 * answer is posted.
 */
export async function decideUIApprovals(
  decider: UIApprovalDecider,
  messages: unknown,
  options: { readonly runId: string },
): Promise<UIApprovalOutcome> {
  const decided: UIApprovalResponse[] = [];
  const ignored: UIApprovalResponse[] = [];
  for (const response of uiApprovalResponses(messages, options)) {
    const { runId, callId, approved, reason } = response;
    const recorded = await decider.decide(runId, {
      callId,
      approved,
      ...(reason !== undefined && { reason }),
    });
    (recorded ? decided : ignored).push(response);
  }
  return { decided, ignored };
}
