import pLimit from 'p-limit';
import { z } from 'zod';
import type { LocalToolRegistry } from '../../adapters/tools/local-registry.js';
import type { ExecuteToolsOutput, StreamBatch } from '../../machines/chain.js';
import type { ToolCall, ToolResult } from '../messages.js';
import type { ToolSpec } from '../model/language-model.js';
import { defineTool } from '../tools/define-tool.js';
import type { RemoteToolExecutor } from '../tools/remote-executor.js';

export const STOP_STREAM_TOOL = 'stop_stream';

export interface RunToolsOptions {
  readonly local: LocalToolRegistry;
  /** Read at every step, so a remote connected or disconnected mid-run takes effect at once. */
  readonly remote: () => RemoteToolExecutor | undefined;
  /** At most this many calls of one step run at once; undefined: all at once. */
  readonly concurrency: number | undefined;
  /** A call still running after this long is answered with a failed result. */
  readonly timeoutMs: number | undefined;
  /** Items read from a streaming tool per step. */
  readonly streamBatchSize: number;
}

interface OpenStream {
  readonly id: string;
  readonly toolName: string;
  readonly iterator: AsyncIterator<unknown>;
  /** The step that opened it: its first batch went out as the tool's result. */
  readonly openedAt: number;
}

/**
 * The tools of one run: remote first, local registry as the fallback (SPEC C10), calls of a
 * step concurrent under an optional cap, per-call timeouts, and streaming tools whose
 * AsyncIterable results are read in batches across steps until they end or the model calls
 * the built-in stop tool (SPEC C11). One per run, because open streams belong to a run.
 */
export class RunTools {
  readonly #options: RunToolsOptions;
  readonly #streams = new Map<string, OpenStream>();
  readonly #limit: ((fn: () => Promise<ToolResult>) => Promise<ToolResult>) | undefined;
  #remoteTools: { remote: RemoteToolExecutor; specs: Promise<readonly ToolSpec[]> } | undefined;
  #step = 0;

  constructor(options: RunToolsOptions) {
    this.#options = options;
    this.#limit = options.concurrency === undefined ? undefined : pLimit(options.concurrency);
  }

  /** What the model is told: remote tools, local ones it does not shadow, and the stop tool while a stream is open. */
  async specs(signal: AbortSignal): Promise<ToolSpec[]> {
    const remote = await this.#remoteSpecs(this.#options.remote(), signal);
    const remoteNames = new Set(remote.map((t) => t.name));
    const specs = [
      ...remote,
      ...this.#options.local.specs().filter((t) => !remoteNames.has(t.name)),
    ];
    if (this.#streams.size > 0) specs.push(stopStreamTool.spec);
    return specs;
  }

  async execute(calls: readonly ToolCall[], signal: AbortSignal): Promise<ExecuteToolsOutput> {
    const step = ++this.#step;
    const results = await Promise.all(
      calls.map((call) =>
        this.#limit ? this.#limit(() => this.#runOne(call, signal)) : this.#runOne(call, signal),
      ),
    );
    let openedStream = false;
    const settled = await Promise.all(
      results.map(async (result) => {
        if (!result.success || !isAsyncIterable(result.output)) return result;
        openedStream = true;
        return this.#openStream(result, step);
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
    const streams = [...this.#streams.values()];
    this.#streams.clear();
    await Promise.allSettled(streams.map((s) => s.iterator.return?.()));
  }

  async #remoteSpecs(
    remote: RemoteToolExecutor | undefined,
    signal: AbortSignal,
  ): Promise<readonly ToolSpec[]> {
    if (!remote) return [];
    if (this.#remoteTools?.remote !== remote) {
      // A remote that cannot list its tools offers none: the local registry answers instead.
      const specs = Promise.resolve()
        .then(() => remote.listTools({ signal }))
        .catch(() => []);
      this.#remoteTools = { remote, specs };
    }
    return this.#remoteTools.specs;
  }

  async #runOne(call: ToolCall, runSignal: AbortSignal): Promise<ToolResult> {
    if (call.name === STOP_STREAM_TOOL) return this.#stop(call);
    const { timeoutMs } = this.#options;
    if (timeoutMs === undefined) return this.#dispatch(call, runSignal);
    const controller = new AbortController();
    const onAbort = () => controller.abort(runSignal.reason);
    runSignal.addEventListener('abort', onAbort, { once: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error(`timed out after ${timeoutMs} ms`));
    }, timeoutMs);
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
      return result;
    } finally {
      clearTimeout(timer);
      runSignal.removeEventListener('abort', onAbort);
    }
  }

  async #dispatch(call: ToolCall, signal: AbortSignal): Promise<ToolResult> {
    const { local } = this.#options;
    const remote = this.#options.remote();
    if (remote && (await this.#remoteSpecs(remote, signal)).some((t) => t.name === call.name)) {
      try {
        return await remote.execute(call, { signal });
      } catch (error) {
        return {
          toolCallId: call.id,
          name: call.name,
          output: null,
          success: false,
          error: `Tool '${call.name}' failed on ${remote.name}: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
    }
    return local.run(call, { signal });
  }

  async #openStream(result: ToolResult, step: number): Promise<ToolResult> {
    const iterator = (result.output as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    const stream: OpenStream = {
      id: `stream_${result.toolCallId}`,
      toolName: result.name,
      iterator,
      openedAt: step,
    };
    this.#streams.set(stream.id, stream);
    const batch = await this.#nextBatch(stream);
    return { ...result, output: { streamId: stream.id, chunks: batch.chunks, done: batch.done } };
  }

  async #nextBatch(stream: OpenStream): Promise<StreamBatch> {
    const chunks: unknown[] = [];
    let done = false;
    try {
      while (chunks.length < this.#options.streamBatchSize) {
        const next = await stream.iterator.next();
        if (next.done) {
          done = true;
          break;
        }
        chunks.push(next.value);
      }
    } catch (error) {
      chunks.push(`stream error: ${error instanceof Error ? error.message : String(error)}`);
      done = true;
    }
    if (done) this.#streams.delete(stream.id);
    return { streamId: stream.id, toolName: stream.toolName, chunks, done };
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
    this.#streams.delete(stream.id);
    await stream.iterator.return?.();
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

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function'
  );
}
