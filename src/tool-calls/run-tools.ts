import pLimit from 'p-limit';
import type { ExecuteToolsOutput } from '../../machines/chain.js';
import { isAsyncIterable } from '../host/async-iterable.js';
import type { ApprovedCall, ToolCallDone } from '../host/run-details.js';
import { failedToolResult, type ToolCall, type ToolResult } from '../messages.js';
import type { ToolSpec } from '../model/language-model.js';
import { ABORTED, raceAbort } from '../race-abort.js';
import {
  allCallsSettled,
  type HookedCall,
  hookFailureText,
  journaledHookFailure,
  ToolHookError,
  type ToolHooks,
} from '../tools/hooks.js';
import type { InvalidToolCallPolicy } from '../tools/invalid-tool-call.js';
import { refuseCollisions } from '../tools/name-collision.js';
import type { RemoteToolExecutor } from '../tools/remote-executor.js';
import { type ApprovalGate, approvedCall } from './approval-gate.js';
import type { ToolCallJournal } from './call-journal.js';
import { DEADLINE, deadlineAfter } from './deadline.js';
import type { LocalToolRegistry } from './local-registry.js';
import { callRemote, NO_RETURN } from './remote-call.js';
import {
  NO_LINK,
  RunStreams,
  STOP_STREAM_TOOL,
  type StreamLink,
  stopStreamTool,
} from './run-streams.js';

export { STOP_STREAM_TOOL };

export interface RunToolsOptions {
  readonly local: LocalToolRegistry;
  /** Read at every model call and tool step, so connecting mid-run takes effect at the next one. */
  readonly remote: () => RemoteToolExecutor | undefined;
  /** At most this many calls of one step run at once; undefined: all at once. */
  readonly concurrency: number | undefined;
  /** A call still running after this long is answered with a failed result. */
  readonly timeoutMs: number | undefined;
  /** Items read from a streaming tool per step. */
  readonly streamBatchSize: number;
  /** Told of every call as it starts, with who runs it (observers only, SPEC X4). */
  readonly onCallStart?: (call: ToolCall, executor: string, startedAt: number) => void;
  /** Told of every finished call, with who ran it and when (`performance.now()` times). */
  readonly onCallDone?: (done: ToolCallDone) => void;
  /** Which calls wait for a person, and until when (SPEC H2); none: no tool needs approval. */
  readonly approvals?: ApprovalGate;
  /** The run's beforeToolCall / afterToolCall hooks (SPEC H1), if it has any. */
  readonly hooks?: ToolHooks;
  /** What the model reads for arguments that are not JSON or fail the schema (SPEC H4). */
  readonly invalidToolCall?: InvalidToolCallPolicy;
}

/** One call as #timed runs it: durable runs add its key and whether it is a second attempt. */
interface CallAttempt {
  readonly idempotencyKey?: string;
  readonly possiblyRepeated?: true;
}

/**
 * A call #timed ran: its result, what details() is to record of it (once it settled), and
 * the afterToolCall failure the step is to fail with once the call is recorded.
 */
interface TimedCall {
  readonly result: ToolResult;
  readonly done: ToolCallDone | undefined;
  readonly hookFailed?: ToolHookError;
}

/**
 * The tools of one run: remote first, local registry as the fallback (SPEC C10), calls of a
 * step concurrent under an optional cap, per-call timeouts, and streaming tools whose
 * AsyncIterable results are read in batches across steps until they end or the model calls
 * the built-in stop tool (SPEC C11). One per run, because open streams belong to a run.
 */
export class RunTools {
  readonly #options: RunToolsOptions;
  readonly #streams: RunStreams;
  /** Signal links of calls whose result is a stream: kept until the stream closes. */
  readonly #links = new Map<string, StreamLink>();
  /** Calls sent to the remote executor, by id, with its name: for onCallDone. */
  readonly #remoteCalls = new Map<string, string>();
  /** Calls a person approved, until onCallDone records them. */
  readonly #approved = new Map<string, ApprovedCall>();
  readonly #limit: (<T>(fn: () => Promise<T>) => Promise<T>) | undefined;
  #remoteTools:
    | { remote: RemoteToolExecutor; specs: Promise<readonly ToolSpec[] | undefined> }
    | undefined;
  #step = 0;
  readonly #localSpecs: readonly ToolSpec[];

  constructor(options: RunToolsOptions) {
    this.#options = options;
    this.#streams = new RunStreams(options.timeoutMs, options.streamBatchSize);
    this.#localSpecs = Object.freeze(options.local.specs());
    this.#limit = options.concurrency === undefined ? undefined : pLimit(options.concurrency);
  }

  /**
   * What the model is told: remote tools, local ones it does not shadow, and the stop tool
   * while a stream is open. Throws ToolCollisionError when the remote lists a local tool's
   * name without `shadowLocalTools` (SPEC C10): the model must not be offered either.
   */
  async specs(signal: AbortSignal): Promise<readonly ToolSpec[]> {
    const remote = this.#options.remote();
    const local = this.#localSpecs;
    // The common case, no remote and no open stream, shares one array across calls.
    if (!remote && this.#streams.size === 0) return local;
    const remoteSpecs = await this.#remoteSpecs(remote, signal);
    if (remote) refuseCollisions(remote, remoteSpecs, (name) => this.#options.local.has(name));
    const remoteNames = new Set(remoteSpecs.map((t) => t.name));
    const specs = [...remoteSpecs, ...local.filter((t) => !remoteNames.has(t.name))];
    if (this.#streams.size > 0) specs.push(stopStreamTool().spec);
    return specs;
  }

  /**
   * Runs a step's calls; a stream returned by `directCallId` (a returnDirect call) is read
   * whole. With a journal (durable runs) each call's intent is written before it runs and its
   * result after, and a call the journal finished before a crash is answered from it. Each
   * call's result goes to `onResult` as the call finishes (SPEC Q8: a step cut short keeps
   * what finished), unless the step was cancelled first.
   */
  async execute(
    calls: readonly ToolCall[],
    signal: AbortSignal,
    directCallId?: string,
    journal?: ToolCallJournal,
    onResult?: (result: ToolResult) => void,
  ): Promise<ExecuteToolsOutput> {
    const step = ++this.#step;
    let openedStream = false;
    const gate = this.#options.approvals;
    // A call's result is journaled, and reaches the machine, only while its step is still
    // wanted: once the step was cancelled (maxExecutionTime, an abort, the run's end) the
    // machine has moved on, and an entry written then would land after what the run went on
    // to do, where a replay cannot place it. details() records it, marked discarded.
    const finished = (
      call: ToolCall,
      result: ToolResult,
      done: ToolCallDone | undefined,
      ms: number,
      hookFailed?: ToolHookError,
    ) => {
      const discarded = signal.aborted;
      if (done) this.#options.onCallDone?.(discarded ? { ...done, discarded } : done);
      if (discarded) return;
      const failure = hookFailed && hookFailureText(hookFailed);
      journal?.finished(call, result, done?.executor ?? 'local', ms, failure);
      onResult?.(result);
    };
    const timed = async (call: ToolCall): Promise<TimedCall> => {
      // Queued behind the concurrency limit, its step cancelled meanwhile (see notStarted).
      if (signal.aborted) {
        return { result: failedToolResult(call, notStarted(call, signal)), done: undefined };
      }
      return this.#timed(call, signal, journal && (await this.#attempt(call, journal)));
    };
    const gated = async (call: ToolCall): Promise<ToolResult> => {
      if (!gate) return runCall(call);
      try {
        const admitted = await gate.admit(call, signal, journal);
        // Its step is gone: the answer is dropped, so nothing of it is recorded.
        if (admitted.abandoned && admitted.result) return admitted.result;
        const approval = admitted.decision && approvedCall(admitted.decision, admitted.waitedMs);
        if (admitted.result) {
          const now = performance.now();
          const done = {
            call,
            result: admitted.result,
            executor: 'local',
            startedAt: now,
            endedAt: now,
            ...(approval && { approval }),
          };
          finished(call, admitted.result, done, 0);
          return admitted.result;
        }
        if (approval) this.#approved.set(call.id, approval);
        return await runCall(call);
      } finally {
        gate.callSettled();
      }
    };
    const runCall = async (call: ToolCall): Promise<ToolResult> => {
      const started = performance.now();
      const ran = await (this.#limit ? this.#limit(() => timed(call)) : timed(call));
      const { result } = ran;
      let settled = result;
      if (result.success && isAsyncIterable(result.output)) {
        const link = this.#links.get(result.toolCallId) ?? NO_LINK;
        this.#links.delete(result.toolCallId);
        // The run's answer: all of it, not a first batch that no later step would follow up.
        settled =
          result.toolCallId === directCallId
            ? await this.#streams.drain(result, signal, link)
            : await this.#streams.open(result, step, link);
        if (result.toolCallId !== directCallId) openedStream ||= settled.success;
      }
      finished(call, settled, ran.done, performance.now() - started, ran.hookFailed);
      // afterToolCall threw: the call ran, and is recorded, before the run fails.
      if (ran.hookFailed) throw ran.hookFailed;
      return settled;
    };
    const unfinished = calls.filter((call) => !journal?.known(call.id)?.finished);
    gate?.stepStarted(unfinished.length);
    // A resumed step: the machine learns again which calls waited, and what was decided.
    if (gate && journal?.approvals.length) gate.replay(journal.approvals);
    // Settled all, then a hook's failure rethrown: the step's other calls finish first.
    const results = await allCallsSettled(
      calls.map((call) => {
        const known = journal?.known(call.id);
        if (known?.finished) {
          // The machine got its result, and details() recorded it, when the step was asked for
          // again (chain/effects.ts), even if the step is cancelled before this runs.
          const result = known.result as ToolResult;
          // A stream it opened before the crash is gone with that process.
          if (this.#followLost(result, step)) openedStream = true;
          // Its afterToolCall threw before the crash: the step fails as it did.
          if (known.hookFailed !== undefined) {
            return Promise.reject(journaledHookFailure(call, known.hookFailed, result));
          }
          return result;
        }
        return gated(call);
      }),
    );
    const streamBatches = await this.#streams.batches(step);
    return { results, streamBatches, openedStream };
  }

  /** A durable run's call: its intent written (unless an earlier process wrote it), its key. */
  async #attempt(call: ToolCall, journal: ToolCallJournal): Promise<CallAttempt> {
    const known = journal.known(call.id);
    if (!known) await journal.starting(call);
    return {
      idempotencyKey: journal.idempotencyKey(call.id),
      ...(known && { possiblyRepeated: true as const }),
    };
  }

  /**
   * A step a durable run's resume answered from the journal: the streams it opened and closed
   * are followed, so the streams still open when the replay ends, whose sources died with the
   * old process, answer as lost (see RunStreams.lost) instead of vanishing.
   */
  replayed(calls: readonly ToolCall[], output: ExecuteToolsOutput): void {
    this.#step++;
    for (const result of output.results) this.#followLost(result);
    for (const batch of output.streamBatches) if (batch.done) this.#streams.forget(batch.streamId);
    for (const [index, call] of calls.entries()) {
      const stopped = (call.arguments as { streamId?: unknown } | undefined)?.streamId;
      if (
        call.name === STOP_STREAM_TOOL &&
        output.results[index]?.success &&
        typeof stopped === 'string'
      ) {
        this.#streams.forget(stopped);
      }
    }
  }

  /** Registers the stream `result` opened, if it is still open, as lost; true if it opened one. */
  #followLost(result: ToolResult, step?: number): boolean {
    const opened = result.output as { streamId?: unknown; done?: unknown } | null;
    if (!result.success || typeof opened?.streamId !== 'string') return false;
    if (opened.done === false) this.#streams.lost(opened.streamId, result.name, step);
    return true;
  }

  /** Ends every open stream; the run calls it however it ends. Never rejects. */
  close(): Promise<void> {
    return this.#streams.closeAll();
  }

  async #remoteSpecs(
    remote: RemoteToolExecutor | undefined,
    signal: AbortSignal,
  ): Promise<readonly ToolSpec[]> {
    if (!remote) return [];
    if (this.#remoteTools?.remote !== remote) {
      const specs = this.#listRemoteTools(remote, signal);
      this.#remoteTools = { remote, specs };
      // A failed or late listing is not kept: the next step asks again.
      specs.then((listed) => {
        if (listed === undefined && this.#remoteTools?.specs === specs)
          this.#remoteTools = undefined;
      });
    }
    return (await this.#remoteTools.specs) ?? [];
  }

  /**
   * What the remote listed when the model was last asked: the tools the model could have
   * called on it. Never starts a listing, so a call does not wait on a slow remote.
   */
  async #knownRemoteSpecs(remote: RemoteToolExecutor): Promise<readonly ToolSpec[]> {
    return this.#remoteTools?.remote === remote ? ((await this.#remoteTools.specs) ?? []) : [];
  }

  /**
   * The remote's tools, or undefined when it fails, or does not answer within toolTimeoutMs
   * (or before the run ends): the local registry answers instead of a run that waits forever.
   */
  async #listRemoteTools(
    remote: RemoteToolExecutor,
    signal: AbortSignal,
  ): Promise<readonly ToolSpec[] | undefined> {
    const { timeoutMs } = this.#options;
    const deadline = timeoutMs === undefined ? undefined : deadlineAfter(timeoutMs);
    try {
      const listing = Promise.resolve().then(() => remote.listTools({ signal }));
      const raced = deadline ? Promise.race([listing, deadline.reached]) : listing;
      const listed = await raceAbort(raced, signal);
      return listed === ABORTED || listed === DEADLINE ? undefined : listed;
    } catch {
      return undefined;
    } finally {
      deadline?.clear();
    }
  }

  /** #runOne, with what onCallDone is to record of it: its timing, executor, hooks, decision. */
  async #timed(call: ToolCall, signal: AbortSignal, attempt?: CallAttempt): Promise<TimedCall> {
    const { onCallDone, hooks, approvals } = this.#options;
    if (!onCallDone && !attempt && !hooks && !approvals) {
      return { result: await this.#runOne(call, signal), done: undefined };
    }
    const startedAt = performance.now();
    const { onCallStart } = this.#options;
    if (onCallStart) onCallStart(call, await this.#executorOf(call), startedAt);
    const key = attempt?.idempotencyKey;
    const run = (next: ToolCall) => this.#runOne(next, signal, key);
    let ran: { readonly result: ToolResult; readonly hooked?: HookedCall | undefined };
    let hookFailed: ToolHookError | undefined;
    try {
      ran = hooks
        ? await hooks.around(
            call,
            this.#options.local.get(call.name),
            { signal, ...(key !== undefined && { idempotencyKey: key }) },
            run,
          )
        : { result: await run(call) };
    } catch (error) {
      // afterToolCall threw: the call ran, so it is recorded (and journaled) before the run
      // fails. beforeToolCall threw: it did not run, and there is nothing to record.
      if (!(error instanceof ToolHookError) || !error.result) throw error;
      ran = { result: error.result };
      hookFailed = error;
    }
    const { result, hooked } = ran;
    const executor = this.#remoteCalls.get(call.id) ?? 'local';
    this.#remoteCalls.delete(call.id);
    const approval = this.#approved.get(call.id);
    this.#approved.delete(call.id);
    const done: ToolCallDone = {
      call,
      result,
      executor,
      startedAt,
      endedAt: performance.now(),
      ...(attempt?.possiblyRepeated && { resumed: { possiblyRepeated: true as const } }),
      ...(hooked && { hooked }),
      ...(approval && { approval }),
    };
    return { result, done, ...(hookFailed && { hookFailed }) };
  }

  async #runOne(call: ToolCall, runSignal: AbortSignal, key?: string): Promise<ToolResult> {
    if (call.name === STOP_STREAM_TOOL) return this.#streams.stop(call);
    const { timeoutMs } = this.#options;
    if (timeoutMs === undefined) return this.#dispatch(call, runSignal, key);
    // The call's own signal: aborted by the run, or by its timeout. A call that returns a
    // stream keeps the link to the run until the stream closes (see #openStream).
    const controller = new AbortController();
    const onAbort = () => controller.abort(runSignal.reason);
    runSignal.addEventListener('abort', onAbort, { once: true });
    const unlink = () => runSignal.removeEventListener('abort', onAbort);
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    let keepLink = false;
    try {
      const result = await this.#dispatch(call, controller.signal, key);
      if (timedOut) {
        return {
          ...result,
          success: false,
          output: null,
          error: `Tool '${call.name}' timed out after ${timeoutMs} ms.`,
        };
      }
      keepLink = result.success && isAsyncIterable(result.output);
      if (keepLink)
        this.#links.set(call.id, {
          unlink,
          abort: () => controller.abort(new Error('stream stopped')),
        });
      return result;
    } finally {
      clearTimeout(timer);
      if (!keepLink) unlink();
    }
  }

  /** Who will run `call`, by #dispatch's rule; asked only for observers, before it runs. */
  async #executorOf(call: ToolCall): Promise<string> {
    const remote = this.#options.remote();
    if (!remote || call.name === STOP_STREAM_TOOL) return 'local';
    const known = await this.#knownRemoteSpecs(remote);
    return known.some((t) => t.name === call.name) ? remote.name : 'local';
  }

  /**
   * The remote runs the tools it listed; the local registry runs the rest, and a listed tool
   * the remote gives no return for, when a local tool has its name (SPEC C10). Such a local
   * tool exists only when the remote set `shadowLocalTools`: otherwise specs() refused the
   * collision before the model could call it.
   */
  async #dispatch(call: ToolCall, signal: AbortSignal, key?: string): Promise<ToolResult> {
    const { local } = this.#options;
    const remote = this.#options.remote();
    if (remote && (await this.#knownRemoteSpecs(remote)).some((t) => t.name === call.name)) {
      this.#remoteCalls.set(call.id, remote.name);
      const result = await callRemote(remote, call, signal, key);
      if (result !== NO_RETURN) return result;
      if (!local.has(call.name)) {
        return failedToolResult(call, `Tool '${call.name}' on ${remote.name} returned no result.`);
      }
      this.#remoteCalls.delete(call.id);
    }
    const { invalidToolCall } = this.#options;
    return local.run(call, {
      signal,
      ...(key !== undefined && { idempotencyKey: key }),
      ...(invalidToolCall !== undefined && { invalidToolCall }),
    });
  }
}

/**
 * Why a chain's call queued behind toolConcurrency did not run: its step was cancelled before
 * its turn came (the run's deadline, an abort). Such a call never starts: the machine no
 * longer waits for its answer, and a durable run's intent for it would land after what the
 * run went on to do (earlyStopping's final model call), where a replay cannot place it.
 */
function notStarted(call: Pick<ToolCall, 'name'>, signal: AbortSignal): string {
  const reason = signal.reason instanceof Error ? signal.reason.message : String(signal.reason);
  return `Tool '${call.name}' was not run: its step was cancelled before its turn (${reason}).`;
}
