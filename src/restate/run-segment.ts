import { ApprovalPendingError } from '../approvals/approval.js';
import { journaledWaits } from '../durable/approvals.js';
import { decode } from '../durable/codec.js';
import { JournalError, type JournalErrorReason } from '../durable/journal-error.js';
import { isApprovalEntry } from '../durable/run-entries.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import type { JsonValue } from '../viz/to-json.js';
import { approvalPromiseName } from './journal-object.js';
import { RestateRequestError } from './request-error.js';
import { failed, type RunOutcome, type SealedOutcome, succeeded } from './run-outcome.js';

/** A chain or tool loop, as a worker runs it: `createChain(…)` and `createToolLoop(…)` are. */
export interface Agent {
  invoke(
    input: never,
    options: { runId: string; store: JournalStore; parkForApproval: boolean },
  ): Promise<unknown>;
}

export type Agents = Readonly<Record<string, Agent>>;

/** A call a parked run waits on, and the durable promise a decision on it resolves. */
export interface Waiting {
  readonly callId: string;
  readonly tool: string;
  readonly promise: string;
  /** Epoch milliseconds the call began to wait. */
  readonly requestedAt: number;
  /** Epoch milliseconds its approvalTimeoutMs ends. */
  readonly deadline?: number;
}

/** What one segment of a run came to: its end, or calls to wait on (and when to look again). */
export type Segment =
  | {
      readonly kind: 'ended';
      /** Whether the run succeeded: the outcome may be sealed (run-workflow.ts). */
      readonly ok: boolean;
      readonly outcome: RunOutcome | SealedOutcome;
    }
  | { readonly kind: 'parked'; readonly waiting: readonly Waiting[]; readonly wakeInMs?: number };

// A deadline is looked at just after it passes, so that the run finds it passed.
const DEADLINE_SLACK_MS = 5;
const PASSED_DEADLINE_RETRY_MS = 1_000;

/**
 * Runs (or resumes: the same call attaches to a run the store holds) `runId` on `store` until
 * it ends or parks. A failure of the run is an outcome; a failure to reach the journal is
 * thrown, for Restate to retry the segment.
 */
export async function runSegment(
  agent: Agent,
  runId: string,
  input: JsonValue,
  store: JournalStore,
): Promise<Segment> {
  try {
    const output = await agent.invoke(decode(input) as never, {
      runId,
      store,
      parkForApproval: true,
    });
    return { kind: 'ended', ok: true, outcome: succeeded(output) };
  } catch (error) {
    if (ApprovalPendingError.isInstance(error)) return parked(runId, store, error.deadlineAt);
    if (isOutsideTheRun(error)) throw error;
    return { kind: 'ended', ok: false, outcome: failed(error) };
  }
}

/**
 * The journal could not be reached or written (the run host reports a store's fault as a
 * JournalError), or another attempt took the run over: retry, not fail. An entry too large
 * for the store, a corrupt journal or a mismatch would fail again: the run ends failed.
 */
function isOutsideTheRun(error: unknown): boolean {
  if (RestateRequestError.isInstance(error)) return true;
  return JournalError.isInstance(error) && STORE_FAULTS.has(error.reason);
}

const STORE_FAULTS: ReadonlySet<JournalErrorReason> = new Set([
  'run-busy',
  'timed-out',
  'store-failed',
  'no-space',
  'no-permission',
]);

async function parked(
  runId: string,
  store: JournalStore,
  runDeadline: number | undefined,
): Promise<Segment> {
  // Every call the journal says waits, also one whose decision is already in the inbox: its
  // promise was resolved when the decision was posted, so the workflow goes on at once.
  const entries = (await store.read(runId)) ?? [];
  const pending = journaledWaits(runId, entries);
  const waiting = pending.map((call): Waiting => {
    const asked = entries.filter(
      (entry) => isApprovalEntry(entry) && entry.callId === call.callId,
    ).length;
    return {
      callId: call.callId,
      tool: call.tool,
      promise: approvalPromiseName(call.callId, asked),
      requestedAt: call.requestedAt,
      ...(call.deadline !== undefined && { deadline: call.deadline }),
    };
  });
  // maxExecutionTime (a loop's timeout) is a durable timer too: it wakes the parked run.
  const deadlines = waiting.flatMap((call) => (call.deadline === undefined ? [] : [call.deadline]));
  if (runDeadline !== undefined) deadlines.push(runDeadline);
  if (deadlines.length === 0) return { kind: 'parked', waiting };
  const untilFirst = Math.min(...deadlines) - Date.now();
  // A run takes a deadline that has passed rather than park on it; should one park anyway,
  // it is looked at again a second later, not in a busy loop.
  const wakeInMs = untilFirst > 0 ? untilFirst + DEADLINE_SLACK_MS : PASSED_DEADLINE_RETRY_MS;
  return { kind: 'parked', waiting, wakeInMs };
}
