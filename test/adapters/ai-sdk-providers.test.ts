// fromAiSdk over real AI SDK provider packages, each pointed at a local replay server on
// 127.0.0.1: @ai-sdk/openai-compatible (specification v4), @ai-sdk/anthropic (v4) and
// @ai-sdk/anthropic-v3 (AI SDK 6's anthropic, v3). A chain runs end to end through them,
// generated and streamed; images go out on the provider's own wire format; HTTP failures come
// back as typed, classified errors; an abort mid-stream closes the connection.
import { createAnthropic } from '@ai-sdk/anthropic';
import { createAnthropic as createAnthropicV3 } from '@ai-sdk/anthropic-v3';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  AbortError,
  attachment,
  createChain,
  defineTool,
  ModelError,
  Transcript,
  toolOutput,
  userMessage,
} from 'statecraft';
import { fromAiSdk } from 'statecraft/ai-sdk';
import { collectStream, type ModelRequest, type StreamPart } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  fixture,
  jsonFixture,
  type ReplayResponse,
  type ReplayServer,
  ssePieces,
} from '../support/replay-server.js';
import {
  ANSWER,
  BERLIN,
  LONDON,
  PARIS,
  rejectionOf,
  useReplayServer,
  weatherTool,
} from './openai-weather.js';

const serve = useReplayServer();

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const PNG_BASE64 = Buffer.from(PNG).toString('base64');

const openai = (name: string): ReplayResponse => ({ json: jsonFixture('openai', name) });
const openaiSse = (name: string): ReplayResponse => ({ sse: ssePieces(fixture('openai', name)) });
const anthropic = (name: string): ReplayResponse => ({ json: jsonFixture('anthropic', name) });
const anthropicSse = (name: string): ReplayResponse => ({
  sse: ssePieces(fixture('anthropic', name)),
});

function compatible(at: ReplayServer) {
  return fromAiSdk(
    createOpenAICompatible({
      name: 'local',
      baseURL: `${at.url}/v1`,
      apiKey: 'sk-local',
      includeUsage: true,
    })('gpt-4.1-mini'),
  );
}

interface ChatBody {
  stream?: boolean;
  tools?: { function: { name: string } }[];
  messages: { role: string; content?: unknown; tool_call_id?: string }[];
}

const ask = (text = 'Weather in Paris?', attachments?: Parameters<typeof userMessage>[1]) =>
  ({ messages: Transcript.from([userMessage(text, attachments)]) }) satisfies ModelRequest;

describe('fromAiSdk over @ai-sdk/openai-compatible (v4)', () => {
  it('runs a chain through two tool rounds, sending results as role "tool"', async () => {
    const at = await serve([
      openai('chat-tool-calls.json'),
      openai('chat-tool-call-followup.json'),
      openai('chat-text.json'),
    ]);
    const { tool, execute } = weatherTool();
    const result = await createChain({ model: compatible(at), tools: [tool] }).invoke(
      'Weather in Paris, London and Berlin?',
    );
    expect(result.status === 'succeeded' && result.result).toBe(ANSWER);
    expect(execute).toHaveBeenCalledTimes(3);
    expect(at.requests.map((r) => `${r.method} ${r.path}`)).toEqual(
      Array(3).fill('POST /v1/chat/completions'),
    );
    expect(at.requests[0]?.headers.authorization).toBe('Bearer sk-local');
    const bodies = at.requests.map((r) => r.body as ChatBody);
    expect(bodies[0]?.tools?.map((t) => t.function.name)).toEqual(['get_weather']);
    const toolIds = (body: ChatBody | undefined) =>
      body?.messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id);
    expect(toolIds(bodies[1])).toEqual([PARIS, LONDON]);
    expect(toolIds(bodies[2])).toEqual([PARIS, LONDON, BERLIN]);
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  it('streams a chain: tool-call deltas, the tool round, then the answer as text deltas', async () => {
    const at = await serve([openaiSse('chat-tool-calls.sse'), openaiSse('chat-text.sse')]);
    const { tool } = weatherTool();
    const chain = createChain({ model: compatible(at), tools: [tool] });
    let text = '';
    const calls: string[] = [];
    let final: unknown;
    for await (const event of chain.stream('Weather in Paris and London?')) {
      if (event.type === 'text-delta') text += event.delta;
      if (event.type === 'tool-call') calls.push(event.toolCall.id);
      if (event.type === 'final') final = event.result?.result;
    }
    expect(calls).toEqual([PARIS, LONDON]);
    expect(text).toBe(final);
    expect(text).not.toBe('');
    expect(bodyOf<ChatBody>(at).stream).toBe(true);
  });

  it('streams tool-call deltas with one index per call', async () => {
    const at = await serve([openaiSse('chat-tool-calls.sse')]);
    const parts: StreamPart[] = [];
    for await (const part of compatible(at).stream(ask())) parts.push(part);
    const deltas = parts.filter((p) => p.type === 'tool-call-delta');
    expect(deltas[0]).toMatchObject({ index: 0, id: PARIS, name: 'get_weather' });
    expect(new Set(deltas.map((d) => d.index))).toEqual(new Set([0, 1]));
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    });
  });

  it('sends an image attachment as an image_url data URL', async () => {
    const at = await serve([openai('chat-text.json')]);
    await compatible(at).generate(ask('What is this?', [attachment({ data: PNG })]));
    const user = bodyOf<ChatBody>(at).messages[0];
    expect(user?.content).toEqual([
      { type: 'text', text: 'What is this?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
    ]);
  });

  it("moves a tool's image into a user message after the results, with toolResultFiles", async () => {
    const at = await serve([openai('chat-tool-calls.json'), openai('chat-text.json')]);
    const radar = defineTool({
      name: 'get_weather',
      description: 'Current weather, with a radar image.',
      input: z.object({ city: z.string() }),
      execute: async ({ city }) => toolOutput(`${city}: 18 °C`, [attachment({ data: PNG })]),
    });
    const model = fromAiSdk(
      createOpenAICompatible({ name: 'local', baseURL: `${at.url}/v1`, apiKey: 'k' })('m'),
      { toolResultFiles: 'user-message' },
    );
    await createChain({ model, tools: [radar] }).invoke('Weather in Paris and London?');
    const sent = bodyOf<ChatBody>(at, 1).messages.slice(-3);
    expect(sent).toEqual([
      { role: 'tool', tool_call_id: PARIS, content: 'Paris: 18 °C' },
      { role: 'tool', tool_call_id: LONDON, content: 'London: 18 °C' },
      {
        role: 'user',
        content: [
          { type: 'text', text: `Files returned by get_weather (${PARIS}):` },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
          { type: 'text', text: `Files returned by get_weather (${LONDON}):` },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG_BASE64}` } },
        ],
      },
    ]);
  });

  it.each([
    [429, true],
    [500, true],
    [400, false],
  ])(
    'answers HTTP %i with a ModelError, retryable %s, generated or streamed',
    async (status, retryable) => {
      const failure = { status, json: { error: { message: `failure ${status}`, type: 'x' } } };
      const at = await serve([failure, failure]);
      // Each call made only when awaited: a rejection nobody waits for yet is unhandled.
      for (const work of [
        () => compatible(at).generate(ask()),
        () => collectStream(compatible(at).stream(ask())),
      ]) {
        const error = (await rejectionOf(work())) as ModelError;
        expect(ModelError.isInstance(error), String(error)).toBe(true);
        expect([error.status, error.retryable]).toEqual([status, retryable]);
        expect(error.message).toContain(`failure ${status}`);
      }
    },
  );

  it('names the URL it could not reach, as a retryable ModelError', async () => {
    const at = await serve([]);
    const url = at.url;
    await at.close();
    for (const work of [
      () => compatible(at).generate(ask()),
      () => collectStream(compatible(at).stream(ask())),
    ]) {
      const error = (await rejectionOf(work())) as ModelError;
      expect(ModelError.isInstance(error), String(error)).toBe(true);
      expect(error.message).toBe(`could not reach ${url}/v1/chat/completions (connection refused)`);
      expect(error.retryable).toBe(true);
    }
  });

  it('lets go of the connection when the reader stops early', async () => {
    const head = fixture('openai', 'chat-text.sse').split('\n\n').slice(0, 2).join('\n\n');
    const at = await serve([{ sse: [`${head}\n\n`], hang: true }]);
    for await (const part of compatible(at).stream(ask())) {
      expect(part.type).toBe('text-delta');
      break;
    }
    await until(() => at.openRequests() === 0);
  });

  it('aborts mid-stream: AbortError, and the connection is closed', async () => {
    const head = fixture('openai', 'chat-text.sse').split('\n\n').slice(0, 2).join('\n\n');
    const at = await serve([{ sse: [`${head}\n\n`], hang: true }]);
    const controller = new AbortController();
    const parts: StreamPart[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const part of compatible(at).stream(ask(), { signal: controller.signal })) {
          parts.push(part);
          controller.abort();
        }
      })(),
    );
    expect(AbortError.isInstance(error), String(error)).toBe(true);
    expect(parts.length).toBeGreaterThan(0);
    await until(() => at.openRequests() === 0);
  });
});

/** A Messages answer both anthropic lines read (v3 refuses the newer `citations: null`). */
const ATLANTIS = {
  id: 'msg_01Atl',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-5-5',
  content: [{ type: 'text', text: 'I could not find a city called Atlantis.' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 180, cache_read_input_tokens: 1024, output_tokens: 12 },
};

const ANTHROPIC_PROVIDERS = [
  {
    name: '@ai-sdk/anthropic (v4)',
    version: 'v4',
    make: (at: ReplayServer) =>
      fromAiSdk(
        createAnthropic({ baseURL: `${at.url}/v1`, apiKey: 'sk-ant' })('claude-sonnet-5-5'),
      ),
  },
  {
    name: '@ai-sdk/anthropic-v3 (v3)',
    version: 'v3',
    make: (at: ReplayServer) =>
      fromAiSdk(
        createAnthropicV3({ baseURL: `${at.url}/v1`, apiKey: 'sk-ant' })('claude-sonnet-5-5'),
      ),
  },
] as const;

interface AnthropicBody {
  stream?: boolean;
  messages: { role: string; content: { type: string; content?: unknown; source?: unknown }[] }[];
}

describe.each(ANTHROPIC_PROVIDERS)('fromAiSdk over $name', ({ version, make }) => {
  it('runs a chain whose tool returns an image: it goes back inside the tool_result', async () => {
    const at = await serve([anthropic('message-one-tool.json'), { json: ATLANTIS }]);
    const weather = defineTool({
      name: 'get_weather',
      description: 'Current weather, with a radar image.',
      input: z.object({ city: z.string() }),
      execute: async ({ city }) => toolOutput({ city, found: false }, [attachment({ data: PNG })]),
    });
    const chain = createChain({ model: make(at), tools: [weather] });
    const result = await chain.invoke({
      messages: [userMessage('Weather in Atlantis? Here is a map.', [attachment({ data: PNG })])],
    });
    expect(result.status === 'succeeded' && result.result).toMatch(/Atlantis/);
    expect(at.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/messages']);
    expect(at.requests[0]?.headers['x-api-key']).toBe('sk-ant');
    const [first, second] = at.requests.map((r) => r.body as AnthropicBody);
    const image = { type: 'base64', media_type: 'image/png', data: PNG_BASE64 };
    expect(first?.messages[0]?.content).toContainEqual(
      expect.objectContaining({ type: 'image', source: image }),
    );
    const toolResult = second?.messages.at(-1)?.content.find((b) => b.type === 'tool_result');
    expect(toolResult?.content).toEqual([
      expect.objectContaining({ type: 'text', text: '{"city":"Atlantis","found":false}' }),
      expect.objectContaining({ type: 'image', source: image }),
    ]);
    expect(result.usage.cachedInputTokens).toBeGreaterThan(0);
    void version;
  });

  it('streams text and tool input split across events', async () => {
    const at = await serve([anthropicSse('stream-tool-split.sse')]);
    const response = await collectStream(make(at).stream(ask('Weather in Paris and Oslo?')));
    expect(bodyOf<AnthropicBody>(at).stream).toBe(true);
    expect(response.content).toEqual([
      { type: 'text', text: 'Let me check both cities.' },
      {
        type: 'tool-call',
        toolCall: expect.objectContaining({
          name: 'get_weather',
          arguments: expect.objectContaining({ city: 'Paris' }),
        }),
      },
      {
        type: 'tool-call',
        toolCall: expect.objectContaining({
          name: 'get_weather',
          arguments: expect.objectContaining({ city: 'Oslo' }),
        }),
      },
    ]);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
  });

  it('aborts mid-stream: AbortError, and the connection is closed', async () => {
    const head = fixture('anthropic', 'stream-text.sse').split('\n\n').slice(0, 4).join('\n\n');
    const at = await serve([{ sse: [`${head}\n\n`], hang: true }]);
    const controller = new AbortController();
    const parts: StreamPart[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const part of make(at).stream(ask(), { signal: controller.signal })) {
          parts.push(part);
          controller.abort();
        }
      })(),
    );
    expect(AbortError.isInstance(error), String(error)).toBe(true);
    expect(parts.length).toBeGreaterThan(0);
    await until(() => at.openRequests() === 0);
  });

  it.each([
    [529, 'error-overloaded.json', true],
    [429, 'error-rate-limit.json', true],
    [500, 'error-internal.json', true],
    [400, 'error-rate-limit.json', false],
  ])('answers HTTP %i with a ModelError, retryable %s', async (status, name, retryable) => {
    const at = await serve([{ status, json: jsonFixture('anthropic', name) }]);
    const error = (await rejectionOf(make(at).generate(ask()))) as ModelError;
    expect(ModelError.isInstance(error), String(error)).toBe(true);
    expect([error.status, error.retryable]).toEqual([status, retryable]);
  });
});

/** The body of the server's `index`th request. */
function bodyOf<T>(at: ReplayServer, index = 0): T {
  const request = at.requests[index];
  if (!request) throw new Error(`no request ${index} arrived`);
  return request.body as T;
}

async function until(condition: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
