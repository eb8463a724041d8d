// SPEC C11: a tool may return an AsyncIterable. Its first batch is the tool's result
// ({ streamId, chunks, done }); later batches are written back as system notes across
// thinking rounds; the built-in stop_stream tool, offered while a stream is open, closes it.
import { AbortError, createChain, defineTool } from 'statecraft';
import type { ModelRequest } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { STOP_STREAM_TOOL } from 'statecraft/tools';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  aborted,
  add,
  messagesOf,
  rejectionOf,
  systemNotes,
  toolMessages,
  within,
} from './helpers.js';

/** A streaming tool yielding `line 1` … `line <count>` (forever when count is Infinity). */
function tailTool(count: number) {
  const state = { yielded: 0, closed: false };
  const tool = defineTool({
    name: 'tail',
    description: 'Follows a log.',
    input: z.object({}),
    execute: async function* () {
      try {
        for (let i = 1; i <= count; i++) {
          state.yielded = i;
          yield `line ${i}`;
        }
      } finally {
        state.closed = true;
      }
    },
  });
  return { tool, state };
}

const toolNames = (request: ModelRequest | undefined) => (request?.tools ?? []).map((t) => t.name);

/** The stream id the tool result of the given call carries, as the model would read it. */
function streamIdIn(request: ModelRequest, callId: string): string {
  const result = toolMessages(request.messages.toArray()).find((m) => m.toolCallId === callId);
  if (!result) throw new Error(`no tool result for ${callId}`);
  return (result.output as { streamId: string }).streamId;
}

describe('streaming tools (C11)', () => {
  it('returns the first batch as the result and later batches as notes, until the stream ends', async () => {
    const { tool, state } = tailTool(12);
    const model = new ScriptedModel([
      { toolCalls: [{ id: 't1', name: 'tail', arguments: {} }] },
      { toolCalls: [{ id: 'a1', name: 'add', arguments: { a: 1, b: 1 } }] },
      { toolCalls: [{ id: 'a2', name: 'add', arguments: { a: 2, b: 2 } }] },
      { text: 'seen all 12 lines' },
    ]);
    const run = await createChain({ model, tools: [tool, add] }).invoke('follow the log');
    model.assertComplete();

    const first = toolMessages(messagesOf(model.requests[1]))[0];
    expect(first).toMatchObject({ toolCallId: 't1', name: 'tail', success: true });
    const output = first?.output as { streamId: string; chunks: unknown[]; done: boolean };
    expect(output.chunks).toEqual(['line 1', 'line 2', 'line 3', 'line 4', 'line 5']);
    expect(output.done).toBe(false);
    expect(typeof output.streamId).toBe('string');
    // Read lazily: only the first batch was pulled before the model saw it.
    expect(toolNames(model.requests[1])).toContain(STOP_STREAM_TOOL);

    // The second batch follows the next step's tool results, before the next model call.
    const third = messagesOf(model.requests[2]);
    const batch2 = systemNotes(third).at(-1) ?? '';
    expect(third.at(-1)?.role).toBe('system');
    expect(third.at(-2)).toMatchObject({ role: 'tool', toolCallId: 'a1' });
    expect(batch2).toContain(output.streamId);
    expect(batch2).toContain('line 6\nline 7\nline 8\nline 9\nline 10');
    expect(batch2).not.toContain('line 11');
    expect(batch2).not.toContain('ended');

    const fourth = messagesOf(model.requests[3]);
    const batch3 = systemNotes(fourth).at(-1) ?? '';
    expect(batch3).toContain('line 11\nline 12');
    expect(batch3).toContain('ended');
    // Once the stream ended, the stop tool is no longer offered.
    expect(toolNames(model.requests[3])).not.toContain(STOP_STREAM_TOOL);
    expect(state.closed).toBe(true);
    expect(run.result).toBe('seen all 12 lines');
  });

  it('does not pull the stream ahead of the model', async () => {
    const { tool, state } = tailTool(Number.POSITIVE_INFINITY);
    const yieldedWhenAsked: number[] = [];
    const model = new ScriptedModel([
      { toolCalls: [{ id: 't1', name: 'tail', arguments: {} }] },
      () => {
        yieldedWhenAsked.push(state.yielded);
        return { toolCalls: [{ id: 'a1', name: 'add', arguments: { a: 1, b: 1 } }] };
      },
      () => {
        yieldedWhenAsked.push(state.yielded);
        return { text: 'enough' };
      },
    ]);
    await createChain({ model, tools: [tool, add], streamBatchSize: 3 }).invoke('follow');
    expect(yieldedWhenAsked).toEqual([3, 6]);
  });

  it('offers stop_stream only while a stream is open; calling it closes the stream', async () => {
    const { tool, state } = tailTool(Number.POSITIVE_INFINITY);
    const model = new ScriptedModel([
      { toolCalls: [{ id: 't1', name: 'tail', arguments: {} }] },
      (request) => ({
        toolCalls: [
          { id: 's1', name: STOP_STREAM_TOOL, arguments: { streamId: streamIdIn(request, 't1') } },
        ],
      }),
      { text: 'stopped' },
    ]);
    const run = await createChain({ model, tools: [tool] }).invoke('follow');

    expect(toolNames(model.requests[0])).toEqual(['tail']);
    const stopSpec = model.requests[1]?.tools?.find((t) => t.name === STOP_STREAM_TOOL);
    expect(stopSpec?.inputSchema).toMatchObject({ properties: { streamId: { type: 'string' } } });
    expect(toolNames(model.requests[2])).toEqual(['tail']);

    // The generator's finally ran when the stream was stopped, not later.
    expect(state.closed).toBe(true);
    expect(state.yielded).toBe(5);
    const stop = toolMessages(messagesOf(model.requests[2])).find((m) => m.toolCallId === 's1');
    expect(stop).toMatchObject({ success: true, name: STOP_STREAM_TOOL });
    // No batch of a stopped stream is written back.
    expect(systemNotes(messagesOf(model.requests[2])).some((n) => n.includes('more chunk'))).toBe(
      false,
    );
    expect(run.result).toBe('stopped');
  });

  it('stop_stream with an unknown id is a failed result naming the open streams', async () => {
    const { tool, state } = tailTool(Number.POSITIVE_INFINITY);
    const model = new ScriptedModel([
      { toolCalls: [{ id: 't1', name: 'tail', arguments: {} }] },
      { toolCalls: [{ id: 's1', name: STOP_STREAM_TOOL, arguments: { streamId: 'nope' } }] },
      { text: 'hm' },
    ]);
    await createChain({ model, tools: [tool] }).invoke('follow');
    const streamId = streamIdIn(model.requests[1] as ModelRequest, 't1');
    const stop = toolMessages(messagesOf(model.requests[2])).find((m) => m.toolCallId === 's1');
    expect(stop).toMatchObject({ success: false, error: expect.stringContaining(streamId) });
    // The stream stayed open (and went on) until the run ended.
    expect(state.yielded).toBe(10);
  });

  it('closes streams still open when the run ends (the generator finally runs)', async () => {
    const { tool, state } = tailTool(Number.POSITIVE_INFINITY);
    const model = new ScriptedModel([
      { toolCalls: [{ id: 't1', name: 'tail', arguments: {} }] },
      { text: 'bye' },
    ]);
    await createChain({ model, tools: [tool] }).invoke('follow');
    await vi.waitFor(() => expect(state.closed).toBe(true), { timeout: 500 });
  });

  it('writes object chunks back as JSON and honours streamBatchSize', async () => {
    const rows = defineTool({
      name: 'rows',
      description: 'Streams rows.',
      input: z.object({}),
      execute: async function* () {
        yield { id: 1 };
        yield { id: 2 };
        yield { id: 3 };
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'r', name: 'rows', arguments: {} }] },
      { toolCalls: [{ id: 'a', name: 'add', arguments: { a: 0, b: 0 } }] },
      { text: 'ok' },
    ]);
    await createChain({ model, tools: [rows, add], streamBatchSize: 2 }).invoke('rows');
    expect(toolMessages(messagesOf(model.requests[1]))[0]?.output).toMatchObject({
      chunks: [{ id: 1 }, { id: 2 }],
      done: false,
    });
    expect(systemNotes(messagesOf(model.requests[2])).at(-1)).toContain('{"id":3}');
  });

  it('a stream that ends within its first batch reports done and closes at once', async () => {
    const { tool, state } = tailTool(2);
    const model = new ScriptedModel([
      { toolCalls: [{ id: 't1', name: 'tail', arguments: {} }] },
      { text: 'ok' },
    ]);
    await createChain({ model, tools: [tool] }).invoke('short');
    expect(toolMessages(messagesOf(model.requests[1]))[0]?.output).toMatchObject({
      chunks: ['line 1', 'line 2'],
      done: true,
    });
    expect(toolNames(model.requests[1])).not.toContain(STOP_STREAM_TOOL);
    expect(state.closed).toBe(true);
  });

  it('a stream that throws ends with an error chunk instead of crashing the run', async () => {
    const failing = defineTool({
      name: 'failing',
      description: 'Streams, then fails.',
      input: z.object({}),
      execute: async function* () {
        yield 'first';
        throw new Error('source went away');
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'f', name: 'failing', arguments: {} }] },
      { text: 'ok' },
    ]);
    const run = await createChain({ model, tools: [failing] }).invoke('go');
    const output = toolMessages(messagesOf(model.requests[1]))[0]?.output as {
      chunks: string[];
      done: boolean;
    };
    expect(output.done).toBe(true);
    expect(output.chunks[0]).toBe('first');
    expect(output.chunks[1]).toContain('source went away');
    expect(run.result).toBe('ok');
  });
});

describe('streaming tools and cancellation (C11, C14)', () => {
  /** A stream that yields once, then waits for its signal before ending. */
  function patientStream() {
    const state = { signal: undefined as AbortSignal | undefined, closed: false };
    const tool = defineTool({
      name: 'watch',
      description: 'Watches until cancelled.',
      input: z.object({}),
      execute: async function* (_args, { signal }) {
        state.signal = signal;
        try {
          yield 'started';
          await aborted(signal);
        } finally {
          state.closed = true;
        }
      },
    });
    return { tool, state };
  }

  it('aborting the run while a stream is being read aborts the stream’s signal', async () => {
    const { tool, state } = patientStream();
    const model = new ScriptedModel([{ toolCalls: [{ id: 'w', name: 'watch', arguments: {} }] }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const outcome = await within(
      2000,
      createChain({ model, tools: [tool] }).invoke('watch', { signal: controller.signal }),
    );
    expect(outcome).not.toBe('hung');
    if (outcome !== 'hung')
      expect(AbortError.isInstance((outcome as { error?: unknown }).error)).toBe(true);
    expect(state.signal?.aborted).toBe(true);
    await vi.waitFor(() => expect(state.closed).toBe(true), { timeout: 500 });
  });

  // Regression: a bug this test found at HEAD 29a55e2 (fixed since, in the working tree).
  // With toolTimeoutMs set, a streaming tool's signal is detached from the run once
  // execute() has returned the iterator, and reading the stream is not covered by the timeout.
  // Input: toolTimeoutMs 50, a tool whose generator yields once and then waits on its signal;
  // the run is aborted after 20 ms. Expected: the stream's signal aborts (run cancelled, and the
  // read is over its 50 ms budget anyway), the generator's finally runs. Actual at HEAD: the signal never
  // aborts, so the generator stays suspended forever (the run itself rejects, but the tool leaks).
  // Cause at HEAD: src/tool-calls/run-tools.ts #runOne — with a timeout, the per-call controller's listener
  // on the run signal is removed and the timer cleared in `finally` as soon as #dispatch returns
  // the AsyncIterable; #openStream/#nextBatch then read it with neither a timeout nor a link to
  // the run's signal.
  it('aborting the run aborts the stream’s signal when toolTimeoutMs is set too', async () => {
    const { tool, state } = patientStream();
    const model = new ScriptedModel([{ toolCalls: [{ id: 'w', name: 'watch', arguments: {} }] }]);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 20);
    const chain = createChain({ model, tools: [tool], toolTimeoutMs: 50 });
    await rejectionOf(AbortError, chain.invoke('watch', { signal: controller.signal }));
    await vi.waitFor(() => expect(state.signal?.aborted).toBe(true), { timeout: 500 });
  });

  // Regression: a bug this test found at HEAD 29a55e2 (fixed since, in the working tree).
  // ToolTimeoutMs does not bound a streaming tool's first batch. Input: toolTimeoutMs 30
  // and a tool whose generator yields once and then waits on its signal (nothing aborts the
  // run). Expected: the step ends within about the timeout (a failed "timed out" result, or the
  // partial batch), and the run continues. Actual at HEAD: the step never ends; the run hangs.
  // Cause at HEAD: src/tool-calls/run-tools.ts #runOne clears the timer once #dispatch returns the iterator;
  // `execute` then awaits #openStream → #nextBatch, which reads up to streamBatchSize items with
  // no deadline.
  it('toolTimeoutMs bounds reading a stream’s first batch', async () => {
    const { tool } = patientStream();
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'w', name: 'watch', arguments: {} }] },
      { text: 'gave up waiting' },
    ]);
    const chain = createChain({ model, tools: [tool], toolTimeoutMs: 30 });
    const outcome = await within(1000, chain.invoke('watch'));
    expect(outcome).not.toBe('hung');
  });

  // Regression: stop_stream hung the run when the stream has a read in flight. Input: toolTimeoutMs 30,
  // a tool whose generator yields 'started' and then waits on its signal; the first batch ends
  // at the deadline with ['started'] (the read carried over), then the model calls stop_stream
  // with the stream's id. Expected: the stop answers at once, the stream is closed (the tool's
  // signal aborted, so its finally runs) and the run answers 'stopped'. Actual: the step never
  // ends and the run hangs. Cause: src/tool-calls/run-tools.ts:250-251, #stop awaits
  // `stream.iterator.return()`, which for an async generator is queued behind the pending
  // `next()` (stream.pending, :209) that only the tool's signal could release; #stop neither
  // aborts that signal (it does not even call stream.unlink()) nor bounds the wait.
  it('stop_stream closes a stream whose read is still waiting (toolTimeoutMs set)', async () => {
    const { tool, state } = patientStream();
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'w', name: 'watch', arguments: {} }] },
      (request) => ({
        toolCalls: [
          { id: 's', name: STOP_STREAM_TOOL, arguments: { streamId: streamIdIn(request, 'w') } },
        ],
      }),
      { text: 'stopped' },
    ]);
    const chain = createChain({ model, tools: [tool], toolTimeoutMs: 30 });
    const outcome = await within(1000, chain.invoke('watch'));
    expect(outcome).toMatchObject({ settled: 'resolved' });
    expect(toolMessages(messagesOf(model.requests[1]))[0]?.output).toMatchObject({
      chunks: ['started'],
      done: false,
    });
    expect(toolMessages(messagesOf(model.requests[2])).at(-1)).toMatchObject({
      toolCallId: 's',
      success: true,
    });
    await vi.waitFor(() => expect(state.closed).toBe(true), { timeout: 500 });
  });
});
