// Unit tests of the Anthropic adapter's pure mapping functions on recorded wire fixtures
// (test/fixtures/anthropic): request → Messages API params, Message → response, SSE events →
// stream parts, stop reasons, usage and errors. No HTTP here; see anthropic.test.ts for that.
import {
  AnthropicError,
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from '@anthropic-ai/sdk';
import type { Message as AnthropicMessage } from '@anthropic-ai/sdk/resources/messages';
import {
  AbortError,
  assistantMessage,
  type Message,
  ModelError,
  systemMessage,
  Transcript,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import {
  type AnthropicRequestSettings,
  type AnthropicStreamEvent,
  AnthropicStreamMapper,
  anthropicModelError,
  EMPTY_USER_TEXT,
  fromAnthropicMessage,
  mapMessages,
  mapStopReason,
  mapUsage,
  toAnthropicParams,
} from 'statecraft/anthropic';
import { collectStream, type ModelRequest, type StreamPart } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import { fixture, jsonFixture } from '../support/replay-server.js';

const settings: AnthropicRequestSettings = {
  modelId: 'claude-sonnet-5-5',
  maxTokens: 4096,
  midConversationSystem: 'user-note',
};

const request = (messages: Message[], extra: Partial<ModelRequest> = {}): ModelRequest => ({
  messages: Transcript.from(messages),
  ...extra,
});

const message = (name: string) => jsonFixture('anthropic', name) as AnthropicMessage;

/** The events of an SSE fixture, parsed as the SDK's SSE decoder would. */
function sseEvents(name: string): AnthropicStreamEvent[] {
  return fixture('anthropic', name)
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      return JSON.parse(data) as AnthropicStreamEvent;
    });
}

function mapStream(name: string): StreamPart[] {
  const mapper = new AnthropicStreamMapper();
  const parts = sseEvents(name).flatMap((event) => mapper.push(event));
  mapper.end();
  return parts;
}

async function* asStream(parts: StreamPart[]): AsyncGenerator<StreamPart> {
  yield* parts;
}

describe('request mapping', () => {
  it('puts leading system messages in `system` and later ones in <system-note> user blocks', () => {
    const params = toAnthropicParams(
      request([
        systemMessage('You are terse.'),
        userMessage('Weather in Paris?'),
        assistantMessage('Checking.'),
        systemMessage('You have 2 iterations left.'),
        userMessage('Hurry.'),
      ]),
      settings,
    );
    expect(params.system).toBe('You are terse.');
    expect(params.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Checking.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: '<system-note>You have 2 iterations left.</system-note>' },
          { type: 'text', text: 'Hurry.' },
        ],
      },
    ]);
    expect(params).toMatchObject({ model: 'claude-sonnet-5-5', max_tokens: 4096 });
  });

  it('sends several leading system messages as text blocks, and can keep later ones as system messages', () => {
    const { system, messages } = mapMessages(
      [systemMessage('A'), systemMessage('B'), userMessage('hi'), systemMessage('note')],
      'system-message',
    );
    expect(system).toEqual([
      { type: 'text', text: 'A' },
      { type: 'text', text: 'B' },
    ]);
    expect(messages.at(-1)).toEqual({ role: 'system', content: 'note' });
  });

  it('maps tool calls to tool_use blocks and results to tool_result blocks (is_error when failed)', () => {
    const { messages } = mapMessages([
      userMessage('Weather in Paris and Atlantis?'),
      assistantMessage('Looking.', [
        { id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } },
        { id: 'toolu_2', name: 'get_weather', arguments: { city: 'Atlantis' } },
      ]),
      toolResultMessage({
        toolCallId: 'toolu_1',
        name: 'get_weather',
        output: { tempC: 18 },
        success: true,
      }),
      toolResultMessage({
        toolCallId: 'toolu_2',
        name: 'get_weather',
        output: undefined,
        success: false,
        error: 'Unknown city: Atlantis',
      }),
    ]);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Atlantis?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Atlantis' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '{"tempC":18}' },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            content: 'Unknown city: Atlantis',
            is_error: true,
          },
        ],
      },
    ]);
  });

  it('merges consecutive same-role messages so user and assistant alternate, tool results first', () => {
    const { messages } = mapMessages([
      userMessage('one'),
      userMessage('two'),
      assistantMessage('', [{ id: 'toolu_1', name: 'ls', arguments: {} }]),
      systemMessage('Streams are open.'),
      toolResultMessage({ toolCallId: 'toolu_1', name: 'ls', output: 'a.txt', success: true }),
      userMessage('three'),
    ]);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(messages[0]?.content).toHaveLength(2);
    // No empty text block for the empty assistant text.
    expect(messages[1]?.content).toEqual([
      { type: 'tool_use', id: 'toolu_1', name: 'ls', input: {} },
    ]);
    expect(messages[2]?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'a.txt' },
      { type: 'text', text: '<system-note>Streams are open.</system-note>' },
      { type: 'text', text: 'three' },
    ]);
  });

  it('sends no whitespace-only text block, which the API rejects with a 400', () => {
    const { system, messages } = mapMessages([
      systemMessage(' '),
      systemMessage('Be brief.'),
      userMessage('Weather in Paris?'),
      // A model's "\n" before its tool call, kept in the transcript.
      assistantMessage('\n', [
        { id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } },
      ]),
      toolResultMessage({
        toolCallId: 'toolu_1',
        name: 'get_weather',
        output: '\n',
        success: true,
      }),
      systemMessage('\t'),
      userMessage('  '),
      assistantMessage(' \n '),
      userMessage('Thanks.'),
    ]);
    expect(system).toEqual([{ type: 'text', text: 'Be brief.' }]);
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1' },
          { type: 'text', text: 'Thanks.' },
        ],
      },
    ]);
    const blocks = messages.flatMap((m) => (Array.isArray(m.content) ? m.content : []));
    for (const block of [...system, ...blocks]) {
      if (block.type === 'text') expect(block.text.trim()).not.toBe('');
    }
  });

  it('keeps a user turn whose text is empty as a placeholder, so the request stays valid', () => {
    // Dropped, it would leave no message at all, or a conversation ending on the assistant's
    // turn, which the API takes as a prefill to continue (and newer models reject).
    expect(mapMessages([userMessage('')]).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: EMPTY_USER_TEXT }] },
    ]);
    const { messages } = mapMessages(
      [userMessage('Hi'), assistantMessage('Hello.'), userMessage(' \n'), systemMessage(' ')],
      'system-message',
    );
    expect(messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello.' }] },
      { role: 'user', content: [{ type: 'text', text: EMPTY_USER_TEXT }] },
    ]);
    // Next to other content of the same turn, it adds nothing.
    expect(mapMessages([userMessage('  '), userMessage('Hi')]).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
    ]);
  });

  it('replays a call whose arguments did not parse with an empty input object', () => {
    const { messages } = mapMessages([
      userMessage('go'),
      assistantMessage('', [
        { id: 'toolu_9', name: 'ls', arguments: '{"dir": ', argumentsError: 'Unexpected end' },
      ]),
    ]);
    expect(messages[1]?.content).toEqual([
      { type: 'tool_use', id: 'toolu_9', name: 'ls', input: {} },
    ]);
  });

  it('maps tools, tool choice, limits and stop sequences; drops sampling parameters', () => {
    const params = toAnthropicParams(
      request([userMessage('hi')], {
        tools: [
          {
            name: 'get_weather',
            description: 'Current weather.',
            inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
        toolChoice: { type: 'tool', name: 'get_weather' },
        maxOutputTokens: 300,
        stopSequences: ['END'],
        temperature: 0.2,
        topP: 0.9,
        seed: 7,
      }),
      settings,
    );
    expect(params.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather.',
        input_schema: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ]);
    expect(params.tool_choice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(params.max_tokens).toBe(300);
    expect(params.stop_sequences).toEqual(['END']);
    expect(params).not.toHaveProperty('temperature');
    expect(params).not.toHaveProperty('top_p');
    expect(params).not.toHaveProperty('seed');
  });

  it.each([
    ['auto', { type: 'auto' }],
    ['required', { type: 'any' }],
    ['none', { type: 'none' }],
  ] as const)('maps tool choice %s', (choice, expected) => {
    const tools = [{ name: 't', description: 'd', inputSchema: { type: 'object' } }];
    const params = toAnthropicParams(
      request([userMessage('x')], { tools, toolChoice: choice }),
      settings,
    );
    expect(params.tool_choice).toEqual(expected);
  });

  it('sends no tool_choice without tools', () => {
    const params = toAnthropicParams(
      request([userMessage('x')], { toolChoice: 'required' }),
      settings,
    );
    expect(params).not.toHaveProperty('tool_choice');
    expect(params).not.toHaveProperty('tools');
  });

  it('asks for JSON by instruction, or with strict: true through output_config.format', () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' }, extra: { type: 'object' } },
      required: ['city'],
    };
    const loose = toAnthropicParams(
      request([systemMessage('Be brief.'), userMessage('x')], {
        responseFormat: { type: 'json_schema', name: 'answer', schema },
      }),
      settings,
    );
    expect(loose).not.toHaveProperty('output_config');
    expect(loose.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: expect.stringContaining(JSON.stringify(schema)) },
    ]);

    const strict = toAnthropicParams(
      request([userMessage('x')], {
        responseFormat: { type: 'json_schema', name: 'answer', schema, strict: true },
      }),
      settings,
    );
    expect(strict).not.toHaveProperty('system');
    expect(strict.output_config).toEqual({
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          properties: {
            city: { type: 'string' },
            extra: { type: 'object', properties: {}, additionalProperties: false },
          },
          additionalProperties: false,
          required: ['city'],
        },
      },
    });

    const object = toAnthropicParams(
      request([userMessage('x')], { responseFormat: { type: 'json_object' } }),
      settings,
    );
    expect(object.system).toMatch(/single JSON object/);
  });

  it('merges provider options: the model’s, then the request’s, output_config one level deep', () => {
    const params = toAnthropicParams(
      request([userMessage('x')], {
        responseFormat: {
          type: 'json_schema',
          name: 'a',
          schema: { type: 'object' },
          strict: true,
        },
        providerOptions: {
          anthropic: { output_config: { effort: 'low' }, metadata: { user_id: 'u-1' } },
          openai: { store: true },
        },
      }),
      { ...settings, providerOptions: { service_tier: 'standard_only', max_tokens: 100 } },
    );
    expect(params).toMatchObject({
      service_tier: 'standard_only',
      max_tokens: 100,
      metadata: { user_id: 'u-1' },
      output_config: { effort: 'low', format: { type: 'json_schema' } },
    });
    expect(params).not.toHaveProperty('store');
  });
});

describe('response mapping', () => {
  it('maps text blocks (joined), usage with cache and thinking tokens, and end_turn', () => {
    const response = fromAnthropicMessage(message('message-text.json'));
    expect(response.content).toEqual([
      {
        type: 'text',
        text: 'Paris is 18°C and sunny; Oslo is 9°C and cloudy. I could not find a city called Atlantis.',
      },
    ]);
    expect(response.usage).toEqual({
      inputTokens: 180 + 64 + 1024,
      outputTokens: 38,
      totalTokens: 180 + 64 + 1024 + 38,
      cachedInputTokens: 1024,
      reasoningTokens: 12,
    });
    expect(response.finishReason).toEqual({ unified: 'stop', raw: 'end_turn' });
    expect(response.response).toEqual({
      id: 'msg_013Zva2CMHLNnXjNJJKqJ2EF',
      modelId: 'claude-sonnet-5-5',
    });
  });

  it('maps two tool_use blocks to tool calls, after the text, in order', () => {
    const response = fromAnthropicMessage(message('message-two-tools.json'));
    expect(response.content).toEqual([
      { type: 'text', text: "I'll look up the weather in both cities." },
      {
        type: 'tool-call',
        toolCall: {
          id: 'toolu_01A09q90qw90lq917835lq9',
          name: 'get_weather',
          arguments: { city: 'Paris', unit: 'celsius' },
        },
      },
      {
        type: 'tool-call',
        toolCall: {
          id: 'toolu_01B3ycXfqMwA7ZcJ6pYvHkqd',
          name: 'get_weather',
          arguments: { city: 'Oslo', unit: 'celsius' },
        },
      },
    ]);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_use' });
    expect(response.usage).toEqual({
      inputTokens: 512,
      outputTokens: 96,
      totalTokens: 608,
      cachedInputTokens: 0,
    });
  });

  it('never throws on weird tool input: text parsed or kept with argumentsError, null is {}, ids generated', () => {
    const response = fromAnthropicMessage(message('message-weird-input.json'));
    const calls = response.content.flatMap((p) => (p.type === 'tool-call' ? [p.toolCall] : []));
    // The thinking block has no part of its own.
    expect(response.content).toHaveLength(3);
    expect(calls[0]).toMatchObject({
      id: 'toolu_01Jx4Kd8Lm2Np6Qr0St3Uv5W',
      name: 'read_file',
      arguments: '{"path": "src/index.ts", "lines": [1, 2',
      argumentsError: expect.any(String),
    });
    expect(calls[1]).toEqual({
      id: 'toolu_01Yz7Ab1Cd4Ef8Gh2Ij5Kl9M',
      name: 'list_files',
      arguments: {},
    });
    expect(calls[2]).toMatchObject({ name: 'read_file', arguments: { path: 'README.md' } });
    expect(calls[2]?.id).toMatch(/^call_/);
    // Null cache counters: no cachedInputTokens claimed.
    expect(response.usage).toEqual({ inputTokens: 44, outputTokens: 70, totalTokens: 114 });
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool-calls'],
    ['refusal', 'content-filter'],
    ['pause_turn', 'other'],
    ['something_new', 'other'],
  ])('maps stop reason %s to %s', (raw, unified) => {
    expect(mapStopReason(raw)).toEqual({ unified, raw });
  });

  it('maps a missing stop reason to other', () => {
    expect(mapStopReason(null)).toEqual({ unified: 'other', raw: undefined });
  });

  it('sums input, cache-write and cache-read tokens into inputTokens', () => {
    expect(
      mapUsage({
        input_tokens: 10,
        cache_creation_input_tokens: 20,
        cache_read_input_tokens: 30,
        output_tokens: 5,
      }),
    ).toEqual({ inputTokens: 60, outputTokens: 5, totalTokens: 65, cachedInputTokens: 30 });
    expect(mapUsage(undefined)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });
});

describe('stream mapping', () => {
  it('maps text deltas, then usage and finish at message_stop; pings are skipped', async () => {
    const parts = mapStream('stream-text.sse');
    expect(parts).toEqual([
      { type: 'text-delta', delta: 'Hello' },
      { type: 'text-delta', delta: '! The answer' },
      { type: 'text-delta', delta: ' is 42.' },
      {
        type: 'usage',
        usage: {
          inputTokens: 25 + 2048,
          outputTokens: 15,
          totalTokens: 2088,
          cachedInputTokens: 2048,
        },
      },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'end_turn' } },
    ]);
    const response = await collectStream(asStream(parts));
    expect(response.content).toEqual([{ type: 'text', text: 'Hello! The answer is 42.' }]);
  });

  it('assembles tool_use input from input_json_delta pieces, each call with its own index', () => {
    const parts = mapStream('stream-tool-split.sse');
    const deltas = parts.filter((p) => p.type === 'tool-call-delta');
    expect(deltas).toEqual([
      {
        type: 'tool-call-delta',
        index: 0,
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        argumentsDelta: '',
      },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city": "Pa' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: 'ris", "un' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: 'it": "celsius"}' },
      {
        type: 'tool-call-delta',
        index: 1,
        id: 'toolu_01Lq8Ws3Hx5Kd2Jv9Nb4Rm6T',
        name: 'get_weather',
        argumentsDelta: '',
      },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"city":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: ' "Oslo"}' },
    ]);
    const calls = parts.filter((p) => p.type === 'tool-call').map((p) => p.toolCall);
    expect(calls).toEqual([
      {
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        name: 'get_weather',
        arguments: { city: 'Paris', unit: 'celsius' },
      },
      { id: 'toolu_01Lq8Ws3Hx5Kd2Jv9Nb4Rm6T', name: 'get_weather', arguments: { city: 'Oslo' } },
    ]);
    // Each tool-call part comes after its own deltas, and usage and finish come last.
    const types = parts.map((p) => p.type);
    expect(types.indexOf('tool-call')).toBe(types.indexOf('tool-call-delta') + 4);
    expect(types.slice(-2)).toEqual(['usage', 'finish']);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
    });
  });

  it('keeps malformed streamed JSON as argumentsError instead of throwing', () => {
    const calls = mapStream('stream-tool-malformed.sse').flatMap((p) =>
      p.type === 'tool-call' ? [p.toolCall] : [],
    );
    expect(calls).toEqual([
      {
        id: 'toolu_01Mf6Gh9Jk2Lz5Xc8Vb1Nm4Q',
        name: 'get_weather',
        arguments: '{"city": "Paris", "unit": celsius}',
        argumentsError: expect.stringMatching(/JSON/),
      },
    ]);
  });

  it('throws a retryable ModelError on an error event', () => {
    const mapper = new AnthropicStreamMapper();
    const events = sseEvents('stream-error.sse');
    const error = (() => {
      try {
        for (const event of events) mapper.push(event);
      } catch (e) {
        return e;
      }
    })();
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      retryable: true,
      message: expect.stringContaining('overloaded_error'),
    });
  });

  it('rejects a stream that ends before message_stop', () => {
    const mapper = new AnthropicStreamMapper();
    for (const event of sseEvents('stream-truncated.sse')) mapper.push(event);
    expect(() => mapper.end()).toThrow(/before its message_stop/);
  });
});

describe('error mapping', () => {
  const apiError = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    APIError.generate(status, body as object, undefined, new Headers(headers));

  it.each([
    [408, true],
    [409, true],
    [429, true],
    [500, true],
    [503, true],
    [529, true],
    [400, false],
    [401, false],
    [404, false],
  ])('status %i is retryable: %s', (status, retryable) => {
    const error = anthropicModelError(
      apiError(status, jsonFixture('anthropic', 'error-internal.json')),
    );
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status, retryable });
  });

  it('keeps the API’s message and obeys x-should-retry: false', () => {
    const error = anthropicModelError(
      apiError(529, jsonFixture('anthropic', 'error-overloaded.json'), {
        'x-should-retry': 'false',
      }),
    );
    expect(error).toMatchObject({ status: 529, retryable: false });
    expect(error.message).toContain('Overloaded');
  });

  it('maps connection errors and timeouts to retryable ModelErrors without status', () => {
    for (const cause of [
      new APIConnectionError({ message: 'Connection error.' }),
      new APIConnectionTimeoutError(),
    ]) {
      const error = anthropicModelError(cause);
      expect(error).toMatchObject({ retryable: true, status: undefined });
      expect(ModelError.isInstance(error)).toBe(true);
    }
  });

  it('maps a connection lost mid-body (undici) to a retryable ModelError', () => {
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    for (const cause of [
      new TypeError('terminated', { cause: new Error('other side closed') }),
      new TypeError('terminated', { cause: reset }),
      Object.assign(new Error('socket closed'), { code: 'UND_ERR_SOCKET' }),
    ]) {
      const error = anthropicModelError(cause);
      expect(ModelError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ retryable: true, status: undefined, cause });
    }
  });

  it('maps the SDK’s abort, and any error once the signal aborted, to AbortError', () => {
    expect(AbortError.isInstance(anthropicModelError(new APIUserAbortError()))).toBe(true);
    const controller = new AbortController();
    controller.abort('stop');
    const error = anthropicModelError(new Error('socket hang up'), controller.signal);
    expect(AbortError.isInstance(error)).toBe(true);
    expect(error.cause).toBe('stop');
  });

  it('maps other SDK errors to a ModelError that is not retryable', () => {
    const error = anthropicModelError(new AnthropicError('Streaming is required'));
    expect(error).toMatchObject({ retryable: false, status: undefined });
    expect(error.message).toContain('Streaming is required');
  });
});
