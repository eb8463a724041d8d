import type { ApprovalDecision, ApprovalRequest } from '../approvals/approval.js';
import { checkId, checkShape, DECISION_SHAPE } from '../approvals/decision-shape.js';
import { cappedReason, DEFAULT_MAX_REASON_LENGTH } from '../approvals/reason.js';
import { StatecraftError } from '../errors.js';
import { type Describes, describeOptions } from '../options/describe.js';
import { integer } from '../options/kinds.js';
import { OptionProblems } from '../options/problems.js';
import { AttachmentBytes } from './attachment-bytes.js';
import { bounded, DEFAULT_STORE_TIMEOUT_MS } from './bounded.js';
import { isStartEntry, type JournalEntry, type RunKind } from './journal-entry.js';
import { JournalError } from './journal-error.js';
import { isApprovalEntry, isDecisionEntry } from './run-entries.js';
import { isReadable, type JournalStore } from './stores/journal-store.js';
import { storeFault } from './stores/store-fault.js';

// SPEC H2 / X2: decisions on the calls durable runs wait for, from any process. A decision is
// a message left beside the run's journal (JournalStore.post), never written into it: the
// journal has one writer, the run's host, which reads the message while the run waits (or
// when it resumes) and journals the decision as its machine takes it. The first decision on
// a call is the one that counts; a second one, from anyone, changes nothing.
//
// A message counts only for the request it names (the `at` of its journaled request), and
// only when it is dated within that request's life: not before the call was asked, not in the
// future. An inbox line of any other kind (hand-written, from an older version, dated ahead)
// never decides a call: it could approve one that was never asked.

/** A call a durable run waits on, as `approvals(store).list()` reports it. */
export interface PendingApproval extends ApprovalRequest {
  readonly runId: string;
  readonly kind: RunKind;
  /** Epoch milliseconds the call began to wait. */
  readonly requestedAt: number;
  /** Epoch milliseconds its approvalTimeoutMs ends, if it has one. */
  readonly deadline?: number;
}

/** Decisions on a store's runs, from any process. */
export interface Approvals {
  /** The calls waiting for a decision, of one run or of every run in the store. */
  list(runId?: string): Promise<readonly PendingApproval[]>;
  /**
   * Approves a waiting call. Resolves true when the decision is recorded and no earlier one was
   * (two deciders at the same instant may both see true: the first posted counts), false when
   * the call was decided before (by anyone, or its deadline passed) or its run has ended. A call id the run
   * never asked about is a JournalError `unknown-call`; an unknown run, `unknown-run`.
   */
  approve(runId: string, callId: string): Promise<boolean>;
  /** Rejects a waiting call: the model reads `Not approved: <reason>`. As approve otherwise. */
  reject(runId: string, callId: string, reason?: string): Promise<boolean>;
  decide(runId: string, decision: ApprovalDecision): Promise<boolean>;
}

/** A decision as the run's inbox holds it. */
interface DecisionMessage extends JournalEntry {
  readonly type: 'decision';
  readonly callId: string;
  readonly approved: boolean;
  readonly reason?: string;
  readonly at: number;
  /**
   * The `at` of the request it answers, as the decider read it from the journal: the request
   * it is for, exactly, whatever the clocks of the decider and the run's host say.
   */
  readonly requestedAt: number;
}

/** A decision from a run's inbox, and when it was posted (epoch milliseconds). */
export interface PostedDecision {
  readonly decision: ApprovalDecision;
  readonly at: number;
}

/**
 * The decision in a run's inbox on the call `request` asks about: the first message that names
 * this request (`requestedAt`, the `at` of its journaled request: never an earlier request the
 * model gave the same id) and is dated between the request and `now`; under a deadline, none
 * when that one came after it (too late).
 */
export function postedDecision(
  messages: readonly JournalEntry[],
  request: { readonly callId: string; readonly at: number; readonly deadline?: number },
  now: number = Date.now(),
): PostedDecision | undefined {
  for (const message of messages) {
    if (!isDecisionMessage(message) || message.callId !== request.callId) continue;
    if (message.requestedAt !== request.at) continue;
    // Posted before the call was asked, or dated in the future: no decider could have read
    // this request then, and no clock says it was posted yet. approvals(store) dates a
    // decision no earlier than the request it answers, whatever the decider's clock says.
    if (message.at < request.at || message.at > now) continue;
    if (request.deadline !== undefined && message.at > request.deadline) return undefined;
    const { reason } = message;
    return {
      decision: {
        callId: message.callId,
        approved: message.approved,
        ...(typeof reason === 'string' && reason !== '' && { reason }),
      },
      at: message.at,
    };
  }
  return undefined;
}

/** The request's own decision is in the inbox (see postedDecision). */
function decidedInInbox(messages: readonly JournalEntry[], pending: PendingApproval): boolean {
  return (
    postedDecision(messages, {
      callId: pending.callId,
      at: pending.requestedAt,
      ...(pending.deadline !== undefined && { deadline: pending.deadline }),
    }) !== undefined
  );
}

function isDecisionMessage(message: JournalEntry): message is DecisionMessage {
  return (
    message.type === 'decision' &&
    typeof message.callId === 'string' &&
    typeof message.approved === 'boolean' &&
    typeof message.at === 'number' &&
    typeof message.requestedAt === 'number' &&
    (message.reason === undefined || typeof message.reason === 'string')
  );
}

/** The options of `approvals(store, options)`. */
export interface ApprovalsOptions {
  /**
   * Characters of a rejection's reason posted (default 1,000): a longer one is cut, saying so
   * (`… [reason cut at N characters]`), before it is stored. The run cuts it again to its own
   * `maxApprovalReasonLength`, if that is shorter.
   */
  readonly maxReasonLength?: number;
}

/** approvals()'s options described once (see src/options/describe.ts). */
export const APPROVALS_OPTIONS = describeOptions('approvals', {
  maxReasonLength: integer(1, { default: DEFAULT_MAX_REASON_LENGTH }),
});
// tsc fails here, naming the option, when ApprovalsOptions and its description drift apart.
const _described: Describes<ApprovalsOptions, typeof APPROVALS_OPTIONS> = true;

/**
 * Decisions on the runs of `store`; the store must keep messages (`post`, `posted`). What a
 * decider gives is checked (an InputError names every problem) and a reason cut to
 * `maxReasonLength` before anything is posted.
 */
export function approvals(store: JournalStore, options: ApprovalsOptions = {}): Approvals {
  const problems = new OptionProblems('approvals');
  const { post, posted } = (store ?? {}) as Partial<JournalStore>;
  if (typeof post !== 'function' || typeof posted !== 'function') {
    problems.add(
      'store',
      'approvals(store): this store keeps no messages for its runs (post / posted); fileStore and memoryStore do',
    );
  }
  const isObject = typeof options === 'object' && options !== null;
  const given = (isObject ? options : {}) as Readonly<Record<string, unknown>>;
  if (!isObject) problems.add('options', 'must be an object { maxReasonLength? }');
  const { maxReasonLength } = APPROVALS_OPTIONS.collect(given, problems);
  problems.throwIfAny();
  return decisionsOn(store, maxReasonLength);
}

function decisionsOn(store: JournalStore, maxReasonLength: number): Approvals {
  // Bounded and typed like every store operation a run makes: a store that never answers
  // ends a decision or a listing with a JournalError `timed-out`, not a wait without end.
  const timeoutMs = store.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS;
  const ask = <T>(work: () => Promise<T>, doing: string, runId?: string): Promise<T> =>
    bounded(
      Promise.resolve()
        .then(work)
        .catch((error: unknown) => {
          // A typed error of the store's own (Restate's credential refusal) says best what to do.
          throw StatecraftError.isInstance(error)
            ? error
            : storeFault(error, doing, runId === undefined ? {} : { runId });
        }),
      timeoutMs,
      doing,
      runId,
    );
  const read = (runId: string) => ask(() => store.read(runId), 'reading the journal', runId);
  const inbox = (runId: string) =>
    ask(() => store.posted?.(runId) ?? Promise.resolve([]), 'reading messages', runId);
  const decide = async (runId: string, decision: ApprovalDecision): Promise<boolean> => {
    const entries = await read(runId);
    if (entries === undefined) {
      throw new JournalError('unknown-run', `No run '${runId}' in this store: nothing to decide`, {
        runId,
      });
    }
    const { pending, asked, ended } = approvalsOf(runId, entries);
    if (!asked.has(decision.callId)) {
      throw new JournalError(
        'unknown-call',
        `Run '${runId}' never asked for approval of call '${decision.callId}'${pending.length ? `; it waits on ${pending.map((p) => p.callId).join(', ')}` : ''}`,
        { runId },
      );
    }
    const waiting = pending.find((p) => p.callId === decision.callId);
    if (ended || !waiting) return false;
    // Past its deadline the call is rejected, whenever a process gets to it: too late.
    if (waiting.deadline !== undefined && Date.now() > waiting.deadline) return false;
    if (decidedInInbox(await inbox(runId), waiting)) return false;
    const message: DecisionMessage = {
      type: 'decision',
      callId: decision.callId,
      approved: decision.approved,
      ...(!decision.approved &&
        decision.reason && { reason: cappedReason(decision.reason, maxReasonLength) }),
      // Never before the request it answers, though this clock be behind the run's.
      at: Math.max(Date.now(), waiting.requestedAt),
      requestedAt: waiting.requestedAt,
    };
    await ask(() => store.post?.(runId, message) ?? Promise.resolve(), 'posting a decision', runId);
    notifyDecision(store, runId);
    return true;
  };
  return {
    async list(runId) {
      if (runId !== undefined) checkId(runId, 'runId', 'approvals(store).list(runId?)');
      // A run whose journal cannot be read is left out: its approvals cannot be known.
      const runIds =
        runId === undefined
          ? (await ask(() => store.list(), 'listing the runs'))
              .filter(isReadable)
              .map((r) => r.runId)
          : [runId];
      const all: PendingApproval[] = [];
      for (const id of runIds) {
        const entries = await read(id);
        if (entries === undefined) {
          if (runId === undefined) continue; // deleted while listing
          throw new JournalError('unknown-run', `No run '${id}' in this store`, { runId: id });
        }
        const { pending, ended } = approvalsOf(id, entries);
        if (ended || pending.length === 0) continue;
        const messages = await inbox(id);
        all.push(...pending.filter((p) => !decidedInInbox(messages, p)));
      }
      return all;
    },
    approve: async (runId, callId) => {
      const what = 'approvals(store).approve(runId, callId)';
      checkId(runId, 'runId', what);
      checkId(callId, 'callId', what);
      return decide(runId, { callId, approved: true });
    },
    reject: async (runId, callId, reason) => {
      const what = 'approvals(store).reject(runId, callId, reason?)';
      checkId(runId, 'runId', what);
      checkShape({ callId, approved: false, reason }, DECISION_SHAPE, what);
      return decide(
        runId,
        reason ? { callId, approved: false, reason } : { callId, approved: false },
      );
    },
    decide: async (runId, decision) => {
      const what = 'approvals(store).decide(runId, { callId, approved, reason? })';
      checkId(runId, 'runId', what);
      checkShape(decision, DECISION_SHAPE, what);
      return decide(runId, decision);
    },
  };
}

/**
 * The calls a run's journal says still wait for a decision: asked about, not yet decided in
 * the journal (whether or not a decision already waits in the inbox).
 */
export function journaledWaits(
  runId: string,
  entries: readonly JournalEntry[],
): readonly PendingApproval[] {
  return approvalsOf(runId, entries).pending;
}

/** What a run's journal says of its approvals: the calls still waiting, all it asked about. */
function approvalsOf(
  runId: string,
  entries: readonly JournalEntry[],
): {
  readonly pending: readonly PendingApproval[];
  readonly asked: ReadonlySet<string>;
  readonly ended: boolean;
} {
  const start = entries[0];
  const kind: RunKind = start && isStartEntry(start) ? start.kind : 'chain';
  const waiting = new Map<string, PendingApproval>();
  const asked = new Set<string>();
  // Arguments may hold attachments, journaled once elsewhere in the run (attachment-bytes.ts).
  const bytes = AttachmentBytes.of(entries);
  for (const entry of entries) {
    if (isApprovalEntry(entry)) {
      asked.add(entry.callId);
      waiting.set(entry.callId, {
        runId,
        kind,
        callId: entry.callId,
        tool: entry.tool,
        arguments: bytes.decode(entry.arguments),
        requestedAt: entry.at,
        ...(typeof entry.timeoutMs === 'number' && { deadline: entry.at + entry.timeoutMs }),
      });
    } else if (isDecisionEntry(entry)) {
      waiting.delete(entry.callId);
    }
  }
  return { pending: [...waiting.values()], asked, ended: entries.at(-1)?.type === 'end' };
}

// Runs waiting in this process, told at once of a decision posted here; runs in other
// processes find it when they next read their inbox.
const watchers = new WeakMap<JournalStore, Map<string, Set<() => void>>>();

/** Calls `onDecision` whenever a decision on `runId` is posted in this process; returns unwatch. */
export function watchDecisions(
  store: JournalStore,
  runId: string,
  onDecision: () => void,
): () => void {
  let runs = watchers.get(store);
  if (!runs) {
    runs = new Map();
    watchers.set(store, runs);
  }
  const forRun = runs.get(runId) ?? new Set();
  runs.set(runId, forRun);
  forRun.add(onDecision);
  return () => {
    forRun.delete(onDecision);
    if (forRun.size === 0) runs.delete(runId);
  };
}

function notifyDecision(store: JournalStore, runId: string): void {
  for (const onDecision of watchers.get(store)?.get(runId) ?? []) onDecision();
}
