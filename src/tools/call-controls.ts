import type { ApprovalTimeoutPolicy } from '../approvals/approval.js';
import { DEFAULT_MAX_REASON_LENGTH } from '../approvals/reason.js';
import { delay, func, integer, oneOf, satisfies } from '../options/kinds.js';
import type { AfterToolCall, BeforeToolCall } from './hooks.js';
import { type InvalidToolCallPolicy, invalidToolCallProblem } from './invalid-tool-call.js';

/**
 * The tool-call controls chains and tool loops share (SPEC H1, H2, H4), spread into each one's
 * description: hooks around each call, what an invalid call becomes, and how long a call
 * that needs approval waits. The machines apply the defaults (a journal begun without an
 * option resumes with the same config), so these describe them for the docs only.
 */
export const TOOL_CALL_CONTROLS = {
  beforeToolCall: func<BeforeToolCall>(
    '(call, tool, context) => undefined | { cancel } | { arguments }',
  ),
  afterToolCall: func<AfterToolCall>('(call, tool, result, context) => void'),
  invalidToolCall: satisfies<InvalidToolCallPolicy>(
    (value) => invalidToolCallProblem(value) === undefined,
    (value) => invalidToolCallProblem(value) ?? '',
    { defaultText: "'return-to-model'" },
  ),
  approvalTimeoutMs: delay({ defaultText: 'none' }),
  onApprovalTimeout: oneOf<ApprovalTimeoutPolicy>(['reject', 'fail'], { defaultText: "'reject'" }),
  // Grouped by hand: toLocaleString would load ICU's number formats (~20 ms) at import.
  maxApprovalReasonLength: integer(1, {
    defaultText: String(DEFAULT_MAX_REASON_LENGTH).replace(/\B(?=(\d{3})+$)/g, ','),
  }),
} as const;
