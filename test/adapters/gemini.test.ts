// GeminiModel through the real @google/genai SDK over HTTP, against a local server on
// 127.0.0.1 that replays Gemini's recorded wire formats (test/fixtures/gemini). Nothing here
// touches the internet.
import { getEventListeners } from 'node:events';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { GoogleGenAI } from '@google/genai';
import {
  AbortError,
  type ChainStreamEvent,
  ConfigError,
  createChain,
  defineTool,
  ModelError,
  Transcript,
  userMessage,
} from 'statecraft';
import { GeminiModel, type GeminiModelOptions, SKIP_THOUGHT_SIGNATURE } from 'statecraft/gemini';
import type { ModelRequest, StreamPart } from 'statecraft/model';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import {
  fixture,
  jsonFixture,
  type ReplayResponse,
  type ReplayServer,
  ssePieces,
  startReplayServer,
} from '../support/replay-server.js';

const MODEL = 'gemini-2.5-flash';
const GENERATE = `/v1beta/models/${MODEL}:generateContent`;
const STREAM = `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`;
// Retries as the SDK does them, with delays short enough for a test.
const FAST_RETRIES = { attempts: 3, initialDelay: 0.01, maxDelay: 0.02 };

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(...responses: ReplayResponse[]): Promise<ReplayServer> {
  server = await startReplayServer(responses);
  return server;
}

const json = (name: string, status?: number): ReplayResponse => ({
  json: jsonFixture('gemini', name),
  ...(status !== undefined && { status }),
});

/** An SSE fixture in pieces of `size` characters, written 1 ms apart: JSON split across reads. */
const sse = (name: string, size = 23): ReplayResponse => ({
  sse: ssePieces(fixture('gemini', name), size),
  delayMs: 1,
});

function gemini(url: string, options: Partial<GeminiModelOptions> = {}): GeminiModel {
  return new GeminiModel({
    model: MODEL,
    apiKey: 'test-key',
    baseUrl: url,
    retries: FAST_RETRIES,
    ...options,
  });
}

const abortListeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;

/**
 * Gemini on Vertex AI in express mode (an API key, no project). The SDK hands Vertex
 * candidates over as they came, `finishMessage` included, which its Gemini API path drops.
 */
function vertexGemini(url: string): GeminiModel {
  const client = new GoogleGenAI({
    vertexai: true,
    apiKey: 'test-key',
    httpOptions: { baseUrl: url, retryOptions: FAST_RETRIES },
  });
  return new GeminiModel({ model: MODEL, client });
}

const ask = (text: string): ModelRequest => ({ messages: Transcript.from([userMessage(text)]) });

/** The JSON body of the n-th recorded request. */
function body(replay: ReplayServer, index: number) {
  return replay.requests[index]?.body as {
    contents: { role: string; parts: Record<string, unknown>[] }[];
    systemInstruction?: { parts: { text: string }[] };
    tools?: { functionDeclarations: { name: string; parametersJsonSchema: unknown }[] }[];
  };
}

function weatherTools() {
  const getWeather = vi.fn(({ city }: { city: string }) => ({
    city,
    tempC: city === 'Paris' ? 18 : 14,
  }));
  const toFahrenheit = vi.fn(({ celsius }: { celsius: number }) => celsius * 1.8 + 32);
  return {
    getWeather,
    toFahrenheit,
    tools: [
      defineTool({
        name: 'get_weather',
        description: 'Current temperature in a city, in °C.',
        input: z.object({ city: z.string() }),
        execute: getWeather,
      }),
      defineTool({
        name: 'to_fahrenheit',
        description: 'Converts °C to °F.',
        input: z.object({ celsius: z.number() }),
        execute: toFahrenheit,
      }),
    ],
  };
}

describe('GeminiModel over HTTP', () => {
  it('runs a chain through two tool rounds to an answer', async () => {
    const replay = await serve(
      json('generate-function-calls.json'),
      json('generate-function-call.json'),
      json('generate-text.json'),
    );
    const { tools, getWeather, toFahrenheit } = weatherTools();
    const chain = createChain({
      model: gemini(replay.url),
      tools,
      systemPrompt: 'You are a weather assistant.',
    });
    const result = await chain.invoke('Which is warmer today, Paris or London?');

    expect(result.text).toBe(
      'It is 18 °C (64.4 °F) in Paris and 14 °C in London, so Paris is the warmer city today.',
    );
    expect(getWeather.mock.calls.map(([args]) => args)).toEqual([
      { city: 'Paris' },
      { city: 'London' },
    ]);
    expect(toFahrenheit).toHaveBeenCalledWith({ celsius: 18 }, expect.anything());
    expect(result.usage).toMatchObject({
      inputTokens: 112 + 205 + 262,
      totalTokens: 190 + 256 + 289,
    });
    expect(replay.requests.map((r) => `${r.method} ${r.path}`)).toEqual(
      Array(3).fill(`POST ${GENERATE}`),
    );
    expect(replay.requests[0]?.headers['x-goog-api-key']).toBe('test-key');

    const first = body(replay, 0);
    expect(first.systemInstruction?.parts.map((p) => p.text).join('\n')).toContain(
      'You are a weather assistant.',
    );
    expect(first.tools?.[0]?.functionDeclarations.map((d) => d.name)).toEqual([
      'get_weather',
      'to_fahrenheit',
    ]);
    expect(first.tools?.[0]?.functionDeclarations[0]?.parametersJsonSchema).toMatchObject({
      type: 'object',
      properties: { city: { type: 'string' } },
    });
    expect(first.contents).toEqual([
      { role: 'user', parts: [{ text: 'Which is warmer today, Paris or London?' }] },
    ]);

    // Round two: the calls replayed with Gemini's thought signature, then both results in one
    // user turn, named after their function.
    const second = body(replay, 1);
    expect(second.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'get_weather', args: { city: 'Paris' } },
            thoughtSignature:
              'CsMBAdHtim9YbG9ja0NoYWluT2ZUaG91Z2h0UGFyaXNMb25kb24xMjM0NTY3ODkwYWJjZGVm',
          },
          { functionCall: { name: 'get_weather', args: { city: 'London' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'get_weather',
              response: { output: '{"city":"Paris","tempC":18}' },
            },
          },
          {
            functionResponse: {
              name: 'get_weather',
              response: { output: '{"city":"London","tempC":14}' },
            },
          },
        ],
      },
    ]);

    // Round three: Gemini's own call id goes back on the call and on its response.
    const third = body(replay, 2);
    expect(third.contents.slice(3)).toEqual([
      {
        role: 'model',
        parts: [
          { text: 'Paris is warmer. Converting 18 °C to Fahrenheit.' },
          {
            functionCall: { id: 'fc-2b7e0c4a', name: 'to_fahrenheit', args: { celsius: 18 } },
            thoughtSignature: 'CpcBAdHtim8zQ29udmVydFRoZVdhcm1lckNpdHkxODkwYWJjZGVmZ2hpams=',
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              id: 'fc-2b7e0c4a',
              name: 'to_fahrenheit',
              response: { output: '64.4' },
            },
          },
        ],
      },
    ]);
  });

  it('assembles a stream cut into small pieces, with a function call, through a chain', async () => {
    const replay = await serve(sse('stream-function-call.sse'), sse('stream-text.sse', 11));
    const { tools, getWeather } = weatherTools();
    const chain = createChain({ model: gemini(replay.url), tools });
    const events: ChainStreamEvent[] = [];
    for await (const event of chain.stream('How warm is Paris?')) events.push(event);

    const deltas = events.flatMap((e) => (e.type === 'text-delta' ? [e.delta] : []));
    expect(deltas.join('')).toBe(
      'Let me check the weather in Paris.It is 18 °C and sunny in Paris today.',
    );
    const calls = events.flatMap((e) => (e.type === 'tool-call' ? [e.toolCall] : []));
    expect(calls).toEqual([
      { id: expect.stringMatching(/^call_/), name: 'get_weather', arguments: { city: 'Paris' } },
    ]);
    expect(getWeather).toHaveBeenCalledOnce();
    const final = events.at(-1);
    expect(final?.type === 'final' && final.output).toMatchObject({
      status: 'succeeded',
      result: 'It is 18 °C and sunny in Paris today.',
    });
    expect(replay.requests.map((r) => r.path)).toEqual([STREAM, STREAM]);
    expect(body(replay, 1).contents[1]).toEqual({
      role: 'model',
      parts: [
        { text: 'Let me check the weather in Paris.' },
        {
          functionCall: { name: 'get_weather', args: { city: 'Paris' } },
          thoughtSignature: 'CowBAdHtim9TdHJlYW1lZENhbGxQYXJpczEyMzQ1Njc4OTBhYmNkZWY=',
        },
      ],
    });
  });

  it('streams parts in the documented order, even from 9-character network reads', async () => {
    const replay = await serve(sse('stream-function-call.sse', 9));
    const parts: StreamPart[] = [];
    for await (const part of gemini(replay.url).stream(ask('How warm is Paris?'))) parts.push(part);
    expect(parts.map((p) => p.type)).toEqual([
      'text-delta',
      'text-delta',
      'tool-call-delta',
      'tool-call',
      'usage',
      'finish',
    ]);
    expect(parts.at(-2)).toEqual({
      type: 'usage',
      usage: { inputTokens: 98, outputTokens: 53, totalTokens: 151, reasoningTokens: 32 },
    });
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'STOP' },
    });
  });

  it('retries a 429 through the SDK, then succeeds', async () => {
    const replay = await serve(json('error-429.json', 429), json('generate-text.json'));
    const response = await gemini(replay.url).generate(ask('Weather?'));
    expect(response.content).toEqual([
      {
        type: 'text',
        text: 'It is 18 °C (64.4 °F) in Paris and 14 °C in London, so Paris is the warmer city today.',
      },
    ]);
    expect(replay.requests).toHaveLength(2);
  });

  it('retries a 429 before a stream starts, too', async () => {
    const replay = await serve(json('error-429.json', 429), sse('stream-text.sse'));
    const parts: StreamPart[] = [];
    for await (const part of gemini(replay.url).stream(ask('Weather?'))) parts.push(part);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'stop', raw: 'STOP' },
    });
    expect(replay.requests).toHaveLength(2);
  });

  it('gives up on a 500 after its limited retries with a retryable ModelError', async () => {
    const replay = await serve(json('error-500.json', 500), json('error-500.json', 500));
    const model = gemini(replay.url, { retries: { attempts: 2, initialDelay: 0.01 } });
    const error = await model.generate(ask('Weather?')).catch((e: unknown) => e);
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect((error as ModelError).message).toContain('INTERNAL: An internal error has occurred');
    expect(replay.requests).toHaveLength(2);
    expect(replay.remaining()).toBe(0);
  });

  it('does not retry with `retries: 0`, and does not retry a 400', async () => {
    const replay = await serve(json('error-500.json', 500), {
      status: 400,
      json: { error: { code: 400, message: 'Invalid JSON payload', status: 'INVALID_ARGUMENT' } },
    });
    const once = await gemini(replay.url, { retries: 0 })
      .generate(ask('x'))
      .catch((e: unknown) => e);
    expect(once).toMatchObject({ status: 500, retryable: true });
    const bad = await gemini(replay.url)
      .generate(ask('x'))
      .catch((e: unknown) => e);
    expect(bad).toMatchObject({ status: 400, retryable: false });
    expect(replay.requests).toHaveLength(2);
  });

  it('maps a connection reset to a retryable ModelError without a status', async () => {
    // The SDK retries statuses only: the reset reaches the caller at once, marked retryable.
    let connections = 0;
    const sockets = createServer((socket) => {
      connections++;
      socket.on('data', () => socket.destroy());
    });
    await new Promise<void>((resolve) => sockets.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = sockets.address() as AddressInfo;
      const error = await gemini(`http://127.0.0.1:${port}`)
        .generate(ask('x'))
        .catch((e: unknown) => e);
      expect(ModelError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ retryable: true, status: undefined });
      expect(connections).toBe(1);
    } finally {
      await new Promise((resolve) => sockets.close(resolve));
    }
  });

  it('aborts mid-stream with an AbortError and leaves no request open', async () => {
    const firstEvent = `${fixture('gemini', 'stream-text.sse').split('\r\n\r\n')[0]}\r\n\r\n`;
    const replay = await serve({ sse: ssePieces(firstEvent), hang: true });
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    const error = await (async () => {
      for await (const part of gemini(replay.url).stream(ask('Weather?'), {
        signal: controller.signal,
      })) {
        seen.push(part);
        if (part.type === 'text-delta') controller.abort('user cancelled');
      }
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ type: 'text-delta', delta: 'It is 18 °C' }]);
    expect(AbortError.isInstance(error)).toBe(true);
    await vi.waitFor(() => expect(replay.openRequests()).toBe(0));
  });

  it('aborts at once while the SDK waits out its retry backoff', async () => {
    // A backoff of a minute: were the abort to wait for it, the test would time out.
    const replay = await serve(json('error-429.json', 429), json('generate-text.json'));
    const model = gemini(replay.url, { retries: { attempts: 2, initialDelay: 60, maxDelay: 60 } });
    const controller = new AbortController();
    const call = model.generate(ask('Weather?'), { signal: controller.signal });
    await vi.waitFor(() => expect(replay.requests).toHaveLength(1));
    await vi.waitFor(() => expect(replay.openRequests()).toBe(0));
    controller.abort('user cancelled');
    const error = await call.catch((e: unknown) => e);
    expect(AbortError.isInstance(error)).toBe(true);
    expect((error as AbortError).cause).toBe('user cancelled');
    // The retry never went out, and nothing is left open.
    expect(replay.requests).toHaveLength(1);
    expect(replay.remaining()).toBe(1);
    expect(replay.openRequests()).toBe(0);
  });

  it('yields nothing more once aborted, even parts already received', async () => {
    // The whole stream in one write: every chunk is buffered before the reader sees the first.
    const replay = await serve({ sse: [fixture('gemini', 'stream-text.sse')], hang: true });
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    const error = await (async () => {
      for await (const part of gemini(replay.url).stream(ask('Weather?'), {
        signal: controller.signal,
      })) {
        seen.push(part);
        if (part.type === 'text-delta') controller.abort('user cancelled');
      }
    })().catch((e: unknown) => e);
    expect(seen).toEqual([{ type: 'text-delta', delta: 'It is 18 °C' }]);
    expect(AbortError.isInstance(error)).toBe(true);
    expect((error as AbortError).cause).toBe('user cancelled');
    await vi.waitFor(() => expect(replay.openRequests()).toBe(0));
  });

  it('rejects a stream whose connection drops mid-body with a retryable ModelError', async () => {
    const firstEvent = `${fixture('gemini', 'stream-text.sse').split('\r\n\r\n')[0]}\r\n\r\n`;
    const responses: ServerResponse[] = [];
    const dropping = createHttpServer((req, res) => {
      responses.push(res);
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(firstEvent);
      });
    });
    await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = dropping.address() as AddressInfo;
      const seen: StreamPart[] = [];
      const error = await (async () => {
        for await (const part of gemini(`http://127.0.0.1:${port}`).stream(ask('Weather?'))) {
          seen.push(part);
          // The connection goes once the first part is through, not on a timer.
          responses[0]?.socket?.destroy();
        }
      })().catch((e: unknown) => e);
      expect(ModelError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ retryable: true, status: undefined });
      expect((error as ModelError).message).toBe(
        `lost the connection to http://127.0.0.1:${port} (connection closed)`,
      );
      expect(seen).toEqual([{ type: 'text-delta', delta: 'It is 18 °C' }]);
      // The SDK does not retry a body that broke off: the caller decides, `retryable` says it may.
      expect(responses).toHaveLength(1);
    } finally {
      dropping.closeAllConnections();
      await new Promise((resolve) => dropping.close(resolve));
    }
  });

  it('leaves no abort listener on a long-lived signal after many calls and streams', async () => {
    const replay = await serve(
      json('error-429.json', 429),
      ...Array.from({ length: 15 }, () => json('generate-text.json')),
      sse('stream-text.sse'),
      sse('stream-text.sse'),
      { sse: [fixture('gemini', 'stream-text.sse')], hang: true },
    );
    const model = gemini(replay.url);
    const { signal } = new AbortController();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      // The first call is retried once (429): a retry must not leave a listener either.
      for (let i = 0; i < 15; i++) await model.generate(ask('Weather?'), { signal });
      expect(abortListeners(signal)).toBe(0);
      for (let i = 0; i < 2; i++) {
        for await (const _ of model.stream(ask('Weather?'), { signal })) {
          // Read to the end.
        }
      }
      // A reader that stops early.
      for await (const part of model.stream(ask('Weather?'), { signal })) {
        if (part.type === 'text-delta') break;
      }
      // Warnings are emitted on a later tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(replay.requests).toHaveLength(19);
    expect(abortListeners(signal)).toBe(0);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  });

  it('closes the request when a reader stops early without aborting', async () => {
    const firstEvent = `${fixture('gemini', 'stream-text.sse').split('\r\n\r\n')[0]}\r\n\r\n`;
    const replay = await serve({ sse: [firstEvent], hang: true });
    for await (const part of gemini(replay.url).stream(ask('Weather?'))) {
      if (part.type === 'text-delta') break;
    }
    await vi.waitFor(() => expect(replay.openRequests()).toBe(0));
  });

  it('rejects at once, without a request, when the signal is already aborted', async () => {
    const replay = await serve(json('generate-text.json'));
    const error = await gemini(replay.url)
      .generate(ask('x'), { signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    expect(AbortError.isInstance(error)).toBe(true);
    expect(replay.requests).toHaveLength(0);
  });

  it('answers a MALFORMED_FUNCTION_CALL with a failed call the model sees, and finishes', async () => {
    const replay = await serve(json('generate-malformed-args.json'), json('generate-apology.json'));
    const { tools, getWeather } = weatherTools();
    const chain = createChain({ model: vertexGemini(replay.url), tools });
    const result = await chain.invoke('How warm is Paris?');

    expect(result.text).toBe(
      'Sorry, my weather lookup failed, so I cannot tell how warm Paris is right now.',
    );
    expect(getWeather).not.toHaveBeenCalled();
    expect(replay.requests).toHaveLength(2);
    const finishMessage = 'Malformed function call: print(default_api.get_weather(city=Paris"))';
    const [call, answer] = body(replay, 1).contents.slice(1);
    // The bad call is replayed under the name it tried, with Gemini's own words as its text…
    expect(call).toEqual({
      role: 'model',
      parts: [
        {
          functionCall: { name: 'get_weather', args: { value: finishMessage } },
          thoughtSignature: SKIP_THOUGHT_SIGNATURE,
        },
      ],
    });
    // …and answered with an error that says what went wrong.
    expect(answer).toEqual({
      role: 'user',
      parts: [
        {
          functionResponse: {
            name: 'get_weather',
            response: { error: expect.stringContaining('MALFORMED_FUNCTION_CALL') },
          },
        },
      ],
    });
    const response = answer?.parts[0]?.functionResponse as { response?: { error?: string } };
    expect(response.response?.error).toContain(finishMessage);
  });

  it('answers a streamed MALFORMED_FUNCTION_CALL the same way, through a chain', async () => {
    const replay = await serve(sse('stream-malformed-call.sse'), sse('stream-text.sse'));
    const { tools, getWeather } = weatherTools();
    const chain = createChain({ model: vertexGemini(replay.url), tools });
    const events: ChainStreamEvent[] = [];
    for await (const event of chain.stream('How warm is Paris?')) events.push(event);

    const calls = events.flatMap((e) => (e.type === 'tool-call' ? [e.toolCall] : []));
    expect(calls).toEqual([
      {
        id: expect.stringMatching(/^call_/),
        name: 'get_weather',
        arguments: 'Malformed function call: call:default_api:get_weather{city:<ctrl46>Paris}',
        argumentsError: expect.stringContaining('MALFORMED_FUNCTION_CALL'),
      },
    ]);
    expect(getWeather).not.toHaveBeenCalled();
    const final = events.at(-1);
    expect(final?.type === 'final' && final.output).toMatchObject({
      status: 'succeeded',
      result: 'It is 18 °C and sunny in Paris today.',
    });
    expect(body(replay, 1).contents[2]).toEqual({
      role: 'user',
      parts: [
        {
          functionResponse: {
            name: 'get_weather',
            response: { error: expect.stringContaining('call:default_api:get_weather') },
          },
        },
      ],
    });
  });

  it('answers a MALFORMED_FUNCTION_CALL from the Gemini API, whose SDK drops finishMessage', async () => {
    // The SDK's Gemini API path keeps only the candidate fields it knows, and finishMessage is
    // not one of them: the call cannot be named, but the chain must still go on and finish.
    const replay = await serve(json('generate-malformed-args.json'), json('generate-apology.json'));
    const { tools, getWeather } = weatherTools();
    const chain = createChain({ model: gemini(replay.url), tools });
    const result = await chain.invoke('How warm is Paris?');

    expect(result.text).toBe(
      'Sorry, my weather lookup failed, so I cannot tell how warm Paris is right now.',
    );
    expect(getWeather).not.toHaveBeenCalled();
    expect(replay.requests).toHaveLength(2);
    expect(body(replay, 1).contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [
          {
            functionCall: { name: 'malformed_call', args: { value: '' } },
            thoughtSignature: SKIP_THOUGHT_SIGNATURE,
          },
        ],
      },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              name: 'malformed_call',
              response: { error: expect.stringContaining("Unknown tool 'malformed_call'") },
            },
          },
        ],
      },
    ]);
  });
});

describe('GeminiModel options', () => {
  it('names the bad option', () => {
    const configError = (options: unknown) => {
      try {
        new GeminiModel(options as GeminiModelOptions);
      } catch (error) {
        if (ConfigError.isInstance(error)) return error.option;
        throw error;
      }
      return undefined;
    };
    expect(configError({ apiKey: 'k' })).toBe('model');
    expect(configError({ model: 'm', apiKey: 'k', baseUrl: 'not a url' })).toBe('baseUrl');
    expect(configError({ model: 'm', apiKey: 'k', retries: -1 })).toBe('retries');
    expect(configError({ model: 'm', apiKey: 'k', retries: { attempts: 0 } })).toBe(
      'retries.attempts',
    );
    expect(configError({ model: 'm', apiKey: 'k', retries: { initialDelay: -1 } })).toBe(
      'retries.initialDelay',
    );
    expect(configError({ model: 'm', apiKey: 'k', providerOptions: [] })).toBe('providerOptions');
    expect(configError({ model: 'm', client: {} })).toBe('client');
    const client = new GeminiModel({ model: 'm', apiKey: 'k' }).client;
    expect(configError({ model: 'm', client, baseUrl: 'http://127.0.0.1:1' })).toBe('client');
    expect(configError({ model: 'm', client })).toBeUndefined();
  });

  it('asks for an API key when neither the options nor the environment have one', () => {
    vi.stubEnv('GEMINI_API_KEY', '');
    vi.stubEnv('GOOGLE_API_KEY', '');
    try {
      expect(() => new GeminiModel({ model: 'm' })).toThrow(/Invalid option `apiKey`/);
      vi.stubEnv('GEMINI_API_KEY', 'from-env');
      expect(new GeminiModel({ model: 'm' }).provider).toBe('gemini');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('uses a client passed in as it is', async () => {
    const replay = await serve(json('generate-text.json'));
    const { client } = new GeminiModel({ model: MODEL, apiKey: 'own-key', baseUrl: replay.url });
    const model = new GeminiModel({ model: MODEL, client });
    expect(model.client).toBe(client);
    await model.generate(ask('x'));
    expect(replay.requests[0]?.headers['x-goog-api-key']).toBe('own-key');
  });
});
