// Integration tests: the real `@anthropic-ai/sdk` over HTTP, against the local replay server
// on 127.0.0.1 (test/support/replay-server.ts) replaying recorded Messages API responses.
// Nothing here reaches the internet.
import {
  AbortError,
  type ChainStreamEvent,
  createChain,
  defineTool,
  ModelError,
  Transcript,
  userMessage,
} from 'statecraft';
import {
  ANTHROPIC_NON_STREAMING_MAX_TOKENS,
  AnthropicModel,
  type AnthropicModelOptions,
} from 'statecraft/anthropic';
import { collectStream, type StreamPart } from 'statecraft/model';
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

const WEATHER: Record<string, { tempC: number; sky: string }> = {
  Paris: { tempC: 18, sky: 'sunny' },
  Oslo: { tempC: 9, sky: 'cloudy' },
};

const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city.',
  input: z.object({ city: z.string(), unit: z.enum(['celsius', 'fahrenheit']).optional() }),
  execute: ({ city }) => {
    const weather = WEATHER[city];
    if (!weather) throw new Error(`Unknown city: ${city}`);
    return weather;
  },
});

let servers: ReplayServer[] = [];

afterEach(async () => {
  await Promise.all(servers.map((server) => server.close()));
  servers = [];
});

/** A replay server answering with `responses`, and a model pointed at it. */
async function setup(responses: ReplayResponse[], options: Partial<AnthropicModelOptions> = {}) {
  const server = await startReplayServer(responses);
  servers.push(server);
  const model = new AnthropicModel({
    model: 'claude-sonnet-5-5',
    apiKey: 'sk-ant-test',
    baseURL: server.url,
    ...options,
  });
  return { server, model };
}

const json = (name: string): ReplayResponse => ({ json: jsonFixture('anthropic', name) });
const sse = (name: string, size = 29): ReplayResponse => ({
  sse: ssePieces(fixture('anthropic', name), size),
});
const errorReply = (status: number, name: string): ReplayResponse => ({
  status,
  headers: { 'retry-after-ms': '1' },
  json: jsonFixture('anthropic', name),
});

/** The JSON body of the server's `index`th request. */
// biome-ignore lint/suspicious/noExplicitAny: wire bodies are checked field by field below.
const body = (server: ReplayServer, index: number): any => server.requests[index]?.body;

const ask = (text: string) => ({ messages: Transcript.from([userMessage(text)]) });

async function partsOf(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the promise to reject');
}

describe('AnthropicModel over HTTP', () => {
  it('runs a chain through two tool rounds and an answer', async () => {
    const { server, model } = await setup([
      json('message-two-tools.json'),
      json('message-one-tool.json'),
      json('message-text.json'),
    ]);
    const chain = createChain({
      model,
      tools: [getWeather],
      systemPrompt: 'You are a weather assistant.',
    });
    const run = await chain.invoke('Weather in Paris, Oslo and Atlantis?');

    expect(run.text).toBe(
      'Paris is 18°C and sunny; Oslo is 9°C and cloudy. I could not find a city called Atlantis.',
    );
    expect(run.iterations).toBe(3);
    expect(run.usage).toEqual({
      inputTokens: 512 + (97 + 512) + (180 + 64 + 1024),
      outputTokens: 96 + 41 + 38,
      totalTokens: 512 + 96 + (97 + 512 + 41) + (180 + 64 + 1024 + 38),
      cachedInputTokens: 0 + 512 + 1024,
      reasoningTokens: 12,
    });
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual(
      Array(3).fill('POST /v1/messages'),
    );

    const first = body(server, 0);
    expect(first).toMatchObject({ model: 'claude-sonnet-5-5', max_tokens: 4096, stream: false });
    // The system prompt is the top-level field, never a message.
    expect(first.system).toContain('You are a weather assistant.');
    expect(first.messages).toEqual([
      {
        role: 'user',
        content: [{ type: 'text', text: 'Weather in Paris, Oslo and Atlantis?' }],
      },
    ]);
    expect(first.tools).toEqual([
      expect.objectContaining({
        name: 'get_weather',
        description: 'Current weather for a city.',
        input_schema: expect.objectContaining({ type: 'object' }),
      }),
    ]);

    const second = body(server, 1);
    expect(second.messages.map((m: { role: string }) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
    ]);
    expect(second.messages[1].content).toEqual([
      { type: 'text', text: "I'll look up the weather in both cities." },
      {
        type: 'tool_use',
        id: 'toolu_01A09q90qw90lq917835lq9',
        name: 'get_weather',
        input: { city: 'Paris', unit: 'celsius' },
      },
      {
        type: 'tool_use',
        id: 'toolu_01B3ycXfqMwA7ZcJ6pYvHkqd',
        name: 'get_weather',
        input: { city: 'Oslo', unit: 'celsius' },
      },
    ]);
    expect(second.messages[2].content).toEqual([
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01A09q90qw90lq917835lq9',
        content: '{"tempC":18,"sky":"sunny"}',
      },
      {
        type: 'tool_result',
        tool_use_id: 'toolu_01B3ycXfqMwA7ZcJ6pYvHkqd',
        content: '{"tempC":9,"sky":"cloudy"}',
      },
    ]);

    // The tool failed in round two: the model is told so with is_error.
    const third = body(server, 2);
    expect(third.messages).toHaveLength(5);
    expect(third.messages[4]).toEqual({
      role: 'user',
      content: [
        {
          type: 'tool_result',
          tool_use_id: 'toolu_01CvTzKp8JdGm4Rb2sWq5xYe',
          content: expect.stringContaining('Unknown city: Atlantis'),
          is_error: true,
        },
      ],
    });
    expect(server.remaining()).toBe(0);
  });

  it('streams a response whose tool-call input arrives split across chunks', async () => {
    const { server, model } = await setup([sse('stream-tool-split.sse', 23)]);
    const parts = await partsOf(
      model.stream({ ...ask('Paris and Oslo?'), tools: [getWeather.spec] }),
    );

    expect(body(server, 0)).toMatchObject({ stream: true, tools: [{ name: 'get_weather' }] });
    const deltas = parts.filter((p) => p.type === 'tool-call-delta');
    expect(deltas.filter((d) => d.index === 0).map((d) => d.argumentsDelta)).toEqual([
      '',
      '{"city": "Pa',
      'ris", "un',
      'it": "celsius"}',
    ]);
    expect(deltas[0]).toMatchObject({ id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' });

    const response = await collectStream(
      (async function* () {
        yield* parts;
      })(),
    );
    expect(response.content).toEqual([
      { type: 'text', text: 'Let me check both cities.' },
      {
        type: 'tool-call',
        toolCall: {
          id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
          name: 'get_weather',
          arguments: { city: 'Paris', unit: 'celsius' },
        },
      },
      {
        type: 'tool-call',
        toolCall: {
          id: 'toolu_01Lq8Ws3Hx5Kd2Jv9Nb4Rm6T',
          name: 'get_weather',
          arguments: { city: 'Oslo' },
        },
      },
    ]);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(response.usage).toEqual({
      inputTokens: 472,
      outputTokens: 89,
      totalTokens: 561,
      cachedInputTokens: 0,
    });
  });

  it('retries a 429 through the SDK, then succeeds', async () => {
    const { server, model } = await setup([
      errorReply(429, 'error-rate-limit.json'),
      json('message-text.json'),
    ]);
    const response = await model.generate(ask('Weather?'));

    expect(response.finishReason.unified).toBe('stop');
    // One retry of the same request, which the SDK counts in a header of its own; no timing is
    // checked (retry-after-ms only keeps the test quick), as a loaded machine would break it.
    expect(server.requests).toHaveLength(2);
    expect(server.requests[0]?.headers['x-stainless-retry-count']).toBe('0');
    expect(server.requests[1]?.headers['x-stainless-retry-count']).toBe('1');
    expect(body(server, 1)).toEqual(body(server, 0));
    expect(server.remaining()).toBe(0);
  });

  it('gives up on a 500 after maxRetries with a retryable ModelError', async () => {
    const { server, model } = await setup(
      [errorReply(500, 'error-internal.json'), errorReply(500, 'error-internal.json')],
      { maxRetries: 1 },
    );
    const error = await rejection(model.generate(ask('Weather?')));

    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect((error as Error).message).toContain('Internal server error');
    expect(server.requests).toHaveLength(2);
  });

  it('generates with a max_tokens the SDK refuses to send without streaming, by streaming', async () => {
    // SDK 1.x throws before sending a non-streaming request it expects to take over 10
    // minutes (max_tokens above 21,333), so generate streams anything above
    // ANTHROPIC_NON_STREAMING_MAX_TOKENS and adds the events up to the same response.
    const { server, model } = await setup(
      [sse('stream-text.sse'), sse('stream-text.sse'), json('message-text.json')],
      { maxTokens: 64000 },
    );
    const response = await model.generate(ask('Hi'));

    expect(body(server, 0)).toMatchObject({ max_tokens: 64000, stream: true });
    expect(response).toEqual({
      content: [{ type: 'text', text: 'Hello! The answer is 42.' }],
      usage: {
        inputTokens: 25 + 2048,
        outputTokens: 15,
        totalTokens: 25 + 2048 + 15,
        cachedInputTokens: 2048,
      },
      finishReason: { unified: 'stop', raw: 'end_turn' },
      response: { id: 'msg_01HCDu5LRGeP2o7s2xGmxyx8', modelId: 'claude-sonnet-5-5' },
    });

    // A request's own maxOutputTokens decides too, either way.
    await model.generate({ ...ask('Hi'), maxOutputTokens: 32000 });
    expect(body(server, 1)).toMatchObject({ max_tokens: 32000, stream: true });
    const small = await model.generate({
      ...ask('Hi'),
      maxOutputTokens: ANTHROPIC_NON_STREAMING_MAX_TOKENS,
    });
    expect(body(server, 2)).toMatchObject({
      max_tokens: ANTHROPIC_NON_STREAMING_MAX_TOKENS,
      stream: false,
    });
    expect(small.finishReason.unified).toBe('stop');
    expect(server.remaining()).toBe(0);
  });

  it('aborts a streamed generate: AbortError, and the HTTP request is closed', async () => {
    const head = `${fixture('anthropic', 'stream-text.sse').split('\n\n').slice(0, 4).join('\n\n')}\n\n`;
    const { server, model } = await setup([{ sse: ssePieces(head), hang: true }], {
      maxTokens: 64000,
    });
    const controller = new AbortController();
    const pending = rejection(model.generate(ask('Hi'), { signal: controller.signal }));
    await vi.waitFor(() => expect(server.requests).toHaveLength(1));
    controller.abort();

    expect(AbortError.isInstance(await pending)).toBe(true);
    await vi.waitFor(() => expect(server.openRequests()).toBe(0));
  });

  it('rejects a streamed generate cut off before message_stop', async () => {
    const { model } = await setup([sse('stream-truncated.sse')], { maxTokens: 64000 });
    const error = await rejection(model.generate(ask('Hi')));
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true });
    expect((error as Error).message).toMatch(/before its message_stop/);
  });

  it('aborts mid-stream: AbortError, and the HTTP request is closed', async () => {
    // The stream up to its first text delta, then the connection stays open.
    const head = `${fixture('anthropic', 'stream-text.sse').split('\n\n').slice(0, 4).join('\n\n')}\n\n`;
    const { server, model } = await setup([{ sse: ssePieces(head), hang: true }]);
    const controller = new AbortController();
    const seen: StreamPart[] = [];

    const error = await rejection(
      (async () => {
        for await (const part of model.stream(ask('Hi'), { signal: controller.signal })) {
          seen.push(part);
          if (part.type === 'text-delta') controller.abort();
        }
      })(),
    );

    expect(AbortError.isInstance(error)).toBe(true);
    expect(seen).toEqual([{ type: 'text-delta', delta: 'Hello' }]);
    await vi.waitFor(() => expect(server.openRequests()).toBe(0));
  });

  it('turns malformed streamed tool arguments into a failed tool result the model sees', async () => {
    const { server, model } = await setup([
      sse('stream-tool-malformed.sse'),
      sse('stream-answer.sse'),
    ]);
    const chain = createChain({ model, tools: [getWeather] });
    const events: ChainStreamEvent[] = [];
    for await (const event of chain.stream('Weather in Paris?')) events.push(event);

    const final = events.at(-1);
    expect(final).toMatchObject({
      type: 'final',
      output: {
        status: 'succeeded',
        text: 'Sorry, my arguments were not valid JSON. Paris is 18°C.',
      },
    });
    expect(events).toContainEqual({
      type: 'tool-result',
      result: expect.objectContaining({
        toolCallId: 'toolu_01Mf6Gh9Jk2Lz5Xc8Vb1Nm4Q',
        success: false,
      }),
    });

    const second = body(server, 1);
    // The call is replayed with an empty input (it never parsed), then answered with is_error.
    expect(second.messages[1].content).toEqual([
      { type: 'tool_use', id: 'toolu_01Mf6Gh9Jk2Lz5Xc8Vb1Nm4Q', name: 'get_weather', input: {} },
    ]);
    expect(second.messages[2].content[0]).toEqual({
      type: 'tool_result',
      tool_use_id: 'toolu_01Mf6Gh9Jk2Lz5Xc8Vb1Nm4Q',
      content: expect.stringMatching(/not valid JSON/),
      is_error: true,
    });
  });

  it('rejects with a retryable ModelError on a mid-stream error event', async () => {
    const { model } = await setup([sse('stream-error.sse')]);
    const error = await rejection(partsOf(model.stream(ask('Hi'))));
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, status: undefined });
    expect((error as Error).message).toContain('overloaded_error');
  });

  it('rejects a stream cut off before message_stop', async () => {
    const { model } = await setup([sse('stream-truncated.sse')]);
    const error = await rejection(partsOf(model.stream(ask('Hi'))));
    expect(ModelError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/before its message_stop/);
  });
});

describe('AnthropicModel options', () => {
  it.each([
    [{ model: '' }, 'model'],
    [{ model: 'm', maxTokens: 0 }, 'maxTokens'],
    [{ model: 'm', maxRetries: -1 }, 'maxRetries'],
    [{ model: 'm', timeout: 0 }, 'timeout'],
    [{ model: 'm', baseURL: 'not a url' }, 'baseURL'],
    [{ model: 'm', apiKey: '' }, 'apiKey'],
    [{ model: 'm', defaultHeaders: { 'x-a': 1 } }, 'defaultHeaders'],
    [{ model: 'm', providerOptions: [] }, 'providerOptions'],
    [{ model: 'm', midConversationSystem: 'developer' }, 'midConversationSystem'],
    [{ model: 'm', client: {} }, 'client'],
  ])('rejects %o naming %s', (options, option) => {
    expect(() => new AnthropicModel(options as unknown as AnthropicModelOptions)).toThrow(
      expect.objectContaining({ name: 'ConfigError', option }),
    );
  });

  it('refuses client settings next to a client, naming the setting', async () => {
    const { model } = await setup([]);
    expect(() => new AnthropicModel({ model: 'm', client: model.client, maxRetries: 3 })).toThrow(
      expect.objectContaining({ name: 'ConfigError', option: 'maxRetries' }),
    );
  });

  it('uses a given client and sends the default headers of its own', async () => {
    const { server, model: base } = await setup([json('message-text.json')], {
      defaultHeaders: { 'x-team': 'weather' },
    });
    const model = new AnthropicModel({
      model: 'claude-haiku-5-5',
      client: base.client,
      maxTokens: 512,
    });
    expect(model).toMatchObject({ provider: 'anthropic', modelId: 'claude-haiku-5-5' });
    await model.generate(ask('Hi'));
    expect(server.requests[0]?.headers['x-team']).toBe('weather');
    expect(body(server, 0)).toMatchObject({ model: 'claude-haiku-5-5', max_tokens: 512 });
  });
});
