// The pure Gemini mappers (DESIGN principle 6) on recorded wire fixtures in Gemini's REST
// formats: generateContent JSON and streamGenerateContent?alt=sse events.
import { ApiError } from '@google/genai';
import {
  AbortError,
  assistantMessage,
  ModelError,
  systemMessage,
  Transcript,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import {
  CallMemory,
  type GeminiResponseData,
  GeminiStreamMapper,
  geminiError,
  geminiFinishReason,
  geminiRequest,
  geminiResponse,
  geminiUsage,
  SKIP_THOUGHT_SIGNATURE,
} from 'statecraft/gemini';
import { collectStream, type ModelRequest, type StreamPart } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import { fixture, jsonFixture } from '../support/replay-server.js';

const response = (name: string) => jsonFixture('gemini', name) as GeminiResponseData;

/** The JSON payloads of an SSE fixture, as Gemini frames them: `data: {...}\r\n\r\n`. */
function sseChunks(name: string): GeminiResponseData[] {
  return fixture('gemini', name)
    .split('\r\n\r\n')
    .filter((event) => event.trim() !== '')
    .map((event) => JSON.parse(event.replace(/^data: /, '')) as GeminiResponseData);
}

function request(
  messages: Parameters<typeof Transcript.from>[0],
  extra: Partial<ModelRequest> = {},
) {
  return { messages: Transcript.from(messages), ...extra } satisfies ModelRequest;
}

describe('geminiRequest', () => {
  it('sends leading system messages as systemInstruction and later ones as tagged user notes', () => {
    const params = geminiRequest(
      request([
        systemMessage('You are terse.'),
        systemMessage('Answer in English.'),
        userMessage('Hi'),
        assistantMessage('Hello!'),
        systemMessage('You have 2 iterations left.'),
        userMessage('Weather?'),
      ]),
      { model: 'gemini-2.5-flash' },
    );
    expect(params.model).toBe('gemini-2.5-flash');
    expect(params.config?.systemInstruction).toEqual({
      parts: [{ text: 'You are terse.' }, { text: 'Answer in English.' }],
    });
    expect(params.contents).toEqual([
      { role: 'user', parts: [{ text: 'Hi' }] },
      { role: 'model', parts: [{ text: 'Hello!' }] },
      {
        role: 'user',
        parts: [
          { text: '<system-note>You have 2 iterations left.</system-note>' },
          { text: 'Weather?' },
        ],
      },
    ]);
  });

  it('replays calls as functionCall parts and results as functionResponse parts in one user turn', () => {
    const memory = new CallMemory();
    memory.remember([
      ['c1', { providerId: false, thoughtSignature: 'sig-1' }],
      ['fc-9', { providerId: true }],
    ]);
    const params = geminiRequest(
      request([
        userMessage('Weather in Paris and London?'),
        assistantMessage('Checking.', [
          { id: 'c1', name: 'get_weather', arguments: { city: 'Paris' } },
          { id: 'c2', name: 'get_weather', arguments: { city: 'London' } },
        ]),
        toolResultMessage({
          toolCallId: 'c1',
          name: 'get_weather',
          output: { c: 18 },
          success: true,
        }),
        toolResultMessage({
          toolCallId: 'c2',
          name: 'get_weather',
          output: undefined,
          success: false,
          error: 'city not found',
        }),
        assistantMessage('', [{ id: 'fc-9', name: 'to_fahrenheit', arguments: { celsius: 18 } }]),
        toolResultMessage({
          toolCallId: 'fc-9',
          name: 'to_fahrenheit',
          output: 64.4,
          success: true,
        }),
      ]),
      { model: 'm', recall: memory.recall },
    );
    expect(params.config?.systemInstruction).toBeUndefined();
    expect(params.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris and London?' }] },
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          // Our generated ids are never sent; the remembered signature is echoed.
          {
            functionCall: { name: 'get_weather', args: { city: 'Paris' } },
            thoughtSignature: 'sig-1',
          },
          { functionCall: { name: 'get_weather', args: { city: 'London' } } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { output: '{"c":18}' } } },
          { functionResponse: { name: 'get_weather', response: { error: 'city not found' } } },
        ],
      },
      {
        role: 'model',
        parts: [
          {
            // Gemini's own id goes back; no signature known, so the documented placeholder.
            functionCall: { id: 'fc-9', name: 'to_fahrenheit', args: { celsius: 18 } },
            thoughtSignature: SKIP_THOUGHT_SIGNATURE,
          },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { id: 'fc-9', name: 'to_fahrenheit', response: { output: '64.4' } } },
        ],
      },
    ]);
  });

  it('replays malformed arguments under a key, since Gemini args must be an object', () => {
    const params = geminiRequest(
      request([
        userMessage('add'),
        assistantMessage('', [
          { id: 'c1', name: 'add', arguments: '{"a": 1,', argumentsError: 'Unexpected end' },
        ]),
      ]),
      { model: 'm' },
    );
    expect(params.contents?.[1]).toMatchObject({
      role: 'model',
      parts: [{ functionCall: { name: 'add', args: { value: '{"a": 1,' } } }],
    });
  });

  it('maps tools, tool choice, response formats, settings and provider options', () => {
    const tools = [
      {
        name: 'get_weather',
        description: 'Current weather',
        inputSchema: {
          type: 'object',
          properties: { city: { type: 'string' } },
          required: ['city'],
        },
      },
    ];
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const params = geminiRequest(
      request([userMessage('x')], {
        tools,
        toolChoice: { type: 'tool', name: 'get_weather' },
        responseFormat: { type: 'json_schema', name: 'answer', schema },
        temperature: 0.2,
        topP: 0.9,
        maxOutputTokens: 256,
        stopSequences: ['END'],
        seed: 7,
        providerOptions: { gemini: { topK: 40, temperature: 0.5 }, openai: { ignored: true } },
      }),
      { model: 'm', defaults: { thinkingConfig: { thinkingBudget: 0 }, topP: 0.1 } },
    );
    expect(params.config).toEqual({
      thinkingConfig: { thinkingBudget: 0 },
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Current weather',
              parametersJsonSchema: tools[0]?.inputSchema,
            },
          ],
        },
      ],
      toolConfig: {
        functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] },
      },
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
      // The request's own provider options win over the mapped value…
      temperature: 0.5,
      // …and the mapped value wins over the adapter's defaults.
      topP: 0.9,
      maxOutputTokens: 256,
      stopSequences: ['END'],
      seed: 7,
      topK: 40,
    });
    const modes = (['auto', 'none', 'required'] as const).map(
      (toolChoice) =>
        geminiRequest(request([userMessage('x')], { tools, toolChoice }), { model: 'm' }).config
          ?.toolConfig?.functionCallingConfig?.mode,
    );
    expect(modes).toEqual(['AUTO', 'NONE', 'ANY']);
    const json = geminiRequest(
      request([userMessage('x')], { responseFormat: { type: 'json_object' } }),
      {
        model: 'm',
      },
    );
    expect(json.config).toEqual({ responseMimeType: 'application/json' });
    // No tools: no tool config either, whatever the choice.
    const bare = geminiRequest(request([userMessage('x')], { toolChoice: 'required' }), {
      model: 'm',
    });
    expect(bare.config).toEqual({});
  });
});

describe('geminiResponse', () => {
  it('maps a text answer with usage, finish reason and response metadata', () => {
    const { response: mapped, calls } = geminiResponse(response('generate-text.json'));
    expect(mapped).toEqual({
      content: [
        {
          type: 'text',
          text: 'It is 18 °C (64.4 °F) in Paris and 14 °C in London, so Paris is the warmer city today.',
        },
      ],
      usage: { inputTokens: 262, outputTokens: 27, totalTokens: 289 },
      finishReason: { unified: 'stop', raw: 'STOP' },
      response: { id: 'oZ3RaLjJMozcz7IPkY6e8Ag', modelId: 'gemini-2.5-flash' },
    });
    expect(calls.size).toBe(0);
  });

  it('maps two function calls without ids: ids generated, args kept as objects, signature remembered', () => {
    const { response: mapped, calls } = geminiResponse(response('generate-function-calls.json'));
    const [first, second] = mapped.content;
    expect(first).toMatchObject({
      type: 'tool-call',
      toolCall: { name: 'get_weather', arguments: { city: 'Paris' } },
    });
    expect(second).toMatchObject({
      type: 'tool-call',
      toolCall: { name: 'get_weather', arguments: { city: 'London' } },
    });
    const ids = mapped.content.map((part) => (part.type === 'tool-call' ? part.toolCall.id : ''));
    expect(ids[0]).toMatch(/^call_/);
    expect(new Set(ids).size).toBe(2);
    expect(mapped.finishReason).toEqual({ unified: 'tool-calls', raw: 'STOP' });
    expect(mapped.usage).toEqual({
      inputTokens: 112,
      outputTokens: 78,
      totalTokens: 190,
      reasoningTokens: 48,
    });
    expect([...calls.values()]).toEqual([
      {
        providerId: false,
        thoughtSignature:
          'CsMBAdHtim9YbG9ja0NoYWluT2ZUaG91Z2h0UGFyaXNMb25kb24xMjM0NTY3ODkwYWJjZGVm',
      },
      { providerId: false },
    ]);
  });

  it('keeps text before a call in order, and Gemini ids as they are', () => {
    const { response: mapped, calls } = geminiResponse(response('generate-function-call.json'));
    expect(mapped.content).toEqual([
      { type: 'text', text: 'Paris is warmer. Converting 18 °C to Fahrenheit.' },
      {
        type: 'tool-call',
        toolCall: { id: 'fc-2b7e0c4a', name: 'to_fahrenheit', arguments: { celsius: 18 } },
      },
    ]);
    expect(calls.get('fc-2b7e0c4a')?.providerId).toBe(true);
    expect(mapped.usage).toMatchObject({ cachedInputTokens: 96, reasoningTokens: 20 });
  });

  it('turns a MALFORMED_FUNCTION_CALL into a failed call named after the function it tried', () => {
    const { response: mapped, calls } = geminiResponse(response('generate-malformed-args.json'));
    const finishMessage = 'Malformed function call: print(default_api.get_weather(city=Paris"))';
    expect(mapped.content).toEqual([
      {
        type: 'tool-call',
        toolCall: {
          id: expect.stringMatching(/^call_/),
          name: 'get_weather',
          arguments: finishMessage,
          argumentsError: expect.stringContaining('Gemini reported MALFORMED_FUNCTION_CALL'),
        },
      },
    ]);
    const [part] = mapped.content;
    expect(part?.type === 'tool-call' && part.toolCall.argumentsError).toContain(finishMessage);
    expect(mapped.finishReason).toEqual({ unified: 'tool-calls', raw: 'MALFORMED_FUNCTION_CALL' });
    expect(mapped.usage).toEqual({ inputTokens: 64, outputTokens: 0, totalTokens: 64 });
    // Nothing of Gemini's to echo back: the id is ours and there is no signature.
    expect([...calls.values()]).toEqual([{ providerId: false }]);
  });

  it.each([
    ['Malformed function call: print(default_api.get_weather(city=Paris"))', 'get_weather'],
    ['Malformed function call: call:default_api:get_weather{city:<ctrl46>Paris}', 'get_weather'],
    ['Malformed function call: call:google_search{query:"part 602"}', 'google_search'],
    ['Malformed function call: print(to_fahrenheit(celsius=18 degrees))', 'to_fahrenheit'],
    [
      'Malformed function call: Failed to parse function call: Function call is empty - no input to parse.',
      'malformed_call',
    ],
    ['', 'malformed_call'],
    [undefined, 'malformed_call'],
  ])('names the malformed call in %j %s', (finishMessage, name) => {
    const { response: mapped } = geminiResponse({
      candidates: [
        {
          // Gemini sends no parts at all, or an empty list.
          content: finishMessage === undefined ? {} : { role: 'model', parts: [] },
          finishReason: 'MALFORMED_FUNCTION_CALL' as never,
          ...(finishMessage !== undefined && { finishMessage }),
        },
      ],
    });
    const [part] = mapped.content;
    expect(part?.type === 'tool-call' && part.toolCall).toMatchObject({
      name,
      arguments: finishMessage ?? '',
      argumentsError: expect.stringContaining('MALFORMED_FUNCTION_CALL'),
    });
    expect(mapped.content).toHaveLength(1);
    expect(mapped.finishReason).toEqual({ unified: 'tool-calls', raw: 'MALFORMED_FUNCTION_CALL' });
  });

  it('keeps arguments that are not an object: text is parsed, else kept with argumentsError', () => {
    // Not something Gemini sends (its `args` is an object), but a proxy or an older API might.
    const { response: mapped } = geminiResponse({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { functionCall: { name: 'add', args: { a: 'two', b: 2 } } },
              { functionCall: { name: 'add', args: '{"a": 1, "b": ' as never } },
              { functionCall: { name: 'add', args: '{"a": 1, "b": 2}' as never } },
              { functionCall: { name: 'add' } },
            ],
          },
          finishReason: 'STOP' as never,
        },
      ],
    });
    const calls = mapped.content.flatMap((p) => (p.type === 'tool-call' ? [p.toolCall] : []));
    expect(calls[0]).toMatchObject({ name: 'add', arguments: { a: 'two', b: 2 } });
    expect(calls[0]?.argumentsError).toBeUndefined();
    expect(calls[1]).toMatchObject({ name: 'add', arguments: '{"a": 1, "b": ' });
    expect(calls[1]?.argumentsError).toEqual(expect.any(String));
    expect(calls[2]).toMatchObject({ name: 'add', arguments: { a: 1, b: 2 } });
    expect(calls[2]?.argumentsError).toBeUndefined();
    expect(calls[3]).toMatchObject({ name: 'add', arguments: {} });
    expect(mapped.finishReason).toEqual({ unified: 'tool-calls', raw: 'STOP' });
  });

  it('leaves thought summaries out and reports a blocked prompt as a content filter', () => {
    const thinking = geminiResponse({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ text: 'Let me think…', thought: true }, { text: 'Answer.' }],
          },
          finishReason: 'STOP' as never,
        },
      ],
    });
    expect(thinking.response.content).toEqual([{ type: 'text', text: 'Answer.' }]);
    const blocked = geminiResponse({
      promptFeedback: { blockReason: 'PROHIBITED_CONTENT' as never },
      usageMetadata: { promptTokenCount: 9, totalTokenCount: 9 },
    });
    expect(blocked.response.content).toEqual([]);
    expect(blocked.response.finishReason).toEqual({
      unified: 'content-filter',
      raw: 'PROHIBITED_CONTENT',
    });
  });
});

describe('geminiFinishReason', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool-calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content-filter'],
    ['RECITATION', false, 'content-filter'],
    ['BLOCKLIST', false, 'content-filter'],
    ['PROHIBITED_CONTENT', false, 'content-filter'],
    ['SPII', false, 'content-filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'error'],
    // The mappers report a malformed call as a (failed) call: then it is a tool-call turn.
    ['MALFORMED_FUNCTION_CALL', true, 'tool-calls'],
    ['LANGUAGE', false, 'other'],
    ['OTHER', false, 'other'],
    ['SOMETHING_NEW', false, 'other'],
    [undefined, false, 'other'],
  ] as const)('%s (tool calls: %s) → %s', (raw, hasToolCalls, unified) => {
    expect(geminiFinishReason(raw, hasToolCalls)).toEqual({ unified, raw });
  });
});

describe('geminiUsage', () => {
  it('counts thinking as output and reports it and the cache apart', () => {
    expect(
      geminiUsage({
        promptTokenCount: 100,
        candidatesTokenCount: 20,
        thoughtsTokenCount: 30,
        cachedContentTokenCount: 60,
        toolUsePromptTokenCount: 5,
        totalTokenCount: 155,
      }),
    ).toEqual({
      inputTokens: 105,
      outputTokens: 50,
      totalTokens: 155,
      cachedInputTokens: 60,
      reasoningTokens: 30,
    });
    expect(geminiUsage(undefined)).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
    expect(geminiUsage({ promptTokenCount: 3, candidatesTokenCount: 4 })).toEqual({
      inputTokens: 3,
      outputTokens: 4,
      totalTokens: 7,
    });
  });
});

describe('GeminiStreamMapper', () => {
  function mapStream(chunks: GeminiResponseData[]): StreamPart[] {
    const mapper = new GeminiStreamMapper();
    return [...chunks.flatMap((chunk) => mapper.push(chunk)), ...mapper.end()];
  }

  it('maps text chunks and a whole function call, with usage and finish last', async () => {
    const parts = mapStream(sseChunks('stream-function-call.sse'));
    expect(parts.map((p) => p.type)).toEqual([
      'text-delta',
      'text-delta',
      'tool-call-delta',
      'tool-call',
      'usage',
      'finish',
    ]);
    const delta = parts[2] as Extract<StreamPart, { type: 'tool-call-delta' }>;
    expect(delta).toMatchObject({
      index: 0,
      name: 'get_weather',
      argumentsDelta: '{"city":"Paris"}',
    });
    expect(delta.id).toMatch(/^call_/);
    expect(parts[3]).toEqual({
      type: 'tool-call',
      toolCall: { id: delta.id, name: 'get_weather', arguments: { city: 'Paris' } },
    });
    // The usage of the last chunk, not the partial one of the first.
    expect(parts[4]).toEqual({
      type: 'usage',
      usage: { inputTokens: 98, outputTokens: 53, totalTokens: 151, reasoningTokens: 32 },
    });
    expect(parts[5]).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'STOP' },
    });
    const collected = await collectStream(
      (async function* () {
        yield* parts;
      })(),
    );
    expect(collected.content[0]).toEqual({
      type: 'text',
      text: 'Let me check the weather in Paris.',
    });
  });

  it('remembers the signature of a streamed call', () => {
    const mapper = new GeminiStreamMapper();
    for (const chunk of sseChunks('stream-function-call.sse')) mapper.push(chunk);
    expect([...mapper.calls.values()]).toEqual([
      {
        providerId: false,
        thoughtSignature: 'CowBAdHtim9TdHJlYW1lZENhbGxQYXJpczEyMzQ1Njc4OTBhYmNkZWY=',
      },
    ]);
  });

  it('maps a text stream', () => {
    const parts = mapStream(sseChunks('stream-text.sse'));
    expect(parts.filter((p) => p.type === 'text-delta').map((p) => p.delta)).toEqual([
      'It is 18 °C',
      ' and sunny in Paris',
      ' today.',
    ]);
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'stop', raw: 'STOP' },
    });
  });

  it('turns a streamed MALFORMED_FUNCTION_CALL into a failed call, then finishes with tool-calls', () => {
    const parts = mapStream(sseChunks('stream-malformed-call.sse'));
    const finishMessage =
      'Malformed function call: call:default_api:get_weather{city:<ctrl46>Paris}';
    expect(parts.map((p) => p.type)).toEqual(['tool-call-delta', 'tool-call', 'usage', 'finish']);
    const delta = parts[0] as Extract<StreamPart, { type: 'tool-call-delta' }>;
    expect(delta).toMatchObject({ index: 0, name: 'get_weather', argumentsDelta: finishMessage });
    expect(parts[1]).toEqual({
      type: 'tool-call',
      toolCall: {
        id: delta.id,
        name: 'get_weather',
        arguments: finishMessage,
        argumentsError: expect.stringContaining(finishMessage),
      },
    });
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'MALFORMED_FUNCTION_CALL' },
    });
  });

  it('refuses a stream that ended before its finish reason: it was cut short', () => {
    const mapper = new GeminiStreamMapper();
    mapper.push(sseChunks('stream-text.sse')[0] as GeminiResponseData);
    let error: unknown;
    try {
      mapper.end();
    } catch (caught) {
      error = caught;
    }
    expect(ModelError.isInstance(error)).toBe(true);
    expect((error as ModelError).retryable).toBe(true);
  });
});

describe('geminiError', () => {
  const apiError = (status: number) =>
    new ApiError({
      status,
      message: JSON.stringify(jsonFixture('gemini', `error-${status}.json`)),
    });

  it('maps API errors by status, keeping Google’s status name and message', () => {
    const rateLimited = geminiError(apiError(429)) as ModelError;
    expect(ModelError.isInstance(rateLimited)).toBe(true);
    expect(rateLimited).toMatchObject({ status: 429, retryable: true });
    expect(rateLimited.message).toContain('RESOURCE_EXHAUSTED: You exceeded your current quota');
    expect(geminiError(apiError(500))).toMatchObject({ status: 500, retryable: true });
    const bad = geminiError(
      new ApiError({
        status: 400,
        message:
          'got status: INVALID_ARGUMENT. {"error":{"code":400,"message":"Bad schema","status":"INVALID_ARGUMENT"}}',
      }),
    );
    expect(bad).toMatchObject({ status: 400, retryable: false });
    expect(bad.message).toContain('INVALID_ARGUMENT: Bad schema');
    expect(geminiError(new ApiError({ status: 408, message: 'timeout' }))).toMatchObject({
      retryable: true,
    });
  });

  it('maps network failures to retryable errors and anything else to non-retryable ones', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    expect(geminiError(refused)).toMatchObject({ retryable: true, status: undefined });
    expect(geminiError(new TypeError('terminated'))).toMatchObject({ retryable: true });
    expect(geminiError(new Error('the SDK refused an option'))).toMatchObject({
      retryable: false,
    });
    // A chunk the SDK could not parse is a corrupted stream (SPEC Q3): another try can help.
    expect(geminiError(new Error('exception parsing stream chunk {x'))).toMatchObject({
      message: expect.stringMatching(/malformed response/),
      retryable: true,
    });
  });

  it('is an AbortError whenever the caller aborted, whatever the SDK threw', () => {
    const controller = new AbortController();
    controller.abort('stop');
    const error = geminiError(
      new DOMException('This operation was aborted', 'AbortError'),
      controller.signal,
    );
    expect(AbortError.isInstance(error)).toBe(true);
    expect(error.cause).toBe('stop');
    // An abort nobody asked for is the SDK's timeout: retryable.
    const timeout = geminiError(new DOMException('The operation timed out', 'TimeoutError'));
    expect(timeout).toMatchObject({ retryable: true });
  });
});

describe('CallMemory', () => {
  it('forgets the oldest memos first and keeps only memos worth echoing', () => {
    const memory = new CallMemory(2);
    memory.remember([
      ['a', { providerId: true }],
      ['plain', { providerId: false }],
      ['b', { providerId: false, thoughtSignature: 's' }],
      ['c', { providerId: true }],
    ]);
    expect(memory.size).toBe(2);
    expect(memory.recall('a')).toBeUndefined();
    expect(memory.recall('plain')).toBeUndefined();
    expect(memory.recall('b')).toEqual({ providerId: false, thoughtSignature: 's' });
  });
});
