// AnthropicModel over HTTP, for what happens around a call rather than in it: a connection
// that drops mid-answer, and the abort listeners a caller's long-lived signal is left with
// afterwards. Servers listen on 127.0.0.1 only.
import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ModelError, Transcript, userMessage } from 'statecraft';
import { AnthropicModel, type AnthropicModelOptions } from 'statecraft/anthropic';
import type { StreamPart } from 'statecraft/model';
import { afterEach, describe, expect, it } from 'vitest';
import {
  fixture,
  jsonFixture,
  type ReplayResponse,
  type ReplayServer,
  ssePieces,
  startReplayServer,
} from '../support/replay-server.js';

const ask = (text: string) => ({ messages: Transcript.from([userMessage(text)]) });

let servers: { close(): Promise<void> }[] = [];

afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

function modelAt(url: string, options: Partial<AnthropicModelOptions> = {}): AnthropicModel {
  return new AnthropicModel({
    model: 'claude-sonnet-5-5',
    apiKey: 'sk-ant-test',
    baseURL: url,
    ...options,
  });
}

async function replay(responses: ReplayResponse[]): Promise<ReplayServer> {
  const server = await startReplayServer(responses);
  servers.push(server);
  return server;
}

/**
 * A server that answers every request with a 200 whose body it starts (`head`), then destroys
 * the socket: the connection dropped mid-answer, which the replay server cannot do.
 */
async function droppingServer(
  head: string,
  contentType: string,
): Promise<{ url: string; requests: () => number }> {
  let requests = 0;
  const server: Server = createServer((req, res) => {
    requests++;
    req.resume();
    req.on('end', () => {
      // A content-length longer than what is sent, so a JSON body is cut short, not ended.
      res.writeHead(200, { 'content-type': contentType, 'content-length': head.length * 4 });
      // Destroy only once the piece is on the wire, so the client reads it before the drop.
      res.write(head, () => setTimeout(() => res.socket?.destroy(), 20));
    });
  });
  servers.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests: () => requests };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

async function drain(stream: AsyncIterable<StreamPart>, stopAfter = Infinity) {
  const parts: StreamPart[] = [];
  for await (const part of stream) {
    parts.push(part);
    if (parts.length >= stopAfter) break;
  }
  return parts;
}

// The stream up to its first text delta ('Hello'); the rest never comes.
const STREAM_HEAD = `${fixture('anthropic', 'stream-text.sse').split('\n\n').slice(0, 4).join('\n\n')}\n\n`;

describe('a connection dropped mid-answer', () => {
  it('rejects a stream with a retryable ModelError, after the parts that did arrive', async () => {
    const at = await droppingServer(STREAM_HEAD, 'text/event-stream');
    const parts: StreamPart[] = [];
    const error = await rejection(
      (async () => {
        for await (const part of modelAt(at.url).stream(ask('Hi'))) parts.push(part);
      })(),
    );

    expect(parts).toEqual([{ type: 'text-delta', delta: 'Hello' }]);
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, status: undefined });
    // Headers had arrived, so the SDK did not retry: retrying is the caller's policy.
    expect(at.requests()).toBe(1);
  });

  it('rejects generate with a retryable ModelError when the JSON body is cut short', async () => {
    const body = JSON.stringify(jsonFixture('anthropic', 'message-text.json'));
    const at = await droppingServer(body.slice(0, 120), 'application/json');
    const error = await rejection(modelAt(at.url).generate(ask('Hi')));

    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, status: undefined });
  });
});

describe("the caller's signal", () => {
  it('keeps no abort listeners after many calls share it', async () => {
    const calls = 15;
    const answers: ReplayResponse[] = [
      ...Array.from({ length: calls }, () => ({
        json: jsonFixture('anthropic', 'message-text.json'),
      })),
      // A 429 retried by the SDK, then its answer.
      {
        status: 429,
        headers: { 'retry-after-ms': '1' },
        json: jsonFixture('anthropic', 'error-rate-limit.json'),
      },
      { json: jsonFixture('anthropic', 'message-text.json') },
      // A 400 that is not retried.
      {
        status: 400,
        json: { type: 'error', error: { type: 'invalid_request_error', message: 'no' } },
      },
      // Streams: read to the end, and left after the first part.
      { sse: ssePieces(fixture('anthropic', 'stream-text.sse')) },
      { sse: ssePieces(fixture('anthropic', 'stream-text.sse')) },
      // generate with a large max_tokens, which streams.
      { sse: ssePieces(fixture('anthropic', 'stream-text.sse')) },
    ];
    const server = await replay(answers);
    const model = modelAt(server.url);
    const { signal } = new AbortController();

    for (let i = 0; i < calls; i++) await model.generate(ask(`Hi ${i}`), { signal });
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);

    await model.generate(ask('Retried'), { signal });
    await rejection(model.generate(ask('Refused'), { signal }));
    await drain(model.stream(ask('Whole stream'), { signal }));
    await drain(model.stream(ask('First part only'), { signal }), 1);
    await model.generate({ ...ask('Long answer'), maxOutputTokens: 64000 }, { signal });

    expect(server.requests).toHaveLength(answers.length);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });
});
