import pLimit from 'p-limit';
import { z } from 'zod';
import type { LocalToolRegistry } from '../../adapters/tools/local-registry.js';
import type { ExecuteToolsOutput, StreamBatch } from '../../machines/chain.js';
import type { ToolCall, ToolResult } from '../messages.js';
import type { ToolSpec } from '../model/language-model.js';
import { defineTool } from '../tools/define-tool.js';
import { ABORTED, raceAbort } from '../tools/race-abort.js';
import type { RemoteToolExecutor } from '../tools/remote-executor.js';
import { isAsyncIterable } from './async-iterable.js';

export const STOP_STREAM_TOOL = 'stop_stream';

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
  readonly onCallDone?: (done: {
    readonly call: ToolCall;
    readonly result: ToolResult;
    readonly executor: string;
    readonly startedAt: number;
    readonly endedAt: number;
  }) => void;
}

interface OpenStream {
  readonly id: string;
  readonly toolName: string;
  readonly iterator: AsyncIterator<unknown>;
  /** The step that opened it: its first batch went out as the tool's result. */
  readonly openedAt: number;
  /** A read that outlived its batch's deadline; the next batch starts by awaiting it. */
  pending: Promise<IteratorResult<unknown>> | undefined;
  readonly link: StreamLink;
}

/** How a streaming call's own signal is tied to the run (only with toolTimeoutMs). */
interface StreamLink {
  /** Detaches the tool's signal from the run's, once the stream is closed. */
  readonly unlink: () => void;
  /** Aborts the tool's signal, so a read stuck in the tool can end. */
  readonly abort: () => void;
}

const NO_LINK: StreamLink = { unlink: () => {}, abort: () => {} };

/**
 * The tools of one run: remote first, local registry as the fallback (SPEC C10), calls of a
 * step concurrent under an optional cap, per-call timeouts, and streaming tools whose
 * AsyncIterable results are read in batches across steps until they end or the model calls
 * the built-in stop tool (SPEC C11). One per run, because open streams belong to a run.
 */
export class RunTools {
  readonly #options: RunToolsOptions;
  readonly #streams = new Map<string, OpenStream>();
  /** Signal links of calls whose result is a stream: kept until the stream closes. */
  readonly #links = new Map<string, StreamLink>();
  /** Calls sent to the remote executor, by id, with its name: for onCallDone. */
  readonly #remoteCalls = new Map<string, string>();
  readonly #limit: ((fn: () => Promise<ToolResult>) => Promise<ToolResult>) | undefined;
  #remoteTools:
    | { remote: RemoteToolExecutor; specs: Promise<readonly ToolSpec[] | undefined> }
    | undefined;
  #step = 0;
  readonly #localSpecs: readonly ToolSpec[];

  constructor(options: RunToolsOptions) {
    this.#options = options;
    this.#localSpecs = Object.freeze(options.local.specs());
    this.#limit = options.concurrency === undefined ? undefined : pLimit(options.concurrency);
  }

  /** What the model is told: remote tools, local ones it does not shadow, and the stop tool while a stream is open. */
  async specs(signal: AbortSignal): Promise<readonly ToolSpec[]> {
    const remote = this.#options.remote();
    const local = this.#localSpecs;
    // The common case, no remote and no open stream, shares one array across calls.
    if (!remote && this.#streams.size === 0) return local;
    const remoteSpecs = await this.#remoteSpecs(remote, signal);
    const remoteNames = new Set(remoteSpecs.map((t) => t.name));
    const specs = [...remoteSpecs, ...local.filter((t) => !remoteNames.has(t.name))];
    if (this.#streams.size > 0) specs.push(stopStreamTool.spec);
    return specs;
  }

  /** Runs a step's calls; a stream returned by `directCallId` (a returnDirect call) is read whole. */
  async execute(
    calls: readonly ToolCall[],
    signal: AbortSignal,
    directCallId?: string,
  ): Promise<ExecuteToolsOutput> {
    const step = ++this.#step;
    const results = await Promise.all(
      calls.map((call) =>
        this.#limit ? this.#limit(() => this.#timed(call, signal)) : this.#timed(call, signal),
      ),
    );
    let openedStream = false;
    const settled = await Promise.all(
      results.map(async (result) => {
        if (!result.success || !isAsyncIterable(result.output)) return result;
        const link = this.#links.get(result.toolCallId);
        // The run's answer: all of it, not a first batch that no later step would follow up.
        if (result.toolCallId === directCallId) return this.#drain(result, signal, link);
        openedStream = true;
        return this.#openStream(result, step, link);
      }),
    );
    const streamBatches: StreamBatch[] = [];
    for (const stream of [...this.#streams.values()]) {
      if (stream.openedAt === step) continue;
      streamBatches.push(await this.#nextBatch(stream));
    }
    return { results: settled, streamBatches, openedStream };
  }

  /** Ends every open stream; the run calls it however it ends. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#streams.values()].map((stream) => this.#end(stream)));
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

  /** #runOne, reported to onCallDone with its timing and executor. */
  async #timed(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    const { onCallDone } = this.#options;
    if (!onCallDone) return this.#runOne(call, signal);
    const startedAt = performance.now();
    const { onCallStart } = this.#options;
    if (onCallStart) onCallStart(call, await this.#executorOf(call), startedAt);
    const result = await this.#runOne(call, signal);
    const executor = this.#remoteCalls.get(call.id) ?? 'local';
    this.#remoteCalls.delete(call.id);
    onCallDone({ call, result, executor, startedAt, endedAt: performance.now() });
    return result;
  }

  async #runOne(call: ToolCall, runSignal: AbortSignal): Promise<ToolResult> {
    if (call.name === STOP_STREAM_TOOL) return this.#stop(call);
    const { timeoutMs } = this.#options;
    if (timeoutMs === undefined) return this.#dispatch(call, runSignal);
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
      const result = await this.#dispatch(call, controller.signal);
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

  async #dispatch(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    const { local } = this.#options;
    const remote = this.#options.remote();
    if (remote && (await this.#knownRemoteSpecs(remote)).some((t) => t.name === call.name)) {
      const fail = (error: string): ToolResult => ({
        toolCallId: call.id,
        name: call.name,
        output: null,
        success: false,
        error,
      });
      this.#remoteCalls.set(call.id, remote.name);
      try {
        // Raced against the signal: a remote that ignores it must not hold the run.
        const result = await raceAbort(
          Promise.resolve().then(() => remote.execute(call, { signal })),
          signal,
        );
        if (result === ABORTED) return fail(`Tool '${call.name}' was cancelled.`);
        if (typeof result !== 'object' || result === null || typeof result.success !== 'boolean') {
          return fail(`Tool '${call.name}' on ${remote.name} returned no result.`);
        }
        // The remote answers this call, whatever ids it echoes.
        return { ...result, toolCallId: call.id, name: call.name };
      } catch (error) {
        return fail(
          `Tool '${call.name}' failed on ${remote.name}: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return local.run(call, { signal });
  }

  async #openStream(result: ToolResult, step: number, link = NO_LINK): Promise<ToolResult> {
    this.#links.delete(result.toolCallId);
    const iterator = (result.output as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    const stream: OpenStream = {
      id: `stream_${result.toolCallId}`,
      toolName: result.name,
      iterator,
      openedAt: step,
      pending: undefined,
      link,
    };
    this.#streams.set(stream.id, stream);
    const batch = await this.#nextBatch(stream);
    return { ...result, output: { streamId: stream.id, chunks: batch.chunks, done: batch.done } };
  }

  /**
   * A returnDirect call's stream read to its end (SPEC R4 with C11): the array of its items is
   * the output, and the run's answer. Bounded like the call: by the run's signal, and by
   * toolTimeoutMs for the whole read. A stream that fails or is cut off is a failed result,
   * which the model reads instead of the run ending with part of an answer.
   */
  async #drain(result: ToolResult, signal: AbortSignal, link = NO_LINK): Promise<ToolResult> {
    this.#links.delete(result.toolCallId);
    const iterator = (result.output as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    const { timeoutMs, streamBatchSize } = this.#options;
    const deadline = timeoutMs === undefined ? undefined : deadlineAfter(timeoutMs);
    const fail = (error: string): ToolResult => ({
      ...result,
      output: null,
      success: false,
      error,
    });
    const items: unknown[] = [];
    let pending: Promise<IteratorResult<unknown>> | undefined;
    try {
      for (;;) {
        pending = iterator.next();
        const next = await raceAbort(
          deadline ? Promise.race([pending, deadline.reached]) : pending,
          signal,
        );
        if (next === ABORTED) return fail(`Tool '${result.name}' was cancelled.`);
        if (next === DEADLINE) {
          return fail(`Tool '${result.name}' timed out after ${timeoutMs} ms reading its stream.`);
        }
        pending = undefined;
        if (next.done) return { ...result, output: items };
        items.push(next.value);
        // A stream that never waits would starve the timers that bound it (toolTimeoutMs,
        // maxExecutionTime): let them run once a batch.
        if (items.length % streamBatchSize === 0)
          await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      pending = undefined;
      return fail(
        `Tool '${result.name}' failed while streaming: ${error instanceof Error ? error.message : String(error)}`,
      );
    } finally {
      deadline?.clear();
      if (pending) {
        // Cut off mid-read: abort the tool's signal and close the stream, without waiting on
        // a read that may never end (return() queues behind it).
        link.abort();
        iterator.return?.()?.catch(() => {});
      }
      link.unlink();
    }
  }

  /**
   * Up to streamBatchSize items. With toolTimeoutMs, a batch also ends at that deadline with
   * what it has, and the read in flight carries over to the next batch.
   */
  async #nextBatch(stream: OpenStream): Promise<StreamBatch> {
    const { timeoutMs, streamBatchSize } = this.#options;
    const deadline = timeoutMs === undefined ? undefined : deadlineAfter(timeoutMs);
    const chunks: unknown[] = [];
    let done = false;
    try {
      while (chunks.length < streamBatchSize) {
        stream.pending ??= stream.iterator.next();
        const next = deadline
          ? await Promise.race([stream.pending, deadline.reached])
          : await stream.pending;
        if (next === DEADLINE) break;
        stream.pending = undefined;
        if (next.done) {
          done = true;
          break;
        }
        chunks.push(next.value);
      }
    } catch (error) {
      stream.pending = undefined;
      chunks.push(`stream error: ${error instanceof Error ? error.message : String(error)}`);
      done = true;
    } finally {
      deadline?.clear();
    }
    if (done) this.#close(stream);
    return { streamId: stream.id, toolName: stream.toolName, chunks, done };
  }

  #close(stream: OpenStream): void {
    this.#streams.delete(stream.id);
    stream.link.unlink();
  }

  /** Closes a stream before its end: the stop tool, or the run ending. */
  async #end(stream: OpenStream): Promise<void> {
    this.#close(stream);
    stream.link.abort();
    const ending = stream.iterator.return?.();
    // return() queues behind a read still pending in the tool: do not wait on a stuck source.
    if (stream.pending) ending?.catch(() => {});
    else await ending;
  }

  async #stop(call: ToolCall): Promise<ToolResult> {
    const parsed = stopStreamTool.input.safeParse(call.arguments);
    const stream = parsed.success ? this.#streams.get(parsed.data.streamId) : undefined;
    if (!stream) {
      const open = [...this.#streams.keys()];
      return {
        toolCallId: call.id,
        name: call.name,
        output: null,
        success: false,
        error: `No open stream with that id. Open streams: ${open.length ? open.join(', ') : 'none'}.`,
      };
    }
    await this.#end(stream);
    return {
      toolCallId: call.id,
      name: call.name,
      output: `Stream ${stream.id} closed.`,
      success: true,
    };
  }
}

/** The built-in Stop tool; its execution is handled by RunTools itself. */
const stopStreamTool = defineTool({
  name: STOP_STREAM_TOOL,
  description:
    'Stops a streaming tool result you no longer need. Pass the streamId from its result.',
  input: z.object({ streamId: z.string() }),
  execute: () => {
    throw new Error('handled by RunTools');
  },
});

const DEADLINE: unique symbol = Symbol('deadline');

function deadlineAfter(ms: number): { reached: Promise<typeof DEADLINE>; clear(): void } {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const reached = new Promise<typeof DEADLINE>((resolve) => {
    timer = setTimeout(() => resolve(DEADLINE), ms);
  });
  return { reached, clear: () => clearTimeout(timer) };
}
