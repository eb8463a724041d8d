// The OpenAI adapters' pure mapping functions (DESIGN principle 6), on recorded wire fixtures
// in OpenAI's own JSON and SSE formats: request → parameters, response and stream → parts,
// finish reasons, usage, and SDK errors → statecraft errors.
import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
  type OpenAI,
} from 'openai';
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
import { collectStream, type ModelRequest, type StreamPart } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import { chatRequestParams } from '../../adapters/models/openai/chat-request.js';
import { chatResponse } from '../../adapters/models/openai/chat-response.js';
import { ChatStreamMapper } from '../../adapters/models/openai/chat-stream.js';
import { responseFailure, toStatecraftError } from '../../adapters/models/openai/errors.js';
import {
  chatFinishReason,
  responsesFinishReason,
} from '../../adapters/models/openai/finish-reason.js';
import { responsesRequestParams } from '../../adapters/models/openai/responses-request.js';
import { responsesResponse } from '../../adapters/models/openai/responses-response.js';
import { ResponsesStreamMapper } from '../../adapters/models/openai/responses-stream.js';
import { chatUsage, responsesUsage } from '../../adapters/models/openai/usage.js';
import { fixture, jsonFixture } from '../support/replay-server.js';

type Completion = OpenAI.Chat.ChatCompletion;
type Chunk = OpenAI.Chat.ChatCompletionChunk;
type Response = OpenAI.Responses.Response;
type ResponseEvent = OpenAI.Responses.ResponseStreamEvent;

/** The JSON payloads of an SSE fixture, in order, without the `[DONE]` sentinel. */
function sseData<T>(name: string): T[] {
  return fixture('openai', name)
    .split('\n\n')
    .map((event) =>
      event
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n'),
    )
    .filter((data) => data !== '' && data !== '[DONE]')
    .map((data) => JSON.parse(data) as T);
}

function mapAll<E>(mapper: { push(e: E): StreamPart[]; end(): StreamPart[] }, events: E[]) {
  const parts = events.flatMap((event) => mapper.push(event));
  return [...parts, ...mapper.end()];
}

async function* replay(parts: readonly StreamPart[]): AsyncGenerator<StreamPart> {
  yield* parts;
}

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city.',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  },
};

/** A conversation with every kind of message: two tool rounds, one with malformed arguments. */
function conversation(): Message[] {
  return [
    systemMessage('You are a weather assistant.'),
    userMessage('Weather in Paris and London?'),
    assistantMessage('Let me check.', [
      { id: 'call_A', name: 'get_weather', arguments: { city: 'Paris' } },
      {
        id: 'call_B',
        name: 'get_weather',
        arguments: '{"city": London',
        argumentsError: 'Unexpected token',
      },
    ]),
    toolResultMessage({
      toolCallId: 'call_A',
      name: 'get_weather',
      output: { tempC: 18 },
      success: true,
    }),
    toolResultMessage({
      toolCallId: 'call_B',
      name: 'get_weather',
      output: undefined,
      success: false,
      error: 'The arguments are not valid JSON.',
    }),
    systemMessage('Note: answer briefly.'),
    assistantMessage('Paris is 18 °C.'),
  ];
}

describe('chat request mapping', () => {
  it('sends tool results as role "tool" with their tool_call_id, and calls as JSON strings', () => {
    const params = chatRequestParams(
      { messages: Transcript.from(conversation()) },
      { model: 'gpt-4.1-mini' },
    );
    expect(params.model).toBe('gpt-4.1-mini');
    expect(params.messages).toEqual([
      { role: 'system', content: 'You are a weather assistant.' },
      { role: 'user', content: 'Weather in Paris and London?' },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          {
            id: 'call_A',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
          // Malformed arguments go back verbatim, so the correction matches what was sent.
          {
            id: 'call_B',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city": London' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_A', content: '{"tempC":18}' },
      { role: 'tool', tool_call_id: 'call_B', content: 'The arguments are not valid JSON.' },
      { role: 'system', content: 'Note: answer briefly.' },
      { role: 'assistant', content: 'Paris is 18 °C.' },
    ]);
    expect(params).not.toHaveProperty('tools');
  });

  it('writes a turn that only called tools with content null', () => {
    const params = chatRequestParams(
      {
        messages: Transcript.from([
          assistantMessage('', [{ id: 'call_A', name: 'get_weather', arguments: {} }]),
        ]),
      },
      { model: 'm' },
    );
    expect(params.messages[0]).toMatchObject({ role: 'assistant', content: null });
  });

  it('maps tools, tool choice, json_schema and sampling settings; provider options win', () => {
    const request: ModelRequest = {
      messages: Transcript.from([userMessage('hi')]),
      tools: [weatherTool],
      toolChoice: { type: 'tool', name: 'get_weather' },
      responseFormat: {
        type: 'json_schema',
        name: 'forecast',
        description: 'A forecast.',
        schema: { type: 'object', properties: { tempC: { type: 'number' } } },
        strict: true,
      },
      temperature: 0.2,
      topP: 0.9,
      maxOutputTokens: 256,
      stopSequences: ['END'],
      seed: 7,
    };
    const params = chatRequestParams(request, {
      model: 'gpt-4.1-mini',
      extra: { temperature: 0, parallel_tool_calls: false },
    });
    expect(params).toEqual({
      model: 'gpt-4.1-mini',
      messages: [{ role: 'user', content: 'hi' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather for a city.',
            parameters: weatherTool.inputSchema,
          },
        },
      ],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      response_format: {
        type: 'json_schema',
        json_schema: {
          name: 'forecast',
          description: 'A forecast.',
          schema: { type: 'object', properties: { tempC: { type: 'number' } } },
          strict: true,
        },
      },
      temperature: 0,
      top_p: 0.9,
      max_completion_tokens: 256,
      stop: ['END'],
      seed: 7,
      parallel_tool_calls: false,
    });
  });

  it('sends string tool choices and json_object as they are, max_tokens when asked', () => {
    const params = chatRequestParams(
      {
        messages: Transcript.from([userMessage('hi')]),
        tools: [weatherTool],
        toolChoice: 'required',
        responseFormat: { type: 'json_object' },
        maxOutputTokens: 64,
      },
      { model: 'llama3.2', maxTokensField: 'max_tokens' },
    );
    expect(params.tool_choice).toBe('required');
    expect(params.response_format).toEqual({ type: 'json_object' });
    expect(params).toMatchObject({ max_tokens: 64 });
    expect(params).not.toHaveProperty('max_completion_tokens');
  });

  it('leaves tool_choice out without tools (the API rejects it alone)', () => {
    const params = chatRequestParams(
      { messages: Transcript.from([userMessage('hi')]), toolChoice: 'none' },
      { model: 'm' },
    );
    expect(params).not.toHaveProperty('tool_choice');
  });
});

describe('chat response mapping', () => {
  it('maps text, usage with cached and reasoning tokens, finish reason and metadata', () => {
    const response = chatResponse(jsonFixture('openai', 'chat-text.json') as Completion);
    expect(response).toEqual({
      content: [
        {
          type: 'text',
          text: 'Paris is 18 °C and sunny, London 15 °C with light rain, and Berlin 21 °C.',
        },
      ],
      usage: {
        inputTokens: 1180,
        outputTokens: 172,
        totalTokens: 1352,
        cachedInputTokens: 1024,
        reasoningTokens: 128,
      },
      finishReason: { unified: 'stop', raw: 'stop' },
      response: { id: 'chatcmpl-BZ6kq2Fh0yTQvR4wXn1sLmA9pEc3D', modelId: 'o4-mini-2025-04-16' },
    });
  });

  it('maps two parallel tool calls with parsed arguments, in order', () => {
    const response = chatResponse(jsonFixture('openai', 'chat-tool-calls.json') as Completion);
    expect(response.content).toEqual([
      {
        type: 'tool-call',
        toolCall: {
          id: 'call_8kQ2XbV7tLmN3pRz1wYc5dHe',
          name: 'get_weather',
          arguments: { city: 'Paris' },
        },
      },
      {
        type: 'tool-call',
        toolCall: {
          id: 'call_Jf4sT9qWn2XvB6mLk0pZr8Ya',
          name: 'get_weather',
          arguments: { city: 'London' },
        },
      },
    ]);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'tool_calls' });
  });

  it('keeps malformed arguments as text with argumentsError instead of throwing', () => {
    const response = chatResponse(
      jsonFixture('openai', 'chat-malformed-arguments.json') as Completion,
    );
    const [part] = response.content;
    expect(part?.type).toBe('tool-call');
    const call = part?.type === 'tool-call' ? part.toolCall : undefined;
    expect(call).toMatchObject({
      id: 'call_Wq7nB2xK9mLt4vRz6pYs3cHd',
      name: 'get_weather',
      arguments: '{"city": Paris}',
    });
    expect(call?.argumentsError).toEqual(expect.any(String));
  });

  it('generates an id for a call without one, and says tool-calls when a server said stop', () => {
    const completion = jsonFixture('openai', 'chat-tool-call-followup.json') as Completion;
    const choice = completion.choices[0] as Completion['choices'][number];
    const wire = choice.message.tool_calls?.[0] as { id: string };
    wire.id = '';
    choice.finish_reason = 'stop';
    const response = chatResponse(completion);
    const part = response.content[0];
    expect(part?.type === 'tool-call' && part.toolCall.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'stop' });
  });
});

describe('chat stream mapping', () => {
  it('maps text deltas, then usage, then finish; folds to the text', async () => {
    const parts = mapAll(new ChatStreamMapper(), sseData<Chunk>('chat-text.sse'));
    expect(parts.filter((p) => p.type === 'text-delta').map((p) => p.delta)).toEqual([
      'Paris',
      ' is',
      ' 18 °C',
      ' and sunny,',
      ' London 15 °C',
      ' with light rain,',
      ' and Berlin 21 °C.',
    ]);
    expect(parts.slice(-2)).toEqual([
      {
        type: 'usage',
        usage: {
          inputTokens: 260,
          outputTokens: 24,
          totalTokens: 284,
          cachedInputTokens: 128,
          reasoningTokens: 0,
        },
      },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' } },
    ]);
    const response = await collectStream(replay(parts));
    expect(response.content).toEqual([
      {
        type: 'text',
        text: 'Paris is 18 °C and sunny, London 15 °C with light rain, and Berlin 21 °C.',
      },
    ]);
  });

  it('assembles tool calls whose arguments are split across chunks', () => {
    const parts = mapAll(new ChatStreamMapper(), sseData<Chunk>('chat-tool-calls.sse'));
    const deltas = parts.filter((p) => p.type === 'tool-call-delta');
    expect(deltas[0]).toEqual({
      type: 'tool-call-delta',
      index: 0,
      id: 'call_8kQ2XbV7tLmN3pRz1wYc5dHe',
      name: 'get_weather',
      argumentsDelta: '',
    });
    expect(
      deltas
        .filter((d) => d.index === 0)
        .map((d) => d.argumentsDelta)
        .join(''),
    ).toBe('{"city":"Paris"}');
    expect(
      deltas
        .filter((d) => d.index === 1)
        .map((d) => d.argumentsDelta)
        .join(''),
    ).toBe('{"city":"London"}');
    // Only a call's first delta names it.
    expect(deltas.filter((d) => d.id !== undefined)).toHaveLength(2);
    expect(parts.map((p) => p.type).slice(-4)).toEqual([
      'tool-call',
      'tool-call',
      'usage',
      'finish',
    ]);
    expect(parts.filter((p) => p.type === 'tool-call').map((p) => p.toolCall)).toEqual([
      { id: 'call_8kQ2XbV7tLmN3pRz1wYc5dHe', name: 'get_weather', arguments: { city: 'Paris' } },
      { id: 'call_Jf4sT9qWn2XvB6mLk0pZr8Ya', name: 'get_weather', arguments: { city: 'London' } },
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    });
  });

  it('follows calls of servers that omit the delta index', () => {
    const mapper = new ChatStreamMapper();
    const chunk = (delta: Chunk['choices'][number]['delta'], finish: string | null = null) =>
      ({
        id: 'chatcmpl-x',
        model: 'llama3.2',
        choices: [{ index: 0, delta, finish_reason: finish }],
      }) as Chunk;
    type WireDelta = NonNullable<Chunk['choices'][number]['delta']['tool_calls']>[number];
    // No `index`, as some OpenAI-compatible servers send them.
    const toolDelta = (fields: Omit<WireDelta, 'index'>) =>
      chunk({ tool_calls: [fields as WireDelta] });
    const parts = mapAll(mapper, [
      toolDelta({ id: 'call_1', function: { name: 'get_weather', arguments: '{"city":' } }),
      toolDelta({ function: { arguments: '"Oslo"}' } }),
      toolDelta({ id: 'call_2', function: { name: 'get_weather', arguments: '{}' } }),
      chunk({}, 'stop'),
    ]);
    expect(parts.filter((p) => p.type === 'tool-call').map((p) => p.toolCall)).toEqual([
      { id: 'call_1', name: 'get_weather', arguments: { city: 'Oslo' } },
      { id: 'call_2', name: 'get_weather', arguments: {} },
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'stop' },
    });
  });

  it('rejects a stream cut off before its finish reason, as retryable', () => {
    const mapper = new ChatStreamMapper();
    for (const chunk of sseData<Chunk>('chat-text.sse').slice(0, 3)) mapper.push(chunk);
    let error: unknown;
    try {
      mapper.end();
    } catch (caught) {
      error = caught;
    }
    expect(ModelError.isInstance(error) && error.retryable).toBe(true);
  });
});

describe('responses request mapping', () => {
  it('makes the leading system message instructions and tool traffic function_call items', () => {
    const params = responsesRequestParams(
      {
        messages: Transcript.from(conversation()),
        stopSequences: ['END'],
        seed: 7,
      },
      { model: 'gpt-4.1-mini' },
    );
    expect(params.instructions).toBe('You are a weather assistant.');
    expect(params.input).toEqual([
      { type: 'message', role: 'user', content: 'Weather in Paris and London?' },
      { type: 'message', role: 'assistant', content: 'Let me check.' },
      {
        type: 'function_call',
        call_id: 'call_A',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
      },
      {
        type: 'function_call',
        call_id: 'call_B',
        name: 'get_weather',
        arguments: '{"city": London',
      },
      { type: 'function_call_output', call_id: 'call_A', output: '{"tempC":18}' },
      {
        type: 'function_call_output',
        call_id: 'call_B',
        output: 'The arguments are not valid JSON.',
      },
      { type: 'message', role: 'system', content: 'Note: answer briefly.' },
      { type: 'message', role: 'assistant', content: 'Paris is 18 °C.' },
    ]);
    // No stop sequences or seed in the Responses API.
    expect(params).not.toHaveProperty('stop');
    expect(params).not.toHaveProperty('seed');
  });

  it('maps tools (not strict), tool choice, text.format json_schema and sampling settings', () => {
    const params = responsesRequestParams(
      {
        messages: Transcript.from([userMessage('hi')]),
        tools: [weatherTool],
        toolChoice: { type: 'tool', name: 'get_weather' },
        responseFormat: {
          type: 'json_schema',
          name: 'forecast',
          schema: { type: 'object' },
          strict: true,
        },
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 256,
      },
      { model: 'gpt-4.1-mini', extra: { store: false } },
    );
    expect(params).toEqual({
      model: 'gpt-4.1-mini',
      input: [{ type: 'message', role: 'user', content: 'hi' }],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Current weather for a city.',
          parameters: weatherTool.inputSchema,
          strict: false,
        },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      text: {
        format: { type: 'json_schema', name: 'forecast', schema: { type: 'object' }, strict: true },
      },
      temperature: 0.2,
      top_p: 0.9,
      max_output_tokens: 256,
      store: false,
    });
  });

  it('sends json_object as text.format and no instructions without a system message', () => {
    const params = responsesRequestParams(
      { messages: Transcript.from([userMessage('hi')]), responseFormat: { type: 'json_object' } },
      { model: 'm' },
    );
    expect(params.text).toEqual({ format: { type: 'json_object' } });
    expect(params).not.toHaveProperty('instructions');
  });
});

describe('responses response mapping', () => {
  it('maps message text (skipping reasoning items) and usage with cached and reasoning tokens', () => {
    const response = responsesResponse(jsonFixture('openai', 'responses-text.json') as Response);
    expect(response.content).toEqual([
      {
        type: 'text',
        text: 'Paris is 18 °C and sunny, London 15 °C with light rain, and Berlin 21 °C.',
      },
    ]);
    expect(response.usage).toEqual({
      inputTokens: 1180,
      outputTokens: 172,
      totalTokens: 1352,
      cachedInputTokens: 1024,
      reasoningTokens: 128,
    });
    expect(response.finishReason).toEqual({ unified: 'stop', raw: 'completed' });
    expect(response.response?.id).toMatch(/^resp_/);
  });

  it('maps function_call items to tool calls with their call_id', () => {
    const response = responsesResponse(
      jsonFixture('openai', 'responses-tool-calls.json') as Response,
    );
    expect(response.content).toEqual([
      {
        type: 'tool-call',
        toolCall: {
          id: 'call_8kQ2XbV7tLmN3pRz1wYc5dHe',
          name: 'get_weather',
          arguments: { city: 'Paris' },
        },
      },
      {
        type: 'tool-call',
        toolCall: {
          id: 'call_Jf4sT9qWn2XvB6mLk0pZr8Ya',
          name: 'get_weather',
          arguments: { city: 'London' },
        },
      },
    ]);
    expect(response.finishReason).toEqual({ unified: 'tool-calls', raw: 'completed' });
  });

  it('keeps malformed arguments with argumentsError', () => {
    const response = responsesResponse(
      jsonFixture('openai', 'responses-malformed-arguments.json') as Response,
    );
    const part = response.content[0];
    const call = part?.type === 'tool-call' ? part.toolCall : undefined;
    expect(call?.arguments).toBe('{"city": Paris}');
    expect(call?.argumentsError).toEqual(expect.any(String));
  });

  it('says length for an incomplete response, and throws the error of a failed one', () => {
    const incomplete = responsesResponse(
      jsonFixture('openai', 'responses-incomplete.json') as Response,
    );
    expect(incomplete.finishReason).toEqual({ unified: 'length', raw: 'max_output_tokens' });
    const failed = {
      ...(jsonFixture('openai', 'responses-text.json') as Response),
      status: 'failed',
      error: { code: 'server_error', message: 'The server had an error.' },
    } as Response;
    expect(() => responsesResponse(failed)).toThrow(/server_error/);
  });
});

describe('responses stream mapping', () => {
  it('maps output_text deltas, then usage and finish from response.completed', () => {
    const parts = mapAll(new ResponsesStreamMapper(), sseData<ResponseEvent>('responses-text.sse'));
    expect(
      parts
        .filter((p) => p.type === 'text-delta')
        .map((p) => p.delta)
        .join(''),
    ).toBe('Paris is 18 °C and sunny, London 15 °C with light rain, and Berlin 21 °C.');
    expect(parts.slice(-2)).toEqual([
      {
        type: 'usage',
        usage: {
          inputTokens: 260,
          outputTokens: 24,
          totalTokens: 284,
          cachedInputTokens: 128,
          reasoningTokens: 0,
        },
      },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'completed' } },
    ]);
  });

  it('assembles function calls from output_item.added, argument deltas and output_item.done', () => {
    const parts = mapAll(
      new ResponsesStreamMapper(),
      sseData<ResponseEvent>('responses-tool-calls.sse'),
    );
    const deltas = parts.filter((p) => p.type === 'tool-call-delta');
    expect(deltas[0]).toEqual({
      type: 'tool-call-delta',
      index: 0,
      id: 'call_8kQ2XbV7tLmN3pRz1wYc5dHe',
      name: 'get_weather',
      argumentsDelta: '',
    });
    expect(
      deltas
        .filter((d) => d.index === 1)
        .map((d) => d.argumentsDelta)
        .join(''),
    ).toBe('{"city":"London"}');
    const calls = parts.filter((p) => p.type === 'tool-call').map((p) => p.toolCall);
    expect(calls).toEqual([
      { id: 'call_8kQ2XbV7tLmN3pRz1wYc5dHe', name: 'get_weather', arguments: { city: 'Paris' } },
      { id: 'call_Jf4sT9qWn2XvB6mLk0pZr8Ya', name: 'get_weather', arguments: { city: 'London' } },
    ]);
    // Each call completes after its own deltas, not at the end of the stream.
    const types = parts.map((p) => (p.type === 'tool-call-delta' ? `delta${p.index}` : p.type));
    expect(types.indexOf('tool-call')).toBeLessThan(types.indexOf('delta1'));
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'completed' },
    });
  });

  it('throws on error and response.failed events, and on a stream that never completed', () => {
    const errorEvent = {
      type: 'error',
      code: 'rate_limit_exceeded',
      message: 'Slow down.',
      param: null,
      sequence_number: 3,
    } as ResponseEvent;
    let error: unknown;
    try {
      new ResponsesStreamMapper().push(errorEvent);
    } catch (caught) {
      error = caught;
    }
    expect(ModelError.isInstance(error) && error.retryable).toBe(true);
    const failed = {
      type: 'response.failed',
      sequence_number: 9,
      response: { status: 'failed', error: { code: 'invalid_prompt', message: 'No.' } },
    } as unknown as ResponseEvent;
    expect(() => new ResponsesStreamMapper().push(failed)).toThrow(/invalid_prompt/);
    const cut = new ResponsesStreamMapper();
    for (const event of sseData<ResponseEvent>('responses-text.sse').slice(0, -1)) cut.push(event);
    expect(() => cut.end()).toThrow(/before response.completed/);
  });
});

describe('finish reasons', () => {
  it.each([
    ['stop', false, 'stop'],
    ['length', false, 'length'],
    ['tool_calls', true, 'tool-calls'],
    ['function_call', true, 'tool-calls'],
    ['content_filter', false, 'content-filter'],
    ['stop', true, 'tool-calls'],
    ['something_new', false, 'other'],
    [null, false, 'other'],
  ] as const)('chat %s (tool calls: %s) → %s', (raw, hasToolCalls, unified) => {
    expect(chatFinishReason(raw, hasToolCalls)).toEqual({ unified, raw: raw ?? undefined });
  });

  it.each([
    [{ status: 'completed' }, false, 'stop', 'completed'],
    [{ status: 'completed' }, true, 'tool-calls', 'completed'],
    [
      { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
      false,
      'length',
      'max_output_tokens',
    ],
    [
      { status: 'incomplete', incomplete_details: { reason: 'content_filter' } },
      false,
      'content-filter',
      'content_filter',
    ],
    [{ status: 'incomplete', incomplete_details: null }, false, 'other', 'incomplete'],
    [{ status: 'failed' }, false, 'error', 'failed'],
    [{ status: 'cancelled' }, false, 'other', 'cancelled'],
  ] as const)('responses %j (tool calls: %s) → %s', (ending, hasToolCalls, unified, raw) => {
    expect(responsesFinishReason(ending, hasToolCalls)).toEqual({ unified, raw });
  });
});

describe('usage', () => {
  it('reads chat usage with and without details', () => {
    expect(
      chatUsage({
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        prompt_tokens_details: { cached_tokens: 64 },
        completion_tokens_details: { reasoning_tokens: 12 },
      }),
    ).toEqual({
      inputTokens: 100,
      outputTokens: 20,
      totalTokens: 120,
      cachedInputTokens: 64,
      reasoningTokens: 12,
    });
    // OpenAI-compatible servers: no details, or null ones.
    const bare = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    expect(chatUsage(bare)).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(
      chatUsage({ ...bare, prompt_tokens_details: null } as unknown as OpenAI.CompletionUsage),
    ).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(chatUsage(undefined)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });

  it('reads Responses usage', () => {
    expect(
      responsesUsage({
        input_tokens: 200,
        input_tokens_details: { cached_tokens: 128 },
        output_tokens: 50,
        output_tokens_details: { reasoning_tokens: 30 },
        total_tokens: 250,
      } as OpenAI.Responses.ResponseUsage),
    ).toEqual({
      inputTokens: 200,
      outputTokens: 50,
      totalTokens: 250,
      cachedInputTokens: 128,
      reasoningTokens: 30,
    });
    expect(responsesUsage(null)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
  });
});

describe('error mapping', () => {
  const apiError = (status: number) =>
    APIError.generate(status, { error: { message: `status ${status}` } }, undefined, new Headers());

  it.each([
    [400, false],
    [401, false],
    [403, false],
    [404, false],
    [408, true],
    [409, true],
    [422, false],
    [429, true],
    [500, true],
    [502, true],
    [503, true],
  ])('HTTP %i → ModelError, retryable: %s', (status, retryable) => {
    const error = toStatecraftError(apiError(status));
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ status, retryable });
    expect(error.message).toContain(`status ${status}`);
  });

  it('maps connection failures and timeouts to retryable ModelErrors without a status', () => {
    for (const sdkError of [
      new APIConnectionError({ message: 'Connection error.' }),
      new APIConnectionTimeoutError(),
    ]) {
      const error = toStatecraftError(sdkError);
      expect(ModelError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ retryable: true, status: undefined });
    }
  });

  it('maps a connection lost mid-body (undici, unwrapped by the SDK) to a retryable ModelError', () => {
    const terminated = new TypeError('terminated', {
      cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    });
    // The code further down the cause chain, e.g. an error a user's own client wrapped.
    const wrapped = new Error('request failed', {
      cause: new Error('read failed', {
        cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
      }),
    });
    for (const networkError of [terminated, new TypeError('terminated'), wrapped]) {
      const error = toStatecraftError(networkError);
      expect(ModelError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ retryable: true, status: undefined, cause: networkError });
    }
  });

  it('maps aborts to AbortError, and an aborted signal wins over any error', () => {
    expect(AbortError.isInstance(toStatecraftError(new APIUserAbortError()))).toBe(true);
    const domAbort = Object.assign(new Error('This operation was aborted'), { name: 'AbortError' });
    expect(AbortError.isInstance(toStatecraftError(domAbort))).toBe(true);
    const controller = new AbortController();
    controller.abort(new Error('user left'));
    const error = toStatecraftError(apiError(500), controller.signal);
    expect(AbortError.isInstance(error)).toBe(true);
    expect(error.cause).toBe(controller.signal.reason);
  });

  it('keeps statecraft errors; classifies stream error events and anything else', () => {
    const own = new ModelError('already mapped', { retryable: true, status: 503 });
    expect(toStatecraftError(own)).toBe(own);
    const streamError = new APIError(
      undefined,
      { message: 'overloaded', type: 'server_error' },
      undefined,
      new Headers(),
    );
    expect(toStatecraftError(streamError)).toMatchObject({ retryable: true, status: undefined });
    const other = toStatecraftError(new SyntaxError('Unexpected end of JSON input'));
    expect(ModelError.isInstance(other)).toBe(true);
    expect(other).toMatchObject({ retryable: false });
  });

  it.each([
    ['server_error', true],
    ['rate_limit_exceeded', true],
    ['invalid_prompt', false],
    [null, false],
  ])('a failed response with code %s → retryable: %s', (code, retryable) => {
    expect(responseFailure({ code, message: 'failed' })).toMatchObject({ retryable });
  });
});
