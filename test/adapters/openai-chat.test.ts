// OpenAIChatModel through the real `openai` SDK over HTTP, against a local server on
// 127.0.0.1 replaying recorded Chat Completions responses (JSON and SSE). Nothing leaves the
// machine; retries use the SDK's own backoff, kept short with `retry-after-ms`.
import {
  AbortError,
  type ChainStreamEvent,
  ConfigError,
  createChain,
  ModelError,
} from 'statecraft';
import type { StreamPart } from 'statecraft/model';
import {
  OPENAI_COMPATIBLE_PRESETS,
  OpenAIChatModel,
  type OpenAIChatModelOptions,
  type OpenAICompatiblePreset,
  openAICompatible,
} from 'statecraft/openai';
import { describe, expect, it, vi } from 'vitest';
import { fixture, type ReplayResponse, type ReplayServer } from '../support/replay-server.js';
import {
  ANSWER,
  BERLIN,
  json,
  LONDON,
  PARIS,
  rejectionOf,
  request,
  sse,
  useReplayServer,
  weatherTool,
} from './openai-weather.js';

const serve = useReplayServer();

interface ChatBody {
  model: string;
  stream?: boolean;
  stream_options?: unknown;
  tools?: unknown[];
  max_tokens?: number;
  max_completion_tokens?: number;
  messages: { role: string; content?: unknown; tool_call_id?: string; tool_calls?: unknown[] }[];
}

function chatModel(at: ReplayServer, options: Partial<OpenAIChatModelOptions> = {}) {
  return new OpenAIChatModel({
    model: 'gpt-4.1-mini',
    apiKey: 'sk-test',
    baseURL: `${at.url}/v1`,
    ...options,
  });
}

function bodies(at: ReplayServer): ChatBody[] {
  return at.requests.map((request) => request.body as ChatBody);
}

const toolMessages = (body: ChatBody | undefined) =>
  (body?.messages ?? []).filter((m) => m.role === 'tool');

describe('OpenAIChatModel over HTTP', () => {
  it('runs a chain through two tool rounds, sending results as role "tool" with tool_call_id', async () => {
    const at = await serve([
      json('chat-tool-calls.json'),
      json('chat-tool-call-followup.json'),
      json('chat-text.json'),
    ]);
    const { tool, execute } = weatherTool();
    const chain = createChain({ model: chatModel(at), tools: [tool] });

    const result = await chain.invoke('Weather in Paris, London and Berlin?');

    expect(result.result).toBe(ANSWER);
    expect(execute).toHaveBeenCalledTimes(3);
    expect(at.requests.map((r) => `${r.method} ${r.path}`)).toEqual(
      Array(3).fill('POST /v1/chat/completions'),
    );
    expect(at.requests[0]?.headers.authorization).toBe('Bearer sk-test');
    const [first, second, third] = bodies(at);
    expect(first?.model).toBe('gpt-4.1-mini');
    expect(first?.tools).toEqual([
      {
        type: 'function',
        function: expect.objectContaining({ name: 'get_weather', parameters: expect.any(Object) }),
      },
    ]);
    // Round one: both parallel calls answered, each with its own tool_call_id.
    expect(second?.messages.find((m) => m.role === 'assistant')?.tool_calls).toEqual([
      {
        id: PARIS,
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
      {
        id: LONDON,
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"London"}' },
      },
    ]);
    expect(toolMessages(second)).toEqual([
      { role: 'tool', tool_call_id: PARIS, content: '{"city":"Paris","tempC":18}' },
      { role: 'tool', tool_call_id: LONDON, content: '{"city":"London","tempC":15}' },
    ]);
    // Round two adds Berlin's result after the first two.
    expect(toolMessages(third).map((m) => m.tool_call_id)).toEqual([PARIS, LONDON, BERLIN]);
    expect(toolMessages(third)[2]?.content).toBe('{"city":"Berlin","tempC":21}');
    expect(result.usage).toEqual({
      inputTokens: 142 + 231 + 1180,
      outputTokens: 46 + 17 + 172,
      totalTokens: 188 + 248 + 1352,
      cachedInputTokens: 1024,
      reasoningTokens: 128,
    });
  });

  it('streams a chain run whose tool-call arguments arrive split across chunks', async () => {
    const at = await serve([sse('chat-tool-calls.sse'), sse('chat-text.sse')]);
    const { tool } = weatherTool();
    const chain = createChain({ model: chatModel(at), tools: [tool] });

    const events: ChainStreamEvent[] = [];
    for await (const event of chain.stream('Weather in Paris and London?')) events.push(event);

    const calls = events.flatMap((e) => (e.type === 'tool-call' ? [e.toolCall] : []));
    expect(calls).toEqual([
      { id: PARIS, name: 'get_weather', arguments: { city: 'Paris' } },
      { id: LONDON, name: 'get_weather', arguments: { city: 'London' } },
    ]);
    const text = events.flatMap((e) => (e.type === 'text-delta' ? [e.delta] : [])).join('');
    expect(text).toBe(ANSWER);
    expect(events.at(-1)).toMatchObject({
      type: 'final',
      output: { status: 'succeeded', text: ANSWER },
    });
    const [first, second] = bodies(at);
    expect(first).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(toolMessages(second).map((m) => m.tool_call_id)).toEqual([PARIS, LONDON]);
  });

  it('streams tool-call deltas with index, id and name, then each complete call', async () => {
    const at = await serve([sse('chat-tool-calls.sse')]);
    const parts: StreamPart[] = [];
    for await (const part of chatModel(at).stream(request())) parts.push(part);

    const deltas = parts.flatMap((p) => (p.type === 'tool-call-delta' ? [p] : []));
    expect(deltas.filter((d) => d.id).map((d) => [d.index, d.id, d.name])).toEqual([
      [0, PARIS, 'get_weather'],
      [1, LONDON, 'get_weather'],
    ]);
    expect(deltas.filter((d) => d.index === 0).length).toBeGreaterThan(2);
    expect(parts.map((p) => p.type).slice(-4)).toEqual([
      'tool-call',
      'tool-call',
      'usage',
      'finish',
    ]);
  });

  it('retries a 429 with the SDK backoff, then succeeds', async () => {
    const at = await serve([
      {
        status: 429,
        headers: { 'retry-after-ms': '1' },
        json: {
          error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' },
        },
      },
      json('chat-text.json'),
    ]);
    const response = await chatModel(at).generate(request());
    expect(response.content).toEqual([{ type: 'text', text: ANSWER }]);
    expect(at.requests).toHaveLength(2);
  });

  it('gives up on a 500 after maxRetries with a retryable ModelError', async () => {
    const failure: ReplayResponse = {
      status: 500,
      headers: { 'retry-after-ms': '1' },
      json: { error: { message: 'The server had an error', type: 'server_error' } },
    };
    const at = await serve([failure, failure]);
    const error = await rejectionOf(chatModel(at, { maxRetries: 1 }).generate(request()));
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect(at.requests).toHaveLength(2);
  });

  it('fails a chain run with the ModelError (status kept) when the provider keeps failing', async () => {
    const failure: ReplayResponse = {
      status: 503,
      headers: { 'retry-after-ms': '1' },
      json: { error: { message: 'Overloaded', type: 'server_error' } },
    };
    const at = await serve([failure, failure]);
    const chain = createChain({ model: chatModel(at, { maxRetries: 1 }) });
    const error = await rejectionOf(chain.invoke('Hello'));
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, status: 503 });
  });

  it('does not retry a 400, and reports it as not retryable', async () => {
    const at = await serve([
      {
        status: 400,
        json: {
          error: { message: "Invalid value for 'tool_choice'", type: 'invalid_request_error' },
        },
      },
    ]);
    const error = await rejectionOf(chatModel(at).generate(request()));
    expect(error).toMatchObject({ retryable: false, status: 400 });
    expect(at.requests).toHaveLength(1);
  });

  it('aborts mid-stream: rejects with AbortError and leaves no open request', async () => {
    const events = fixture('openai', 'chat-text.sse').split(/(?<=\n\n)/);
    const at = await serve([{ sse: events.slice(0, 3), hang: true }]);
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    const run = (async () => {
      for await (const part of chatModel(at).stream(request(), { signal: controller.signal })) {
        seen.push(part);
        if (part.type === 'text-delta') controller.abort();
      }
    })();
    const error = await rejectionOf(run);
    expect(AbortError.isInstance(error)).toBe(true);
    expect(seen).toEqual([{ type: 'text-delta', delta: 'Paris' }]);
    await vi.waitFor(() => expect(at.openRequests()).toBe(0));
  });

  it('rejects at once with AbortError for a signal aborted before the call, sending nothing', async () => {
    const at = await serve([]);
    const error = await rejectionOf(
      chatModel(at).generate(request(), { signal: AbortSignal.abort() }),
    );
    expect(AbortError.isInstance(error)).toBe(true);
    expect(at.requests).toHaveLength(0);
  });

  it('turns malformed tool arguments into a failed result the model sees; the chain finishes', async () => {
    const at = await serve([json('chat-malformed-arguments.json'), json('chat-text.json')]);
    const { tool, execute } = weatherTool();
    const chain = createChain({ model: chatModel(at), tools: [tool] });

    const result = await chain.invoke('Weather in Paris?');

    expect(result.result).toBe(ANSWER);
    expect(execute).not.toHaveBeenCalled();
    const second = bodies(at)[1];
    const assistant = second?.messages.find((m) => m.role === 'assistant');
    expect(assistant?.tool_calls).toEqual([
      {
        id: 'call_Wq7nB2xK9mLt4vRz6pYs3cHd',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city": Paris}' },
      },
    ]);
    const [toolMessage] = toolMessages(second);
    expect(toolMessage?.tool_call_id).toBe('call_Wq7nB2xK9mLt4vRz6pYs3cHd');
    expect(toolMessage?.content).toContain('not valid JSON');
  });
});

describe('OpenAI-compatible presets', () => {
  it('sends requests to the preset baseURL path with the configured model', async () => {
    const at = await serve([json('chat-text.json')]);
    const model = openAICompatible('ollama', { model: 'llama3.2', baseURL: `${at.url}/v1` });
    expect(model.provider).toBe('ollama');

    const response = await model.generate({
      ...request(),
      maxOutputTokens: 50,
      providerOptions: { ollama: { keep_alive: '5m' } },
    });

    expect(response.content).toEqual([{ type: 'text', text: ANSWER }]);
    const [recorded] = at.requests;
    expect(recorded?.path).toBe('/v1/chat/completions');
    expect(recorded?.headers.authorization).toBe('Bearer ollama');
    expect(recorded?.body).toMatchObject({ model: 'llama3.2', max_tokens: 50, keep_alive: '5m' });
  });

  it.each(Object.keys(OPENAI_COMPATIBLE_PRESETS) as OpenAICompatiblePreset[])(
    'sends maxOutputTokens as max_tokens to %s, the field these servers read',
    async (preset) => {
      const at = await serve([json('chat-text.json')]);
      const model = openAICompatible(preset, { model: 'local-model', baseURL: `${at.url}/v1` });
      await model.generate({ ...request(), maxOutputTokens: 50 });
      const body = bodies(at)[0];
      expect(body?.max_tokens).toBe(50);
      expect(body).not.toHaveProperty('max_completion_tokens');
    },
  );

  it("targets another compatible server with baseURL and maxTokensField: 'max_tokens'", async () => {
    const at = await serve([json('chat-text.json'), json('chat-text.json')]);
    const compatible = new OpenAIChatModel({
      model: 'mistral-small',
      baseURL: `${at.url}/v1`,
      apiKey: 'sk-other',
      maxTokensField: 'max_tokens',
    });
    await compatible.generate({ ...request(), maxOutputTokens: 64 });
    // OpenAI itself, by default, gets the newer field.
    await chatModel(at).generate({ ...request(), maxOutputTokens: 64 });

    const [toCompatible, toOpenAI] = bodies(at);
    expect(at.requests[0]?.path).toBe('/v1/chat/completions');
    expect(at.requests[0]?.headers.authorization).toBe('Bearer sk-other');
    expect(toCompatible?.max_tokens).toBe(64);
    expect(toCompatible).not.toHaveProperty('max_completion_tokens');
    expect(toOpenAI?.max_completion_tokens).toBe(64);
    expect(toOpenAI).not.toHaveProperty('max_tokens');
  });

  it('documents each server default address', () => {
    expect(
      Object.fromEntries(Object.entries(OPENAI_COMPATIBLE_PRESETS).map(([k, v]) => [k, v.baseURL])),
    ).toEqual({
      ollama: 'http://localhost:11434/v1',
      vllm: 'http://localhost:8000/v1',
      lmstudio: 'http://localhost:1234/v1',
      llamacpp: 'http://localhost:8080/v1',
    });
    expect(openAICompatible('vllm', { model: 'Qwen/Qwen2.5-7B-Instruct' }).modelId).toBe(
      'Qwen/Qwen2.5-7B-Instruct',
    );
  });
});

describe('OpenAI model options', () => {
  const optionOf = (make: () => unknown): string | undefined => {
    try {
      make();
    } catch (error) {
      if (ConfigError.isInstance(error)) return error.option;
      throw error;
    }
    return undefined;
  };

  it.each([
    ['model', { model: '' }],
    ['maxRetries', { model: 'm', apiKey: 'k', maxRetries: -1 }],
    ['timeout', { model: 'm', apiKey: 'k', timeout: 0 }],
    ['baseURL', { model: 'm', apiKey: 'k', baseURL: 'not a url' }],
    ['apiKey', { model: 'm', apiKey: '' }],
    ['defaultHeaders', { model: 'm', apiKey: 'k', defaultHeaders: { 'x-a': 1 } }],
    ['providerOptions', { model: 'm', apiKey: 'k', providerOptions: [] }],
    ['maxTokensField', { model: 'm', apiKey: 'k', maxTokensField: 'tokens' }],
    ['client', { model: 'm', client: {} }],
    ['client', { model: 'm', apiKey: 'k', client: { chat: { completions: { create() {} } } } }],
  ])('names %s when it is invalid', (option, options) => {
    expect(optionOf(() => new OpenAIChatModel(options as unknown as OpenAIChatModelOptions))).toBe(
      option,
    );
  });

  it('names the preset when it is unknown', () => {
    expect(optionOf(() => openAICompatible('kobold' as 'ollama', { model: 'm' }))).toBe('preset');
  });

  it('asks for an API key when neither the option nor OPENAI_API_KEY is set', () => {
    vi.stubEnv('OPENAI_API_KEY', '');
    try {
      expect(optionOf(() => new OpenAIChatModel({ model: 'gpt-4.1-mini' }))).toBe('apiKey');
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
