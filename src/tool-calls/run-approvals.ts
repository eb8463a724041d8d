import { ApprovalPendingError, type ApprovalRunOptions } from '../approvals/approval.js';
import type { RunJournal } from '../durable/run-journal.js';
import { ConfigError } from '../errors.js';
import type { RunRecorder } from '../host/run-details.js';
import { ApprovalGate } from './approval-gate.js';
import type { LocalToolRegistry } from './local-registry.js';

/**
 * The approval gate of one run (SPEC H2), or undefined when none of its tools needs approval.
 * `runOptions` is undefined for a run an app machine invoked: its decisions come as events.
 * A run started here must have a way to be decided: an `approve` callback, or a durable
 * store whose `approvals(store)` anyone can use; otherwise a call would wait forever.
 */
export function approvalGate(
  local: LocalToolRegistry,
  timeoutMs: number | undefined,
  recorder: RunRecorder,
  journal: RunJournal | undefined,
  runOptions: ApprovalRunOptions | undefined,
): ApprovalGate | undefined {
  const { approve, parkForApproval } = runOptions ?? {};
  if (approve !== undefined && typeof approve !== 'function') {
    throw new ConfigError('approve', 'must be a function (request, { signal }) => decision');
  }
  if (parkForApproval !== undefined && typeof parkForApproval !== 'boolean') {
    throw new ConfigError('parkForApproval', 'must be true or false');
  }
  if (parkForApproval && !journal) {
    throw new ConfigError(
      'parkForApproval',
      'a run parks in its journal: give it a runId and a store (fileStore(dir))',
    );
  }
  if (!ApprovalGate.needed(local)) return undefined;
  if (runOptions && !journal && !approve) {
    const tools = local
      .list()
      .filter((tool) => tool.needsApproval !== undefined && tool.needsApproval !== false)
      .map((tool) => `'${tool.name}'`);
    throw new ConfigError(
      'approve',
      `tool ${tools.join(', ')} needs approval, and this run has no one to decide: pass approve: (request) => …, or a runId and store so approvals(store) can decide from anywhere`,
    );
  }
  return new ApprovalGate({
    local,
    ...(approve && { approve }),
    ...(timeoutMs !== undefined && { timeoutMs }),
    ...(journal && { inbox: { runId: journal.runId, store: journal.store } }),
    ...(parkForApproval &&
      journal && {
        onOnlyWaiting: (waiting) =>
          journal.park(new ApprovalPendingError(journal.runId, waiting, journal.deadlineAt)),
        runDeadline: () => journal.deadlineAt,
      }),
    onRequested: (request) => recorder.approvalRequested(request),
    onDecided: (decision, waitedMs) => recorder.approvalDecided(decision, waitedMs),
  });
}
