// GeminiModel through the real @google/genai SDK over HTTP, against a local server on
// 127.0.0.1 that replays Gemini's recorded wire formats (test/fixtures/gemini). Nothing here
// touches the internet.
import { type AddressInfo, createServer } from 'node:net';
import {
  AbortError,
  type ChainStreamEvent,
  ConfigError,
  createChain,
  defineTool,
  ModelError,
  type ModelRequest,
  type StreamPart,
  Transcript,
  userMessage,
} from 'statecraft';
import { GeminiModel, type GeminiModelOptions } from 'statecraft/gemini';
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
    const replay = await serve(json('error-429.json', 429), json('generate-text.json'));
    const model = gemini(replay.url, { retries: { attempts: 2, initialDelay: 5 } });
    const controller = new AbortController();
    const call = model.generate(ask('Weather?'), { signal: controller.signal });
    await vi.waitFor(() => expect(replay.requests).toHaveLength(1));
    await vi.waitFor(() => expect(replay.openRequests()).toBe(0));
    const started = Date.now();
    controller.abort();
    const error = await call.catch((e: unknown) => e);
    expect(AbortError.isInstance(error)).toBe(true);
    expect(Date.now() - started).toBeLessThan(500);
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

  it('answers malformed tool arguments with failed results the model sees, and finishes', async () => {
    const replay = await serve(json('generate-malformed-args.json'), json('generate-apology.json'));
    const execute = vi.fn(({ a, b }: { a: number; b: number }) => a + b);
    const add = defineTool({
      name: 'add',
      description: 'Adds two numbers.',
      input: z.object({ a: z.number(), b: z.number() }),
      execute,
    });
    const chain = createChain({ model: gemini(replay.url), tools: [add] });
    const result = await chain.invoke('What is 1 + 2?');

    expect(result.text).toBe('Both calls were rejected: the arguments must be numbers. 1 + 2 = 3.');
    expect(execute).not.toHaveBeenCalled();
    const [model, results] = body(replay, 1).contents.slice(1);
    expect(model?.parts).toEqual([
      {
        functionCall: { name: 'add', args: { a: 'two', b: 2 } },
        thoughtSignature: expect.any(String),
      },
      { functionCall: { name: 'add', args: { value: '{"a": 1, "b": ' } } },
    ]);
    expect(results?.role).toBe('user');
    expect(results?.parts).toEqual([
      { functionResponse: { name: 'add', response: { error: expect.any(String) } } },
      { functionResponse: { name: 'add', response: { error: expect.any(String) } } },
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
