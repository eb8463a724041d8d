import type { ApprovalDecision, ApprovalRequest } from '../approvals/approval.js';
import type { JournaledApproval, JournaledCall, RunJournal } from '../durable/run-journal.js';
import type { ToolCall } from '../messages.js';

/**
 * The journal of one tool step of a durable run, as the executors (RunTools, the tool loop's
 * executeCommands) see it: one intent before each call runs, one result after, and what an
 * earlier process of the run journaled for the step's calls before it died.
 */
export interface ToolCallJournal {
  /** A call of this step the journal knows of: finished (its result) or started only. */
  known(callId: string): JournaledCall | undefined;
  /** The call is about to run: resolves once its intent is written. Skipped for known calls. */
  starting(call: ToolCall): Promise<void>;
  /**
   * The call's result, as it should be replayed; `hookFailed`: the words its afterToolCall
   * threw with, for the step to fail with on resume too.
   */
  finished(
    call: ToolCall,
    result: unknown,
    executor: string,
    ms: number,
    hookFailed?: string,
  ): void;
  /** `<runId>:<toolCallId>`: the same in every process that issues the call. */
  idempotencyKey(callId: string): string;
  /** What an earlier process journaled about this step's approvals, in order (SPEC H2). */
  readonly approvals: readonly JournaledApproval[];
  /** A call waits for a decision: resolves once that is on disk. */
  approvalRequested(
    request: ApprovalRequest,
    at: number,
    timeoutMs: number | undefined,
  ): Promise<void>;
  /** The machine's decision on it. */
  approvalDecided(decision: ApprovalDecision): void;
}

/** The ToolCallJournal of effect `seq` of a run. */
export function toolCallJournal(
  journal: RunJournal,
  seq: number,
  known: ReadonlyMap<string, JournaledCall>,
  approvals: readonly JournaledApproval[] = [],
): ToolCallJournal {
  return {
    approvals,
    approvalRequested: (request, at, timeoutMs) =>
      journal.approvalRequested(seq, request, at, timeoutMs),
    approvalDecided: (decision) => journal.approvalDecided(seq, decision),
    known: (callId) => known.get(callId),
    starting: (call) => journal.callStarting(seq, call.id, call.name),
    finished: (call, result, executor, ms, hookFailed) =>
      journal.callFinished(seq, call.id, result, {
        executor,
        ms: Math.round(ms * 10) / 10,
        ...(hookFailed !== undefined && { hookFailed }),
      }),
    idempotencyKey: (callId) => `${journal.runId}:${callId}`,
  };
}
