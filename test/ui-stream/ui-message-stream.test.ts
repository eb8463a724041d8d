// toUIMessageStream read back with the `ai` package's own reader: every chunk is parsed from
// the SSE bytes by `parseJsonEventStream` against `uiMessageChunkSchema` (a chunk ai does not
// know fails the parse), then folded into a message by `readUIMessageStream`, as the AI SDK's
// chat client does. Chains and tool loops; text, tool calls and results, a failed tool, a
// refused call, an attachment, the result part, a failed and a cancelled run, approvals.
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  parseJsonEventStream,
  readUIMessageStream,
  type UIMessage,
  uiMessageChunkSchema,
} from 'ai';
import {
  attachment,
  type ChainStreamEvent,
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  ModelError,
  type Planner,
  toolOutput,
} from 'statecraft';
import {
  toUIMessageStream,
  UI_MESSAGE_STREAM_HEADERS,
  type UIMessageChunk,
  uiMessageStreamResponse,
  writeUIMessageStream,
} from 'statecraft/ai-sdk';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

/** The chunks as `ai` parses them from the SSE bytes; a chunk it rejects fails the test. */
async function chunksOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const response = uiMessageStreamResponse(stream);
  const body = response.body;
  if (body === null) throw new Error('no body');
  const parsed = parseJsonEventStream({ stream: body, schema: uiMessageChunkSchema });
  const chunks: UIMessageChunk[] = [];
  for await (const result of parsed as unknown as AsyncIterable<
    { success: true; value: UIMessageChunk } | { success: false; error: unknown }
  >) {
    if (!result.success) throw new Error(`ai refused a chunk: ${String(result.error)}`);
    chunks.push(result.value);
  }
  return chunks;
}

/** The assistant message `readUIMessageStream` makes of the chunks, and the errors it reported. */
async function messageOf(
  chunks: readonly UIMessageChunk[],
  message?: UIMessage,
): Promise<{ message: UIMessage; errors: string[] }> {
  const errors: string[] = [];
  const stream = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const snapshot of readUIMessageStream({
    stream: stream as never,
    // The reader changes the message it is given: a copy keeps the caller's.
    ...(message !== undefined && { message: structuredClone(message) }),
    onError: (error) => errors.push(error instanceof Error ? error.message : JSON.stringify(error)),
  })) {
    last = snapshot;
  }
  if (last === undefined) throw new Error('no message');
  return { message: last, errors };
}

const types = (chunks: readonly UIMessageChunk[]) => chunks.map((c) => c.type);

const PNG = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an order up.',
  input: z.object({ id: z.string() }),
  execute: ({ id }) => {
    if (id === 'none') throw new Error('no such order');
    return toolOutput({ id, status: 'shipped' }, [attachment({ data: PNG, name: 'label.png' })]);
  },
});

describe('toUIMessageStream, read back by ai', () => {
  it("writes a chain's text, calls, results, refused and failed calls, attachments and result", async () => {
    const model = new ScriptedModel([
      {
        text: 'Let me look.',
        chunks: ['Let ', 'me look.'],
        toolCalls: [
          { id: 'c1', name: 'lookup', arguments: { id: 'A-17' } },
          { id: 'c2', name: 'lookup', arguments: { id: 'none' } },
          { id: 'c3', name: 'lookup', argumentsText: '{"id": ' },
        ],
        usage: { inputTokens: 100, outputTokens: 10 },
      },
      { text: 'A-17 has shipped.', chunks: ['A-17 ', 'has shipped.'] },
    ]);
    const chain = createChain({ model, tools: [lookup] });
    const chunks = await chunksOf(
      toUIMessageStream(chain.stream('Where is A-17?'), { messageId: 'm1', runId: 'run-1' }),
    );
    expect(types(chunks)).toEqual([
      'start',
      'start-step',
      'text-start',
      'text-delta',
      'text-delta',
      'text-end',
      ...['tool-input-start', 'tool-input-delta', 'tool-input-available'],
      ...['tool-input-start', 'tool-input-delta', 'tool-input-available'],
      ...['tool-input-start', 'tool-input-delta', 'tool-input-error'],
      'tool-output-available',
      'file',
      'tool-output-error',
      'finish-step',
      'start-step',
      'text-start',
      'text-delta',
      'text-delta',
      'text-end',
      'finish-step',
      'data-result',
      'message-metadata',
      'finish',
    ]);
    const { message, errors } = await messageOf(chunks);
    expect(errors).toEqual([]);
    expect(message.id).toBe('m1');
    expect(message.metadata).toEqual({
      runId: 'run-1',
      usage: expect.objectContaining({ totalTokens: expect.any(Number) }),
    });
    const parts = message.parts.map((part) => {
      const { type } = part;
      if (type === 'text') return { type, text: part.text, state: part.state };
      if (type.startsWith('tool-')) {
        const { toolCallId, state, input, output, errorText } = part as never as Record<
          string,
          unknown
        >;
        return { type, toolCallId, state, input, output, errorText };
      }
      return part;
    });
    expect(parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Let me look.', state: 'done' },
      {
        type: 'tool-lookup',
        toolCallId: 'c1',
        state: 'output-available',
        input: { id: 'A-17' },
        output: { id: 'A-17', status: 'shipped' },
        errorText: undefined,
      },
      {
        type: 'tool-lookup',
        toolCallId: 'c2',
        state: 'output-error',
        input: { id: 'none' },
        output: undefined,
        errorText: expect.stringContaining('no such order'),
      },
      {
        type: 'tool-lookup',
        toolCallId: 'c3',
        state: 'output-error',
        input: '{"id": ',
        output: undefined,
        errorText: expect.any(String),
      },
      {
        type: 'file',
        mediaType: 'image/png',
        url: expect.stringMatching(/^data:image\/png;base64,iVBORw0KGgo/),
      },
      { type: 'step-start' },
      { type: 'text', text: 'A-17 has shipped.', state: 'done' },
      {
        type: 'data-result',
        id: 'result',
        data: expect.objectContaining({
          status: 'succeeded',
          result: 'A-17 has shipped.',
          text: 'A-17 has shipped.',
        }),
      },
    ]);
  });

  it("writes a tool loop's rounds, commands, records (with their attachments) and response", async () => {
    const planner: Planner = (given) =>
      (given as { roundIndex: number }).roundIndex > 0
        ? { nextAction: 'response', executionCommands: [] }
        : {
            nextAction: 'execute',
            executionCommands: ['A-1', 'none'].map((id) => ({
              purpose: `Find ${id}`,
              toolName: 'lookup',
              toolKwargs: { id },
              todoSuggestion: 'read it',
            })),
          };
    const model = new ScriptedModel([
      { text: 'A-1 shipped; none is unknown.', chunks: ['A-1 shipped; ', 'none is unknown.'] },
    ]);
    const loop = createToolLoop({ model, tools: [lookup], planner });
    const chunks = await chunksOf(toUIMessageStream(loop.stream('Find A-1 and none')));
    const { message, errors } = await messageOf(chunks);
    expect(errors).toEqual([]);
    expect(types(chunks)).toContain('tool-output-error');
    const summary = message.parts.map((part) =>
      part.type.startsWith('tool-')
        ? `${part.type} ${(part as { toolCallId: string }).toolCallId} ${(part as { state: string }).state}`
        : part.type === 'text'
          ? `text ${part.text}`
          : part.type === 'file'
            ? `file ${part.mediaType} ${part.url.slice(0, 33)}`
            : part.type,
    );
    expect(summary).toEqual([
      'step-start',
      'tool-lookup round1_0 output-available',
      'tool-lookup round1_1 output-error',
      // The tool's attachment, carried by the loop's record, as a file part.
      'file image/png data:image/png;base64,iVBORw0KGgo',
      'step-start',
      'text A-1 shipped; none is unknown.',
      'data-result',
    ]);
    const result = message.parts.at(-1) as { data: { answer: string; stopReason: string } };
    expect(result.data).toMatchObject({
      answer: 'A-1 shipped; none is unknown.',
      stopReason: 'response',
    });
  });

  it("ends a failed run with its result part, an error and finish, the error's text masked", async () => {
    const secret = 'the provider is down: https://files.example/x?token=s3cr3t';
    const model = new ScriptedModel([{ error: new ModelError(secret) }]);
    const chain = createChain({ model });
    const chunks = await chunksOf(toUIMessageStream(chain.stream('Hi')));
    expect(types(chunks)).toEqual(['start', 'data-result', 'error', 'finish']);
    expect(chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'error' });
    // By default the browser gets a generic text and the error's code, never its message.
    expect(JSON.stringify(chunks)).not.toContain('s3cr3t');
    const masked = await messageOf(chunks);
    expect(masked.errors).toEqual(['An error occurred.']);
    expect(masked.message.parts).toEqual([
      {
        type: 'data-result',
        id: 'result',
        data: { status: 'failed', error: { code: 'MODEL_ERROR', message: 'An error occurred.' } },
      },
    ]);

    // errorText opts in to what the page may read.
    const again = createChain({ model: new ScriptedModel([{ error: new ModelError(secret) }]) });
    const shown = await chunksOf(
      toUIMessageStream(again.stream('Hi'), {
        errorText: (error) => (error instanceof Error ? error.message : String(error)),
      }),
    );
    const { message, errors } = await messageOf(shown);
    expect(errors).toEqual([expect.stringContaining('the provider is down')]);
    expect(message.parts).toEqual([
      {
        type: 'data-result',
        id: 'result',
        data: {
          status: 'failed',
          error: { code: 'MODEL_ERROR', message: expect.stringContaining('the provider is down') },
        },
      },
    ]);
  });

  it('ends a cancelled run with abort, and cancelling the UI stream stops the run', async () => {
    const controller = new AbortController();
    const model = new ScriptedModel([
      { text: 'a slow answer', chunks: ['a ', 'slow ', 'answer'], chunkDelayMs: 200 },
    ]);
    const chain = createChain({ model });
    const stream = toUIMessageStream(chain.stream('Hi', { signal: controller.signal }));
    const reader = stream.getReader();
    const seen: UIMessageChunk[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      seen.push(value);
      if (value.type === 'text-delta') controller.abort();
    }
    expect(seen.at(-1)).toEqual({ type: 'abort', reason: expect.any(String) });

    // The reader goes away: the run's own stream is closed, which stops it.
    let closed = false;
    const events = chain.stream('Hi again');
    const watched: AsyncIterable<ChainStreamEvent> = {
      [Symbol.asyncIterator]() {
        const inner = events[Symbol.asyncIterator]();
        return {
          next: () => inner.next(),
          return: async () => {
            closed = true;
            return (await inner.return?.()) ?? { done: true, value: undefined };
          },
        };
      },
    };
    const second = toUIMessageStream(watched).getReader();
    await second.read(); // start
    await second.cancel();
    expect(closed).toBe(true);
  });

  it('refuses options it cannot use, naming them', () => {
    const chain = createChain({ model: new ScriptedModel([{ text: 'hi' }]) });
    const events = chain.stream('Hi');
    expect(() =>
      toUIMessageStream(events, { messageId: '', pauseOnApproval: 'yes' } as never),
    ).toThrow(ConfigError);
    // An unknown option is refused, naming the nearest known one.
    expect(() => toUIMessageStream(events, { messageID: 'm' } as never)).toThrow(/messageId/);
    expect(() => toUIMessageStream({} as never)).toThrow(/events/);
    void (async () => {
      for await (const _ of events) break;
    })();
  });
});

describe('the UI message stream on the wire', () => {
  it('is SSE with the headers the AI SDK client checks, [DONE] last, from a Response or node:http', async () => {
    const chain = createChain({ model: new ScriptedModel([{ text: 'hi' }, { text: 'hi' }]) });
    const response = uiMessageStreamResponse(
      toUIMessageStream(chain.stream('Hi'), { messageId: 'm1' }),
    );
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const text = await response.text();
    expect(text.startsWith('data: {"type":"start","messageId":"m1"}\n\n')).toBe(true);
    expect(text.endsWith('\n\ndata: [DONE]\n\n')).toBe(true);
    expect(text.split('\n\n').every((frame) => frame === '' || frame.startsWith('data: '))).toBe(
      true,
    );

    const server = createServer((_, res) => {
      void writeUIMessageStream(res, toUIMessageStream(chain.stream('Hi'), { messageId: 'm2' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const fetched = await fetch(`http://127.0.0.1:${port}/`, {
        signal: AbortSignal.timeout(20_000),
      });
      for (const [name, value] of Object.entries(UI_MESSAGE_STREAM_HEADERS)) {
        expect(fetched.headers.get(name)).toBe(value);
      }
      const body = await fetched.text();
      expect(body.startsWith('data: {"type":"start","messageId":"m2"}\n\n')).toBe(true);
      expect(body.endsWith('data: [DONE]\n\n')).toBe(true);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('waits for drain on a slow client without piling up listeners', async () => {
    // A response whose buffer is always full: every write waits for 'drain'.
    class SlowResponse extends EventEmitter {
      writableEnded = false;
      destroyed = false;
      written = 0;
      mostCloseListeners = 0;
      writeHead() {}
      write() {
        this.written += 1;
        this.mostCloseListeners = Math.max(this.mostCloseListeners, this.listenerCount('close'));
        setImmediate(() => this.emit('drain'));
        return false;
      }
      end() {
        this.writableEnded = true;
      }
    }
    const response = new SlowResponse();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const deltas = 50;
      const stream = new ReadableStream<UIMessageChunk>({
        start(controller) {
          controller.enqueue({ type: 'text-start', id: 't' });
          for (let i = 0; i < deltas; i += 1) {
            controller.enqueue({ type: 'text-delta', id: 't', delta: `${i} ` });
          }
          controller.enqueue({ type: 'text-end', id: 't' });
          controller.close();
        },
      });
      await writeUIMessageStream(response, stream);
      expect(response.written).toBe(deltas + 3); // and [DONE]
      expect(response.writableEnded).toBe(true);
      // The stream's own 'close' listener and the one of the wait under way, no more.
      expect(response.mostCloseListeners).toBeLessThanOrEqual(2);
      expect(response.listenerCount('drain')).toBe(0);
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });
});
