// Both OpenAI model classes over HTTP, for what happens around a call rather than in it: a
// connection that drops mid-stream, and the abort listeners a caller's long-lived signal is
// left with afterwards. Servers listen on 127.0.0.1 only.
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AbortError, type LanguageModel, ModelError } from 'statecraft';
import type { StreamPart } from 'statecraft/model';
import { OpenAIChatModel, OpenAIResponsesModel } from 'statecraft/openai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fixture, type ReplayServer } from '../support/replay-server.js';
import { json, rejectionOf, request, sse, useReplayServer } from './openai-weather.js';

const serve = useReplayServer();

interface Api {
  readonly name: string;
  readonly model: (baseURL: string) => LanguageModel;
  /** Recorded answers: a JSON one and an SSE one. */
  readonly json: string;
  readonly sse: string;
  /** How many SSE events, from the start of `sse`, reach the first text delta ('Paris'). */
  readonly eventsToFirstDelta: number;
}

const APIS: readonly Api[] = [
  {
    name: 'OpenAIChatModel',
    model: (baseURL) => new OpenAIChatModel({ model: 'gpt-4.1-mini', apiKey: 'sk-test', baseURL }),
    json: 'chat-text.json',
    sse: 'chat-text.sse',
    eventsToFirstDelta: 2,
  },
  {
    name: 'OpenAIResponsesModel',
    model: (baseURL) =>
      new OpenAIResponsesModel({ model: 'gpt-4.1-mini', apiKey: 'sk-test', baseURL }),
    json: 'responses-text.json',
    sse: 'responses-text.sse',
    eventsToFirstDelta: 5,
  },
];

const baseURL = (at: { url: string }) => `${at.url}/v1`;

/**
 * A server that answers every request with a 200 SSE stream, writes `piece`, then destroys
 * the socket: the connection dropped mid-stream, which the replay server cannot do.
 */
let dropping: Server | undefined;
afterEach(async () => {
  const server = dropping;
  dropping = undefined;
  if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function droppingServer(piece: string): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // Destroy only once the piece is on the wire, so the client reads it before the drop.
      res.write(piece, () => setTimeout(() => res.socket?.destroy(), 20));
    });
  });
  dropping = server;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => requests };
}

async function drain(
  stream: AsyncIterable<StreamPart>,
  stopAfter = Number.POSITIVE_INFINITY,
): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) {
    parts.push(part);
    if (parts.length >= stopAfter) break;
  }
  return parts;
}

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

describe.each(APIS)('$name', (api) => {
  it('rejects a stream whose connection drops mid-body with a retryable ModelError', async () => {
    const events = fixture('openai', api.sse).split(/(?<=\n\n)/);
    const at = await droppingServer(events.slice(0, api.eventsToFirstDelta).join(''));
    const seen: StreamPart[] = [];
    const run = (async () => {
      for await (const part of api.model(baseURL(at)).stream(request())) seen.push(part);
    })();

    const error = await rejectionOf(run);

    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true });
    // The drop came after the first piece, not before the answer started.
    expect(seen).toEqual([{ type: 'text-delta', delta: 'Paris' }]);
    // A streaming body is never retried by the SDK: the caller decides, `retryable` says it may.
    expect(at.requests()).toBe(1);
  });

  it('leaves no abort listener on a signal shared by 15 generate calls', async () => {
    const at = await serve(Array.from({ length: 15 }, () => json(api.json)));
    const model = api.model(baseURL(at));
    const controller = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      for (let i = 0; i < 15; i++) await model.generate(request(), { signal: controller.signal });
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }

    expect(at.requests).toHaveLength(15);
    expect(abortListeners(controller.signal)).toBe(0);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  });

  it('leaves no abort listener after a failed generate call, retries included', async () => {
    const failure = {
      status: 500,
      headers: { 'retry-after-ms': '1' },
      json: { error: { message: 'The server had an error', type: 'server_error' } },
    };
    const at = await serve([failure, failure, failure]);
    const controller = new AbortController();
    const error = await rejectionOf(
      api.model(baseURL(at)).generate(request(), { signal: controller.signal }),
    );
    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect(at.requests).toHaveLength(3);
    expect(abortListeners(controller.signal)).toBe(0);
  });

  it('leaves no abort listener after streams read to the end, stopped early, or failed', async () => {
    const at: ReplayServer = await serve([
      sse(api.sse),
      sse(api.sse),
      sse(api.sse),
      // The reader below stops at the first part; the server keeps the stream open.
      {
        sse: fixture('openai', api.sse)
          .split(/(?<=\n\n)/)
          .slice(0, 5),
        hang: true,
      },
      { status: 400, json: { error: { message: 'Bad request', type: 'invalid_request_error' } } },
    ]);
    const model = api.model(baseURL(at));
    const { signal } = new AbortController();

    for (let i = 0; i < 3; i++) {
      const parts = await drain(model.stream(request(), { signal }));
      expect(parts.at(-1)).toMatchObject({ type: 'finish' });
    }
    expect(await drain(model.stream(request(), { signal }), 1)).toHaveLength(1);
    const error = await rejectionOf(drain(model.stream(request(), { signal })));
    expect(error).toMatchObject({ status: 400 });

    expect(abortListeners(signal)).toBe(0);
    // Stopping early cancelled that request too.
    await vi.waitFor(() => expect(at.openRequests()).toBe(0));
  });

  it('still cancels a generate call in flight when the shared signal aborts', async () => {
    // Headers but never a body: the call waits until it is aborted.
    const at = await serve([{ sse: [], hang: true }]);
    const controller = new AbortController();
    const call = api.model(baseURL(at)).generate(request(), { signal: controller.signal });
    await vi.waitFor(() => expect(at.requests).toHaveLength(1));
    controller.abort();

    expect(AbortError.isInstance(await rejectionOf(call))).toBe(true);
    await vi.waitFor(() => expect(at.openRequests()).toBe(0));
  });
});
