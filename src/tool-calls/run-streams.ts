import { z } from 'zod';
import type { StreamBatch } from '../../machines/chain.js';
import type { ToolCall, ToolResult } from '../messages.js';
import { ABORTED, raceAbort } from '../race-abort.js';
import { defineTool } from '../tools/define-tool.js';
import { DEADLINE, deadlineAfter } from './deadline.js';
import { closeIterator, readNext, streamErrorText } from './stream-steps.js';

export const STOP_STREAM_TOOL = 'stop_stream';

/** How a streaming call's own signal is tied to the run (only with toolTimeoutMs). */
export interface StreamLink {
  /** Detaches the tool's signal from the run's, once the stream is closed. */
  readonly unlink: () => void;
  /** Aborts the tool's signal, so a read stuck in the tool can end. */
  readonly abort: () => void;
}

export const NO_LINK: StreamLink = { unlink: () => {}, abort: () => {} };

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

/**
 * The streaming tool results of one run (SPEC C11): AsyncIterables read in batches across
 * steps until they end or the model calls the built-in stop tool. Every step of a tool's
 * iterator goes through stream-steps, so an iterator that breaks the protocol (next() that
 * throws or gives a non-object, a return() that throws, rejects or is synchronous) ends its
 * stream with an error the model reads; nothing here rejects because of a tool.
 */
export class RunStreams {
  readonly #streams = new Map<string, OpenStream>();
  readonly #timeoutMs: number | undefined;
  readonly #batchSize: number;

  constructor(timeoutMs: number | undefined, batchSize: number) {
    this.#timeoutMs = timeoutMs;
    this.#batchSize = batchSize;
  }

  get size(): number {
    return this.#streams.size;
  }

  /** Opens the stream `result.output`; its first batch is the call's result. */
  async open(result: ToolResult, step: number, link = NO_LINK): Promise<ToolResult> {
    let iterator: AsyncIterator<unknown>;
    try {
      iterator = (result.output as AsyncIterable<unknown>)[Symbol.asyncIterator]();
    } catch (error) {
      link.unlink();
      const error_ = `Tool '${result.name}' failed to start its stream: ${streamErrorText(error)}`;
      return { ...result, output: null, success: false, error: error_ };
    }
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

  /** The next batch of every stream opened before `step`. */
  async batches(step: number): Promise<StreamBatch[]> {
    const batches: StreamBatch[] = [];
    for (const stream of [...this.#streams.values()]) {
      if (stream.openedAt !== step) batches.push(await this.#nextBatch(stream));
    }
    return batches;
  }

  /**
   * A returnDirect call's stream read to its end (SPEC R4 with C11): the array of its items is
   * the output, and the run's answer. Bounded like the call: by the run's signal, and by
   * toolTimeoutMs for the whole read. A stream that fails or is cut off is a failed result,
   * which the model reads instead of the run ending with part of an answer.
   */
  async drain(result: ToolResult, signal: AbortSignal, link = NO_LINK): Promise<ToolResult> {
    const timeoutMs = this.#timeoutMs;
    const deadline = timeoutMs === undefined ? undefined : deadlineAfter(timeoutMs);
    const fail = (error: string): ToolResult => ({
      ...result,
      output: null,
      success: false,
      error,
    });
    const items: unknown[] = [];
    let iterator: AsyncIterator<unknown> | undefined;
    let pending: Promise<IteratorResult<unknown>> | undefined;
    try {
      iterator = (result.output as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      for (;;) {
        pending = readNext(iterator);
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
        if (items.length % this.#batchSize === 0)
          await new Promise((resolve) => setImmediate(resolve));
      }
    } catch (error) {
      pending = undefined;
      return fail(`Tool '${result.name}' failed while streaming: ${streamErrorText(error)}`);
    } finally {
      deadline?.clear();
      if (pending && iterator) {
        // Cut off mid-read: abort the tool's signal and close the stream, without waiting on
        // a read that may never end (return() queues behind it).
        pending.catch(() => {});
        link.abort();
        closeIterator(iterator).catch(() => {});
      }
      link.unlink();
    }
  }

  /** The built-in stop tool: closes the stream it names; a cleanup that fails is a failed result. */
  async stop(call: ToolCall): Promise<ToolResult> {
    const parsed = stopStreamTool().input.safeParse(call.arguments);
    const stream = parsed.success ? this.#streams.get(parsed.data.streamId) : undefined;
    const result = (success: boolean, text: string): ToolResult =>
      success
        ? { toolCallId: call.id, name: call.name, output: text, success }
        : { toolCallId: call.id, name: call.name, output: null, success, error: text };
    if (!stream) {
      const open = [...this.#streams.keys()];
      return result(
        false,
        `No open stream with that id. Open streams: ${open.length ? open.join(', ') : 'none'}.`,
      );
    }
    try {
      await this.#end(stream);
    } catch (error) {
      return result(
        false,
        `Stream ${stream.id} is closed, but tool '${stream.toolName}' failed while closing it: ${streamErrorText(error)}`,
      );
    }
    return result(true, `Stream ${stream.id} closed.`);
  }

  /**
   * A stream a durable run had open when its process died (learnt from its journal): its
   * source is gone with that process. Its next batch ends it with an error the model reads
   * instead of the items, and the stop tool closes it like any other.
   */
  lost(streamId: string, toolName: string, openedAt = -1): void {
    const error = new Error(
      'lost: the run was resumed after its process stopped, and the rest of this stream went with it; call the tool again if you still need it',
    );
    this.#streams.set(streamId, {
      id: streamId,
      toolName,
      iterator: {
        next: () => Promise.reject(error),
        return: () => Promise.resolve({ done: true, value: undefined }),
      },
      openedAt,
      pending: undefined,
      link: NO_LINK,
    });
  }

  /** Forgets a lost stream the journal shows ending later (its last batch, or the stop tool). */
  forget(streamId: string): void {
    this.#streams.delete(streamId);
  }

  /** Ends every open stream; the run calls it however it ends. Never rejects. */
  async closeAll(): Promise<void> {
    await Promise.allSettled([...this.#streams.values()].map((stream) => this.#end(stream)));
  }

  /**
   * Up to the batch size of items. With toolTimeoutMs, a batch also ends at that deadline with
   * what it has, and the read in flight carries over to the next batch.
   */
  async #nextBatch(stream: OpenStream): Promise<StreamBatch> {
    const timeoutMs = this.#timeoutMs;
    const deadline = timeoutMs === undefined ? undefined : deadlineAfter(timeoutMs);
    const chunks: unknown[] = [];
    let done = false;
    try {
      while (chunks.length < this.#batchSize) {
        stream.pending ??= readNext(stream.iterator);
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
      chunks.push(`stream error: ${streamErrorText(error)}`);
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

  /** Closes a stream before its end: the stop tool, or the run ending. Rejects with what its cleanup threw. */
  async #end(stream: OpenStream): Promise<void> {
    this.#close(stream);
    stream.link.abort();
    const ending = closeIterator(stream.iterator);
    if (stream.pending) {
      // return() queues behind a read still pending in the tool: do not wait on a stuck source.
      stream.pending.catch(() => {});
      ending.catch(() => {});
      return;
    }
    await ending;
  }
}

let stopTool: ReturnType<typeof defineStopStreamTool> | undefined;

/**
 * The built-in Stop tool; its execution is handled by RunStreams itself. Made on first use:
 * defining it converts its schema to JSON Schema, which took longer than loading the rest of
 * statecraft when it ran at import.
 */
export function stopStreamTool() {
  stopTool ??= defineStopStreamTool();
  return stopTool;
}

function defineStopStreamTool() {
  return defineTool({
    name: STOP_STREAM_TOOL,
    description:
      'Stops a streaming tool result you no longer need. Pass the streamId from its result.',
    input: z.object({ streamId: z.string() }),
    execute: () => {
      throw new Error('handled by RunStreams');
    },
  });
}
