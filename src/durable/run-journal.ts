import type { ApprovalDecision, ApprovalRequest } from '../approvals/approval.js';
import { AbortError } from '../errors.js';
import type { JsonValue } from '../viz/to-json.js';
import { AttachmentBytes } from './attachment-bytes.js';
import { encode } from './codec.js';
import {
  type ConfigFields,
  configChanges,
  configFields,
  type FieldChange,
  readConfigFields,
} from './config-fields.js';
import {
  isEndEntry,
  isStartEntry,
  JOURNAL_FORMAT_VERSION,
  type JournalEntry,
  type RunKind,
  type RunStatus,
  type StartEntry,
} from './journal-entry.js';
import { JournalError } from './journal-error.js';
import { JournalMismatchError } from './journal-mismatch.js';
import { EffectHasher, requestHash } from './request-hash.js';
import {
  type DecisionEntry,
  type ExternalEntry,
  isAnswerEntry,
  isApprovalEntry,
  isAttachmentEntry,
  isCallEntry,
  isDecisionEntry,
  isExternalEntry,
  isRequestEntry,
  isResultEntry,
} from './run-entries.js';
import { StoreGuard } from './store-guard.js';
import type { JournalStore } from './stores/journal-store.js';

/** Lets a store's claim go; bounded, and never rejects (a release is best effort). */
async function releaseQuietly(guard: StoreGuard, release: () => Promise<void>): Promise<void> {
  await guard.guard(release, 'letting the run go').catch(() => {});
}

/** A decision as its journal entry holds it. */
export function decisionOfEntry(entry: DecisionEntry): ApprovalDecision {
  return {
    callId: entry.callId,
    approved: entry.approved,
    ...(typeof entry.reason === 'string' && { reason: entry.reason }),
    ...(entry.timedOut === true && { timedOut: true as const }),
  };
}

/** A tool call the journal knows of: its intent, and its result when it finished. */
export interface JournaledCall {
  readonly callId: string;
  /** Decoded; absent when the call was started and the process died before it answered. */
  readonly result?: unknown;
  readonly finished: boolean;
  readonly executor?: string;
  readonly ms?: number;
  /** Its afterToolCall threw, with these words (see ResultEntry). */
  readonly hookFailed?: string;
}

/** What a tool step journaled about approvals (SPEC H2), in the order the machine got it. */
export type JournaledApproval =
  | {
      readonly kind: 'requested';
      readonly request: ApprovalRequest;
      /** Epoch milliseconds the wait began: its deadline counts from it. */
      readonly at: number;
      readonly timeoutMs?: number;
    }
  | { readonly kind: 'decided'; readonly decision: ApprovalDecision };

/**
 * What to do with an effect the machine asked for, decided by the journal:
 * - `replayed`: it finished before; deliver its journaled answers, run nothing.
 * - `held`: it was in flight when something from outside (ABORT, a deadline) stopped it;
 *   deliver what of it the machine had got by then (its calls that finished, its approvals),
 *   then that, and run nothing.
 * - `live`: run it. `calls` are its tool calls the journal already knows of (a crash in the
 *   middle of a step): a finished one is answered from the journal, a started one is issued
 *   again (once, with its idempotency key), the others run as new.
 */
export type EffectOutcome =
  | {
      readonly kind: 'replayed';
      readonly seq: number;
      readonly calls: readonly JournaledCall[];
      readonly approvals: readonly JournaledApproval[];
      readonly answers: readonly unknown[];
      readonly ms: number | undefined;
    }
  | {
      readonly kind: 'held';
      readonly seq: number;
      readonly external: ExternalEntry;
      /** Its tool calls journaled before the stop: a finished one's result counts (SPEC Q8). */
      readonly calls: readonly JournaledCall[];
      readonly approvals: readonly JournaledApproval[];
    }
  | {
      readonly kind: 'live';
      readonly seq: number;
      readonly hash: string;
      /** True when the request entry is in the journal already: the effect is issued again. */
      readonly reissued: boolean;
      readonly calls: ReadonlyMap<string, JournaledCall>;
      readonly approvals: readonly JournaledApproval[];
      /**
       * The run ended while this effect was in flight, by what the effect told the machine
       * (a call's approval deadline failing the run): deliver that again, start nothing.
       */
      readonly ended?: true;
    };

export interface RunJournalStart {
  readonly runId: string;
  readonly kind: RunKind;
  /** The run's input as its caller gave it (encoded into the start entry). */
  readonly input: unknown;
  /** Everything fixed for the run besides its input (the machine's config): hashed. */
  readonly config: unknown;
  /**
   * The run's setup by field, kept beside the hash to say which option changed when a resumed
   * run differs (configFields); default: `config`'s fields. The tool loop adds its tools.
   */
  readonly fields?: unknown;
}

/**
 * One durable run's journal, for its run host: writes what the run receives from outside its
 * pure machine (see run-entries.ts) and, on resume, answers the machine's requests from what
 * was written before, in the same order, until the journal runs out and the run goes on live.
 *
 * Ordering is the whole point: an entry is appended at the moment its event reaches the
 * machine (appends to one run complete in call order), so the journal's order is the order
 * the machine saw. Intents (`request`, `call`) are awaited before their effect starts, which
 * also waits for every entry before them: nothing runs before what led to it is on disk.
 * Answers, aborts and timer firings are not awaited; a write that fails is reported at the
 * next awaited one, and at the end.
 */
export class RunJournal {
  readonly runId: string;
  readonly kind: RunKind;
  /** Epoch milliseconds, from the start entry: deadlines count from it, across restarts. */
  readonly startedAt: number;
  /** The run's input (decoded from the start entry). */
  readonly input: unknown;
  readonly #store: JournalStore;
  /** Every attachment payload the journal holds, by sha256: each is written once. */
  readonly #bytes: AttachmentBytes;
  /** The entries written before this process took the run over; replayed, then done with. */
  readonly #prior: readonly JournalEntry[];
  #pos: number;
  #seq = 0;
  readonly #hasher = new EffectHasher();
  /** Timer firings delivered from the journal, whose `cancel` must not be journaled again. */
  #replayedTimers = 0;
  #lastWrite: Promise<void> = Promise.resolve();
  /**
   * Set when the run reached its final state: nothing is journaled after `end`. A tool the
   * run's disposal aborts still answers, and a command queued behind the concurrency limit
   * may still try to start; neither is part of the run any more.
   */
  #ending = false;
  #writeError: unknown;
  #failed = false;
  /** Set when replay found the journal and the run disagree; the run host stops the run. */
  #mismatch: JournalMismatchError | undefined;
  #onMismatch: ((error: JournalMismatchError) => void) | undefined;
  /** Gives up the store's claim on the run (JournalStore.acquire), when it has one. */
  #release: (() => Promise<void>) | undefined;
  /** Bounds every store operation (the store's timeoutMs; a grace once the run is cut). */
  readonly #guard: StoreGuard;
  /** Told of the first failed write: the run host stops the run with it. */
  #onFailed: ((error: unknown) => void) | undefined;
  /** The deadline's firing reached the machine in this process (or came from the journal). */
  #deadlineDelivered = false;
  /** Delivers the run's deadline event to its machine (see deliverOverdueDeadline). */
  #onOverdue: (() => void) | undefined;
  /** Stops watching the run's signal and deadline (see bindRun). */
  #unbind: (() => void) | undefined;

  private constructor(
    store: JournalStore,
    guard: StoreGuard,
    start: StartEntry,
    prior: readonly JournalEntry[],
    input: unknown,
    bytes: AttachmentBytes,
  ) {
    this.#bytes = bytes;
    this.#store = store;
    this.#guard = guard;
    this.runId = start.runId;
    this.kind = start.kind;
    this.startedAt = start.startedAt;
    this.input = input;
    this.#prior = prior;
    this.#pos = 1; // past the start entry
  }

  /** Starts a run's journal. A run id the store holds already is a JournalError `run-exists`. */
  static async begin(store: JournalStore, start: RunJournalStart): Promise<RunJournal> {
    // The input's attachment bytes go in the start entry itself, so that it stands alone
    // (a crash right after it leaves a readable run); later entries refer to them.
    const bytes = new AttachmentBytes();
    const input = encode(start.input, { attachmentRef: (data) => bytes.ref(data) });
    const payloads = bytes.takeNew();
    const entry: StartEntry = {
      type: 'start',
      version: JOURNAL_FORMAT_VERSION,
      runId: start.runId,
      kind: start.kind,
      startedAt: Date.now(),
      input,
      ...(payloads.length > 0 && {
        attachments: Object.fromEntries(payloads.map((p) => [p.sha256, p.data])),
      }),
      configHash: requestHash(start.config),
      configFields: configFields(start.fields ?? start.config),
    };
    const guard = new StoreGuard(store, start.runId);
    await guard.guard(() => store.append(start.runId, entry), 'starting the run');
    const journal = new RunJournal(store, guard, entry, [entry], start.input, bytes);
    journal.#release = await journal.#acquired();
    return journal;
  }

  /**
   * Takes over a run the store holds, to replay and continue it. Unknown ids, a run of another
   * kind, a journal of a newer format and a run journaled under another config are refused
   * with an error that says which.
   */
  static async reopen(
    store: JournalStore,
    runId: string,
    kind: RunKind,
    config: unknown,
    fields: unknown = config,
  ): Promise<RunJournal> {
    const guard = new StoreGuard(store, runId);
    // Held before reading, so the entries read are all the last holder wrote.
    const acquire = store.acquire;
    const claimed =
      acquire && (await guard.guard(() => acquire.call(store, runId), 'claiming the run'));
    const release = claimed && (() => releaseQuietly(guard, claimed));
    try {
      const journal = await RunJournal.#reopened(store, guard, runId, kind, config, fields);
      journal.#release = release || undefined;
      return journal;
    } catch (error) {
      if (release) await release();
      throw error;
    }
  }

  /** The store's claim on a run this journal just started (JournalStore.acquire). */
  async #acquired(): Promise<(() => Promise<void>) | undefined> {
    const store = this.#store;
    const acquire = store.acquire;
    if (!acquire) return undefined;
    const claimed = await this.#guard.guard(
      () => acquire.call(store, this.runId),
      'claiming the run',
    );
    return () => releaseQuietly(this.#guard, claimed);
  }

  static async #reopened(
    store: JournalStore,
    guard: StoreGuard,
    runId: string,
    kind: RunKind,
    config: unknown,
    fields: unknown,
  ): Promise<RunJournal> {
    const entries = await guard.guard(() => store.read(runId), 'reading the journal');
    if (entries === undefined) {
      throw new JournalError('unknown-run', `No run '${runId}' in this store: nothing to resume`, {
        runId,
      });
    }
    const start = entries[0];
    if (start === undefined || !isStartEntry(start)) {
      throw new JournalError(
        'corrupt',
        `Run '${runId}': its journal does not open with a start entry`,
        {
          runId,
        },
      );
    }
    if (start.version > JOURNAL_FORMAT_VERSION) {
      throw new JournalError(
        'newer-version',
        `Run '${runId}' was journaled by a newer statecraft (format ${start.version}; this one reads up to ${JOURNAL_FORMAT_VERSION}): resume it with that version`,
        { runId },
      );
    }
    if (start.kind !== kind) {
      throw new JournalError(
        'wrong-kind',
        `Run '${runId}' is a ${start.kind} run: resume it with a ${start.kind === 'chain' ? 'chain' : 'tool loop'}, not a ${kind === 'chain' ? 'chain' : 'tool loop'}`,
        { runId },
      );
    }
    const hash = requestHash(config);
    const journaled = readConfigFields(start.configFields);
    const now = configFields(fields);
    if (start.configHash !== hash) {
      throw new JournalMismatchError({
        entry: 0,
        expectedHash: String(start.configHash),
        actualHash: hash,
        request: `${kind === 'chain' ? 'chain' : 'tool loop'} configuration`,
        ...(journaled && { changes: configChanges(journaled, now) }),
      });
    }
    // Attachment entries hold bytes other entries refer to: known up front, not replayed.
    const bytes = AttachmentBytes.of(entries);
    const journal = new RunJournal(
      store,
      guard,
      start,
      entries.filter((entry) => !isAttachmentEntry(entry)),
      bytes.decode(start.input),
      bytes,
    );
    journal.#fields = now;
    journal.#journaledFields = journaled;
    return journal;
  }

  /** The run's setup by field (configFields), and the journal's when it kept them. */
  #fields: ConfigFields = {};
  #journaledFields: ConfigFields | undefined;

  /**
   * The options that differ from the journal's, for a replayed request that differs: the
   * config hash agreed (the tool loop's tools are not in it, nor is code), but a field the
   * start entry noted may still explain the difference.
   */
  #changes(): { changes?: readonly FieldChange[] } {
    const journaled = this.#journaledFields;
    const changes = journaled ? configChanges(journaled, this.#fields) : [];
    return changes.length > 0 ? { changes } : {};
  }

  /** True while answers still come from the journal. */
  get replaying(): boolean {
    return this.#pos < this.#prior.length;
  }

  /** The status the journal ended with, when the run had ended before this process took it over. */
  get endedAs(): RunStatus | undefined {
    const last = this.#prior.at(-1);
    return last !== undefined && isEndEntry(last) ? last.status : undefined;
  }

  /** The replay disagreed with the journal: the run must stop with this error. */
  get mismatch(): JournalMismatchError | undefined {
    return this.#mismatch;
  }

  /** The store the journal is kept in (approvals read the run's inbox there). */
  get store(): JournalStore {
    return this.#store;
  }

  /**
   * The run has nothing to do but wait for people (SPEC H2, `parkForApproval`): this process
   * lets it go. Nothing more is journaled; the run host ends the run with `error` (see
   * onParked), leaving the journal open for `resume` once the calls are decided.
   */
  park(error: Error): void {
    if (this.#ending || this.#mismatch) return;
    this.#ending = true;
    this.#parkedWith = error;
    this.#onParked?.(error);
  }

  /** Tells `listener` when the run parks (at once if it has). */
  onParked(listener: (error: Error) => void): void {
    this.#onParked = listener;
    if (this.#parkedWith) listener(this.#parkedWith);
  }

  #parkedWith: Error | undefined;
  #onParked: ((error: Error) => void) | undefined;

  /** Tells `listener` of a mismatch (at once if there was one): the run host ends the run with it. */
  onMismatch(listener: (error: JournalMismatchError) => void): void {
    this.#onMismatch = listener;
    if (this.#mismatch) listener(this.#mismatch);
  }

  /**
   * Tells `listener` when a write fails (at once if one has): the run cannot go on, since
   * nothing more may be journaled past the entry that is missing, and the run host stops it
   * with that error (typed, with the partial run), leaving it resumable.
   */
  onFailed(listener: (error: unknown) => void): void {
    this.#onFailed = listener;
    if (this.#failed) listener(this.#writeError);
  }

  /**
   * Watches the run's signal and deadline for the store's sake: once either fires, what the
   * store has not confirmed gets a short grace (StoreGuard), so a stalled store cannot keep a
   * cancelled or timed-out run waiting. Call it once the machine's delays are set.
   */
  bindRun(signal: AbortSignal | undefined): void {
    const cutOnAbort = () => this.#guard.cut('the run was cancelled');
    signal?.addEventListener('abort', cutOnAbort, { once: true });
    if (signal?.aborted) cutOnAbort();
    const deadlineAt = this.#deadlineAt;
    const timer =
      deadlineAt === undefined
        ? undefined
        : setTimeout(
            () => this.#guard.cut('the run reached its time limit'),
            Math.max(0, deadlineAt - Date.now()),
          );
    this.#unbind = () => {
      signal?.removeEventListener('abort', cutOnAbort);
      clearTimeout(timer);
    };
  }

  /** How to deliver the run's deadline event to its machine (see deliverOverdueDeadline). */
  onOverdue(deliver: () => void): void {
    this.#onOverdue = deliver;
  }

  /**
   * Called before a live effect starts. A deadline that passed while no process ran the run
   * (its journaled start is long ago) must fire before anything is issued again, not after:
   * XState schedules the overdue delay for a later tick, by which time the resumed run's
   * first live effect would have started. The machine gets the deadline's event here, at
   * once (its guards decide, as for any firing); it is delivered once.
   */
  deliverOverdueDeadline(): void {
    if (this.#deadlineDelivered || this.replaying || this.#deadlineAt === undefined) return;
    if (Date.now() < this.#deadlineAt) return;
    this.#deadlineDelivered = true;
    this.#onOverdue?.();
  }

  #mismatched(error: JournalMismatchError): undefined {
    this.#mismatch = error;
    this.#onMismatch?.(error);
    return undefined;
  }

  /** Milliseconds left before `limitMs` after the run's journaled start; 0 once passed. */
  remaining(limitMs: number): number {
    if (limitMs > 0) this.#deadlineAt = this.startedAt + limitMs;
    return Math.max(0, this.startedAt + limitMs - Date.now());
  }

  /**
   * Epoch milliseconds the run's own deadline (maxExecutionTime, a loop's timeout) ends, once
   * its machine has set the timer: a parked run must be looked at again by then.
   */
  get deadlineAt(): number | undefined {
    return this.#deadlineAt;
  }

  #deadlineAt: number | undefined;

  /**
   * The machine asked for an effect. Decides from the journal whether to deliver its answer,
   * hold it (something from outside stopped it) or run it; see EffectOutcome. A request that
   * differs from the journaled one records a JournalMismatchError and holds the run forever:
   * the run host ends it with that error (`mismatch`).
   */
  request(effect: string, input: unknown, what: string): EffectOutcome | undefined {
    if (this.#mismatch) return undefined;
    const seq = ++this.#seq;
    const hash = this.#hasher.hash(input);
    if (!this.replaying) {
      return { kind: 'live', seq, hash, reissued: false, calls: new Map(), approvals: [] };
    }
    const index = this.#pos;
    const entry = this.#prior[index] as JournalEntry;
    if (
      !isRequestEntry(entry) ||
      entry.seq !== seq ||
      entry.effect !== effect ||
      entry.hash !== hash
    ) {
      return this.#mismatched(
        new JournalMismatchError({
          entry: index,
          expectedHash: isRequestEntry(entry) ? entry.hash : `(a ${entry.type} entry)`,
          actualHash: hash,
          request:
            isRequestEntry(entry) && entry.effect !== effect
              ? `${what} (journaled: ${entry.effect})`
              : what,
          ...this.#changes(),
        }),
      );
    }
    this.#pos++;
    const calls = new Map<string, JournaledCall>();
    const approvals: JournaledApproval[] = [];
    for (let next = this.#prior[this.#pos]; next; next = this.#prior[++this.#pos]) {
      if (isApprovalEntry(next) && next.seq === seq) {
        approvals.push({
          kind: 'requested',
          request: {
            callId: next.callId,
            tool: next.tool,
            arguments: this.#bytes.decode(next.arguments),
          },
          at: next.at,
          ...(next.timeoutMs !== undefined && { timeoutMs: next.timeoutMs }),
        });
      } else if (isDecisionEntry(next) && next.seq === seq) {
        approvals.push({ kind: 'decided', decision: decisionOfEntry(next) });
      } else if (isCallEntry(next) && next.seq === seq) {
        if (!calls.has(next.callId))
          calls.set(next.callId, { callId: next.callId, finished: false });
      } else if (isResultEntry(next) && next.seq === seq) {
        // Finished calls in the order they finished: a tool loop delivers their records so.
        calls.delete(next.callId);
        calls.set(next.callId, {
          callId: next.callId,
          result: this.#bytes.decode(next.result),
          finished: true,
          ...(next.executor !== undefined && { executor: next.executor }),
          ...(next.ms !== undefined && { ms: next.ms }),
          ...(typeof next.hookFailed === 'string' && { hookFailed: next.hookFailed }),
        });
      } else break;
    }
    const answers: unknown[] = [];
    let ms: number | undefined;
    for (let next = this.#prior[this.#pos]; next; next = this.#prior[++this.#pos]) {
      if (!isAnswerEntry(next) || next.seq !== seq) break;
      answers.push(this.#bytes.decode(next.event));
      ms = next.ms;
    }
    if (answers.length > 0)
      return { kind: 'replayed', seq, calls: [...calls.values()], approvals, answers, ms };
    const next = this.#prior[this.#pos];
    if (next === undefined) return { kind: 'live', seq, hash, reissued: true, calls, approvals };
    if (isEndEntry(next) && approvals.length > 0) {
      return { kind: 'live', seq, hash, reissued: true, calls, approvals, ended: true };
    }
    if (isExternalEntry(next)) {
      this.#pos++;
      if (next.type === 'timer') {
        this.#replayedTimers++;
        this.#deadlineDelivered = true;
      }
      // A call that answered after the stop came too late for the machine: it does not count.
      for (let late = this.#prior[this.#pos]; late; late = this.#prior[++this.#pos]) {
        if (!((isCallEntry(late) || isResultEntry(late)) && late.seq === seq)) break;
      }
      return { kind: 'held', seq, external: next, calls: [...calls.values()], approvals };
    }
    return this.#mismatched(
      new JournalMismatchError({
        entry: this.#pos,
        expectedHash: hash,
        actualHash: `(a ${next.type} entry)`,
        request: `${what}: its answer`,
      }),
    );
  }

  /** Journals a live request before its effect starts (a re-issued one is journaled already). */
  requested(outcome: Extract<EffectOutcome, { kind: 'live' }>, effect: string): Promise<void> {
    if (outcome.reissued) return this.#settled();
    return this.#write({ type: 'request', seq: outcome.seq, effect, hash: outcome.hash });
  }

  /** A tool call of effect `seq` is about to run: its intent, on disk before it starts. */
  callStarting(seq: number, callId: string, name: string): Promise<void> {
    return this.#write({ type: 'call', seq, callId, name });
  }

  /** That call's result (as the host wants it replayed). */
  callFinished(
    seq: number,
    callId: string,
    result: unknown,
    timing: { readonly executor?: string; readonly ms?: number; readonly hookFailed?: string } = {},
  ): void {
    const encoded = this.#encoded(result);
    if (encoded === undefined) return;
    void this.#write({ type: 'result', seq, callId, result: encoded, ...timing }).catch(() => {});
  }

  /**
   * A call of effect `seq` waits for a decision (SPEC H2): on disk before anyone is asked,
   * so `approvals(store)` lists it and its deadline counts from `at` after a restart.
   */
  approvalRequested(
    seq: number,
    request: ApprovalRequest,
    at: number,
    timeoutMs: number | undefined,
  ): Promise<void> {
    const encoded = this.#encoded(request.arguments);
    if (encoded === undefined) return this.#settled();
    return this.#write({
      type: 'approval',
      seq,
      callId: request.callId,
      tool: request.tool,
      arguments: encoded,
      at,
      ...(timeoutMs !== undefined && { timeoutMs }),
    });
  }

  /** The decision the machine took on that call; written before an approved call's intent. */
  approvalDecided(seq: number, decision: ApprovalDecision): void {
    void this.#write({
      type: 'decision',
      seq,
      callId: decision.callId,
      approved: decision.approved,
      ...(decision.reason !== undefined && { reason: decision.reason }),
      ...(decision.timedOut && { timedOut: true as const }),
    }).catch(() => {});
  }

  /** An event effect `seq` sends the machine, journaled as it is delivered. */
  answered(seq: number, event: unknown, ms?: number): void {
    const encoded = this.#encoded(event);
    if (encoded === undefined) return;
    void this.#write({
      type: 'answer',
      seq,
      event: encoded,
      ...(ms !== undefined && { ms }),
    }).catch(() => {});
  }

  /**
   * `value` encoded, or undefined when the codec refuses it (a function in a planner's plan):
   * then the journal has failed, and the next awaited write, or `end`, throws the
   * JournalCodecError naming the path. The answer itself still reaches the machine.
   */
  #encoded(value: unknown): JsonValue | undefined {
    let encoded: JsonValue;
    try {
      encoded = encode(value, { attachmentRef: (data) => this.#bytes.ref(data) });
    } catch (error) {
      this.#fail(error);
      return undefined;
    }
    // New payloads go first: appends complete in call order and none starts after a failed
    // one (#write), so an entry that refers to bytes is never on disk without them.
    for (const entry of this.#bytes.takeNew()) void this.#write(entry).catch(() => {});
    return encoded;
  }

  /** The journal can take nothing more: the first failure is the one the run ends with. */
  #fail(error: unknown): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#writeError = error;
    this.#onFailed?.(error);
  }

  /** ABORT from outside, journaled just before the machine receives it. */
  aborted(reason: string | undefined): void {
    if (this.#mismatch) return;
    void this.#write({ type: 'abort', ...(reason !== undefined && { reason }) }).catch(() => {});
  }

  /**
   * A deadline fired (the machine cancelled its effects because of it). Not journaled again
   * when the firing is one the replay delivered.
   */
  timerFired(name: string): void {
    this.#deadlineDelivered = true;
    if (this.#replayedTimers > 0) {
      this.#replayedTimers--;
      return;
    }
    if (this.#mismatch) return;
    void this.#write({ type: 'timer', name }).catch(() => {});
  }

  /**
   * The run reached a final state: checks the replay consumed the journal, then writes the
   * `end` entry (unless the run had ended before) and waits for every write. Throws the
   * first write that failed, or a JournalMismatchError when the replay ended elsewhere.
   */
  async end(status: 'succeeded' | 'failed'): Promise<void> {
    if (this.#mismatch) throw this.#mismatch;
    const rest = this.#prior.slice(this.#pos);
    const leftover = rest.findIndex((entry) => !isExternalEntry(entry) && !isEndEntry(entry));
    if (leftover >= 0) {
      throw new JournalMismatchError({
        entry: this.#pos + leftover,
        expectedHash: '(more entries)',
        actualHash: '(the run ended)',
        request: 'run: it ended before the journaled run did, and',
      });
    }
    this.#ending = true;
    const ended = this.endedAs;
    if (ended !== undefined && ended !== status) {
      throw new JournalMismatchError({
        entry: this.#prior.length - 1,
        expectedHash: ended,
        actualHash: status,
        request: 'run ending',
      });
    }
    this.#pos = this.#prior.length;
    if (ended === undefined) await this.#write({ type: 'end', status });
    await this.#settled();
    await this.close();
  }

  /**
   * Lets another process take the run over (see JournalStore.acquire); `end` does it, and the
   * run host on every other way a run stops. Idempotent.
   */
  async close(): Promise<void> {
    // Nothing is written after: a tool that ignored its abort and answers now must not land
    // in a journal another writer (maybe this process, resuming it) has taken over.
    this.#ending = true;
    const release = this.#release;
    this.#release = undefined;
    this.#unbind?.();
    this.#unbind = undefined;
    // What was written before (a parked run's last result) is on disk before another
    // process may take the run, or this one exits (bounded: see StoreGuard).
    await this.#lastWrite.catch(() => {});
    await release?.();
  }

  /** Waits for every write issued so far; throws the first that failed. */
  async #settled(): Promise<void> {
    await this.#lastWrite.catch(() => {});
    if (this.#failed) throw this.#writeError;
  }

  #write(entry: JournalEntry): Promise<void> {
    if (this.#ending && entry.type !== 'end') {
      // An intent after the end: its effect must not start. Anything else is dropped.
      return Promise.reject(
        new AbortError(`Run '${this.runId}' has ended: '${entry.type}' is not journaled`),
      );
    }
    // Nothing is written past a failed write: the journal would have a hole a replay cannot
    // cross (an answer whose call's result is missing). The run stops with the first error.
    if (this.#failed) return Promise.reject(this.#writeError);
    const append = () =>
      this.#guard.guard(
        () => this.#store.append(this.runId, entry),
        `appending a "${entry.type}" entry`,
      );
    if (this.#store.orderedAppends === true) {
      // The store fails every append behind a failed one itself: issued at once, an answer and
      // the next intent can go in one request (restateStore batches them).
      const write = append();
      write.catch((error: unknown) => this.#fail(error));
      this.#lastWrite = write;
      // Appends complete in call order, so an earlier failure is known when this one resolves.
      return write.then(() => {
        if (this.#failed) throw this.#writeError;
      });
    }
    // Each append starts once the one before it succeeded: a store whose queue runs the next
    // append after a failed one would otherwise put an entry on disk after the hole, such as a
    // result whose attachment's bytes were refused.
    const write = this.#lastWrite.then(() => {
      if (this.#failed) throw this.#writeError;
      return append();
    });
    write.catch((error: unknown) => this.#fail(error));
    this.#lastWrite = write;
    return write;
  }
}
