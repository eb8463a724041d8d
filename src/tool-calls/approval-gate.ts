import {
  type ApprovalDecision,
  type ApprovalRequest,
  type ApproveCallback,
  decisionOf,
  rejectedResult,
} from '../approvals/approval.js';
import { postedDecision, watchDecisions } from '../durable/approvals.js';
import { bounded, DEFAULT_STORE_TIMEOUT_MS } from '../durable/bounded.js';
import type { JournaledApproval } from '../durable/run-journal.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import type { ApprovedCall } from '../host/run-details.js';
import type { ToolCall, ToolResult } from '../messages.js';
import type { ToolCallJournal } from './call-journal.js';
import type { LocalToolRegistry } from './local-registry.js';

// SPEC H2, the host's half: which calls of a step wait for a person, and when each may run.
// The machine holds the policy (`awaitingApproval`, which decisions count, what a deadline
// does); the gate asks (journaling the request first), collects decisions from every source
// (the run's `approve` callback, the run's inbox in a durable store, the deadline), sends
// them to the machine as events, and lets a call through only when the machine forwards a
// decision (`decide`). An app machine's APPROVE / REJECT reaches the machine directly and
// comes back here the same way.

/** How often a waiting durable run reads its inbox for decisions posted by other processes. */
export const APPROVAL_POLL_MS = 200;

/** Where a durable run's decisions arrive from other processes. */
export interface ApprovalInbox {
  readonly runId: string;
  readonly store: JournalStore;
}

export interface ApprovalGateOptions {
  readonly local: LocalToolRegistry;
  readonly approve?: ApproveCallback;
  /** The chain's approvalTimeoutMs: a tool's own overrides it. */
  readonly timeoutMs?: number;
  readonly inbox?: ApprovalInbox;
  /** Told when every unsettled call of the step waits for a person (parkForApproval). */
  readonly onOnlyWaiting?: (waiting: readonly ApprovalRequest[]) => void;
  /** Epoch milliseconds the run's own deadline ends (parking waits for one that has passed). */
  readonly runDeadline?: () => number | undefined;
  /** Told of each request and decision, for details() and observers. */
  readonly onRequested?: (request: ApprovalRequest) => void;
  readonly onDecided?: (decision: ApprovalDecision, waitedMs: number) => void;
}

/** What the gate says of one call: run it, or answer it with `result` (not approved). */
export interface Admission {
  readonly result?: ToolResult;
  readonly decision?: ApprovalDecision;
  readonly waitedMs?: number;
  /**
   * The step was stopped (abort, deadline, the run's end, parking) before a decision: the
   * result is a placeholder no one reads, and nothing of it is recorded or journaled.
   */
  readonly abandoned?: true;
}

interface Waiter {
  readonly request: ApprovalRequest;
  /** Epoch milliseconds it began to wait (journaled), and its deadline, if it has one. */
  readonly at: number;
  readonly deadline: number | undefined;
  readonly journal: ToolCallJournal | undefined;
  readonly since: number;
  /** Undefined: abandoned, no decision (see Admission). */
  readonly resolve: (decision: ApprovalDecision | undefined) => void;
  timer?: ReturnType<typeof setTimeout>;
}

type MachineEvent =
  | { readonly type: 'approval.requested'; readonly request: ApprovalRequest }
  | { readonly type: 'approval.timedOut'; readonly callId: string; readonly timeoutMs: number }
  | { readonly type: 'APPROVE'; readonly callId: string }
  | { readonly type: 'REJECT'; readonly callId: string; readonly reason?: string };

const ADMITTED: Admission = {};

export class ApprovalGate {
  readonly #options: ApprovalGateOptions;
  #send: ((event: MachineEvent) => void) | undefined;
  readonly #waiters = new Map<string, Waiter>();
  /** Decisions the journal delivered again: the machine forwards them, they are not rewritten. */
  readonly #replayed = new Set<string>();
  /** Decisions sent to the machine and not yet forwarded back: not sent twice. */
  readonly #sent = new Set<string>();
  /** Calls of the step in progress that have not settled; approvals' callbacks in flight. */
  #unsettled = 0;
  #asking = 0;
  #poll: ReturnType<typeof setTimeout> | undefined;
  #unwatch: (() => void) | undefined;

  constructor(options: ApprovalGateOptions) {
    this.#options = options;
  }

  /** True when some tool of the registry declares needsApproval. */
  static needed(local: LocalToolRegistry): boolean {
    return local
      .list()
      .some((tool) => tool.needsApproval !== undefined && tool.needsApproval !== false);
  }

  /** The effects actor's way to the machine, once it starts. */
  attach(send: (event: MachineEvent) => void): void {
    this.#send = send;
  }

  /**
   * A resumed step: what the journal holds of its approvals goes to the machine again, in
   * order, so that it waits on (or has decided) exactly what it had before.
   */
  replay(approvals: readonly JournaledApproval[]): void {
    for (const event of approvals) {
      if (event.kind === 'requested') {
        this.#send?.({ type: 'approval.requested', request: event.request });
        continue;
      }
      const { decision } = event;
      this.#replayed.add(decision.callId);
      this.#send?.(decisionEvent(decision, timeoutOf(approvals, decision.callId)));
    }
  }

  /** A step of `count` calls begins. */
  stepStarted(count: number): void {
    this.#unsettled = count;
  }

  /** One of its calls settled (ran, or was answered). */
  callSettled(): void {
    this.#unsettled--;
    this.#checkOnlyWaiting();
  }

  /**
   * Whether `call` may run: at once (it needs no approval), once approved, or never (the
   * result says why). A call the journal knows was decided gets that decision again.
   */
  async admit(call: ToolCall, signal: AbortSignal, journal?: ToolCallJournal): Promise<Admission> {
    const known = journal?.approvals ?? [];
    const decided = known.find((e) => e.kind === 'decided' && e.decision.callId === call.id);
    if (decided?.kind === 'decided') return admission(call, decided.decision, 0);
    const asked = known.find((e) => e.kind === 'requested' && e.request.callId === call.id);
    let request: ApprovalRequest;
    let at: number;
    let timeoutMs: number | undefined;
    if (asked?.kind === 'requested') {
      ({ request, at, timeoutMs } = asked);
    } else {
      const needed = await this.#needsApproval(call, signal);
      if (!needed) return ADMITTED;
      request = { callId: call.id, tool: call.name, arguments: call.arguments };
      at = Date.now();
      timeoutMs = this.#options.local.get(call.name)?.approvalTimeoutMs ?? this.#options.timeoutMs;
      await journal?.approvalRequested(request, at, timeoutMs);
      if (signal.aborted) return abandoned(call);
    }
    const since = performance.now();
    const decision = await new Promise<ApprovalDecision | undefined>((resolve) => {
      const deadline = timeoutMs === undefined ? undefined : at + timeoutMs;
      const waiter: Waiter = { request, at, deadline, journal, since, resolve };
      this.#waiters.set(call.id, waiter);
      const onAbort = () => this.#forget(call.id, undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      // Observers of this process hear of the wait, also one an earlier process began (a
      // resumed run is a new run to them). The machine learns of it now only if it is fresh:
      // a journaled one was replayed to it.
      this.#options.onRequested?.(request);
      if (!asked) this.#send?.({ type: 'approval.requested', request });
      if (timeoutMs !== undefined) {
        const ms = timeoutMs;
        // A decision posted before the deadline wins, even one read only now (a resume
        // after the deadline, a poll not yet due): the inbox is read first.
        const expire = () =>
          this.#sendOnce(call.id, { type: 'approval.timedOut', callId: call.id, timeoutMs: ms });
        waiter.timer = setTimeout(
          () => void this.#readInbox().then(expire),
          Math.max(0, at + ms - Date.now()),
        );
      }
      this.#askCallback(request, signal);
      this.#watchInbox();
      this.#checkOnlyWaiting();
    });
    if (!decision) return abandoned(call);
    return admission(call, decision, performance.now() - since);
  }

  /** The machine took `decision` (forwarded by it): journaled, and the call goes on. */
  decide(decision: ApprovalDecision): void {
    const { callId } = decision;
    this.#sent.delete(callId);
    const waiter = this.#waiters.get(callId);
    if (this.#replayed.delete(callId)) {
      // Decided before the restart: already journaled.
    } else {
      waiter?.journal?.approvalDecided(decision);
    }
    if (waiter) {
      this.#options.onDecided?.(decision, performance.now() - waiter.since);
      this.#forget(callId, decision);
    }
  }

  /** The calls waiting for a decision now. */
  get waiting(): readonly ApprovalRequest[] {
    return [...this.#waiters.values()].map((w) => w.request);
  }

  /** The run ended: no timer or inbox read outlives it. */
  close(): void {
    for (const callId of [...this.#waiters.keys()]) this.#forget(callId, undefined);
  }

  #forget(callId: string, decision: ApprovalDecision | undefined): void {
    const waiter = this.#waiters.get(callId);
    if (!waiter) return;
    this.#waiters.delete(callId);
    this.#sent.delete(callId);
    if (waiter.timer) clearTimeout(waiter.timer);
    if (this.#waiters.size === 0) this.#stopInbox();
    waiter.resolve(decision);
  }

  async #needsApproval(call: ToolCall, signal: AbortSignal): Promise<boolean> {
    const tool = this.#options.local.get(call.name);
    const needsApproval = tool?.needsApproval;
    if (!tool || needsApproval === undefined || needsApproval === false) return false;
    // Arguments the tool refuses fail the call anyway (SPEC H4): no one is asked about them.
    const parsed = tool.input.safeParse(call.arguments);
    if (!parsed.success) return false;
    if (needsApproval === true) return true;
    try {
      const runId = this.#options.inbox?.runId;
      return (
        (await needsApproval(parsed.data, {
          toolCallId: call.id,
          signal,
          ...(runId !== undefined && { runId }),
        })) !== false
      );
    } catch {
      // A predicate that throws cannot say the call is safe: it waits for a person.
      return true;
    }
  }

  /** The run's `approve` callback, asked once per call; its answer goes to the machine. */
  #askCallback(request: ApprovalRequest, signal: AbortSignal): void {
    const { approve, inbox } = this.#options;
    if (!approve) return;
    this.#asking++;
    const asked = Promise.resolve().then(() =>
      approve({ ...request, ...(inbox && { runId: inbox.runId }) }, { signal }),
    );
    // An answer it cannot read (not true, false, { approved } or undefined) is its failure too.
    asked
      .then((answer) => decisionOf(request.callId, answer))
      .catch(
        (error: unknown): ApprovalDecision => ({
          callId: request.callId,
          approved: false,
          reason: `the approve callback failed: ${error instanceof Error ? error.message : String(error)}`,
        }),
      )
      .then((decision) => {
        this.#asking--;
        if (decision && !signal.aborted) this.#sendOnce(request.callId, decisionEvent(decision));
        else this.#checkOnlyWaiting();
      });
  }

  #sendOnce(callId: string, event: MachineEvent): void {
    if (!this.#waiters.has(callId) || this.#sent.has(callId)) return;
    this.#sent.add(callId);
    this.#send?.(event);
  }

  /** A durable run reads its inbox now, then every APPROVAL_POLL_MS while calls wait. */
  #watchInbox(): void {
    const { inbox } = this.#options;
    if (!inbox || this.#unwatch || typeof inbox.store.posted !== 'function') return;
    this.#inboxChecked = false;
    this.#unwatch = watchDecisions(inbox.store, inbox.runId, () => void this.#readInbox());
    void this.#readInbox();
  }

  #stopInbox(): void {
    this.#unwatch?.();
    this.#unwatch = undefined;
    if (this.#poll) clearTimeout(this.#poll);
    this.#poll = undefined;
  }

  #inboxRead: Promise<void> | undefined;
  /** Whether the inbox was read since the calls began to wait (parking waits for one read). */
  #inboxChecked = false;

  #readInbox(): Promise<void> {
    const { inbox } = this.#options;
    if (!inbox?.store.posted) return Promise.resolve();
    if (this.#inboxRead) return this.#inboxRead;
    const { store } = inbox;
    // Bounded like every store operation: a stalled inbox is read again at the next poll.
    const read = bounded(
      Promise.resolve().then(() => store.posted?.(inbox.runId) ?? []),
      store.timeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
      'reading messages',
      inbox.runId,
    )
      .then((messages) => {
        for (const waiter of [...this.#waiters.values()]) {
          const posted = postedDecision(messages, {
            callId: waiter.request.callId,
            at: waiter.at,
            ...(waiter.deadline !== undefined && { deadline: waiter.deadline }),
          });
          if (posted) this.#sendOnce(posted.decision.callId, decisionEvent(posted.decision));
        }
      })
      .catch(() => {
        // An unreadable inbox is read again at the next poll.
      })
      .finally(() => {
        this.#inboxRead = undefined;
        this.#inboxChecked = true;
        if (this.#poll) clearTimeout(this.#poll);
        this.#poll = undefined;
        if (this.#waiters.size > 0 && this.#unwatch) {
          // Not unref'd: a run that waits for a decision from another process is alive
          // (the process must not quietly exit under it); parkForApproval lets it go instead.
          this.#poll = setTimeout(() => void this.#readInbox(), APPROVAL_POLL_MS);
        }
        this.#checkOnlyWaiting();
      });
    this.#inboxRead = read;
    return read;
  }

  /** Every unsettled call waits for a person, and no decision is on its way: tell the run. */
  #checkOnlyWaiting(): void {
    const { onOnlyWaiting, inbox } = this.#options;
    if (!onOnlyWaiting || this.#waiters.size === 0) return;
    if (this.#unsettled !== this.#waiters.size || this.#asking > 0 || this.#sent.size > 0) return;
    if (inbox && (!this.#inboxChecked || this.#inboxRead)) return;
    // A deadline that has passed is a decision on its way (its timer reads the inbox, then
    // rejects): a run resumed after it must take it, not park again on the same call.
    // So is the run's own deadline (maxExecutionTime, a loop's timeout): its timer ends the step.
    const now = Date.now();
    for (const waiter of this.#waiters.values()) {
      if (waiter.deadline !== undefined && waiter.deadline <= now) return;
    }
    const runDeadline = this.#options.runDeadline?.();
    if (runDeadline !== undefined && runDeadline <= now) return;
    onOnlyWaiting(this.waiting);
  }
}

/** A decision as details() shows it on its call. */
export function approvedCall(decision: ApprovalDecision, waitedMs = 0): ApprovedCall {
  return {
    approved: decision.approved,
    ...(decision.reason !== undefined && { reason: decision.reason }),
    ...(decision.timedOut && { timedOut: true as const }),
    waitedMs: Math.round(waitedMs * 10) / 10,
  };
}

function abandoned(call: ToolCall): Admission {
  return { result: rejectedResult(call, 'the step was stopped first'), abandoned: true };
}

function admission(call: ToolCall, decision: ApprovalDecision, waitedMs: number): Admission {
  return decision.approved
    ? { decision, waitedMs }
    : { result: rejectedResult(call, decision.reason), decision, waitedMs };
}

/** The machine's event for a decision (a deadline's carries its length). */
function decisionEvent(decision: ApprovalDecision, timeoutMs?: number): MachineEvent {
  if (decision.timedOut) {
    return { type: 'approval.timedOut', callId: decision.callId, timeoutMs: timeoutMs ?? 0 };
  }
  return decision.approved
    ? { type: 'APPROVE', callId: decision.callId }
    : {
        type: 'REJECT',
        callId: decision.callId,
        ...(decision.reason !== undefined && { reason: decision.reason }),
      };
}

function timeoutOf(approvals: readonly JournaledApproval[], callId: string): number | undefined {
  for (const event of approvals) {
    if (event.kind === 'requested' && event.request.callId === callId) return event.timeoutMs;
  }
  return undefined;
}
