// fromAiSdk with the AI SDK's own mock models (`ai/test`), one of each specification version
// it takes: what a ModelRequest becomes in the model's call options (prompt, files per
// version, tools, settings, provider options), and what the model's results, stream parts
// and errors become. The real provider packages over HTTP are ai-sdk-providers.test.ts's.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APICallError } from '@ai-sdk/provider';
import { MockLanguageModelV3, MockLanguageModelV4, simulateReadableStream } from 'ai/test';
import {
  AbortError,
  assistantMessage,
  attachment,
  ConfigError,
  createChain,
  defineTool,
  ModelError,
  systemMessage,
  Transcript,
  toolOutput,
  userMessage,
} from 'statecraft';
import { fromAiSdk } from 'statecraft/ai-sdk';
import { collectStream, type ModelRequest, type StreamPart } from 'statecraft/model';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const PNG_BASE64 = Buffer.from(PNG).toString('base64');

const USAGE = {
  inputTokens: { total: 15, noCache: 10, cacheRead: 5, cacheWrite: undefined },
  outputTokens: { total: 7, text: 5, reasoning: 2 },
};

type Mock = typeof MockLanguageModelV3 | typeof MockLanguageModelV4;
const VERSIONS: readonly { version: 'v3' | 'v4'; Mock: Mock }[] = [
  { version: 'v3', Mock: MockLanguageModelV3 },
  { version: 'v4', Mock: MockLanguageModelV4 },
];

// biome-ignore lint/suspicious/noExplicitAny: the mocks' option types differ per version
type AnyOptions = any;

function generateResult(content: unknown[], unified = 'stop', raw: string | undefined = 'stop') {
  return {
    content,
    finishReason: { unified, raw },
    usage: USAGE,
    response: { id: 'resp-1', modelId: 'mock-model-2026' },
    warnings: [],
  };
}

function streamOf(chunks: unknown[]) {
  return { stream: simulateReadableStream({ chunks: chunks as never[] }) };
}

const weather = defineTool({
  name: 'weather',
  description: 'Weather for a city',
  input: z.object({ city: z.string() }),
  execute: async ({ city }) => `${city}: 21°C`,
});

describe.each(VERSIONS)('fromAiSdk with MockLanguageModel $version', ({ version, Mock }) => {
  it('writes the request as the call options of its version', async () => {
    const mock = new Mock({
      provider: 'mock.chat',
      modelId: 'mock-model',
      supportedUrls: { 'image/*': [/^https:\/\/img\.example\.com\//] },
      doGenerate: generateResult([{ type: 'text', text: 'ok' }]) as AnyOptions,
    });
    const model = fromAiSdk(mock, { headers: { 'x-team': 'a' } });
    expect([model.provider, model.modelId]).toEqual(['mock.chat', 'mock-model']);
    const request: ModelRequest = {
      messages: Transcript.from([
        systemMessage('Be brief.'),
        userMessage('What is on these?', [
          attachment({ data: PNG, name: 'a.png' }),
          attachment({ url: 'https://img.example.com/b.jpg' }),
        ]),
        assistantMessage('', [{ id: 'call_1', name: 'weather', arguments: { city: 'Paris' } }]),
        {
          role: 'tool',
          toolCallId: 'call_1',
          name: 'weather',
          output: { celsius: 21 },
          success: true,
          attachments: [attachment({ data: PNG })],
        },
      ]),
      tools: [{ name: 'weather', description: 'Weather', inputSchema: { type: 'object' } }],
      toolChoice: { type: 'tool', name: 'weather' },
      responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' } },
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 100,
      stopSequences: ['END'],
      seed: 7,
      providerOptions: { mock: { user: 'u1', nested: { deep: true } } },
    };
    const controller = new AbortController();
    await model.generate(request, { signal: controller.signal });

    const call = mock.doGenerateCalls[0] as AnyOptions;
    const file =
      version === 'v4'
        ? { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG_BASE64 } }
        : { type: 'file', mediaType: 'image/png', data: PNG_BASE64 };
    const url = new URL('https://img.example.com/b.jpg');
    const urlFile =
      version === 'v4'
        ? { type: 'file', mediaType: 'image/jpeg', data: { type: 'url', url } }
        : { type: 'file', mediaType: 'image/jpeg', data: url };
    const toolFile =
      version === 'v4'
        ? { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG_BASE64 } }
        : { type: 'image-data', mediaType: 'image/png', data: PNG_BASE64 };
    expect(call.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is on these?' },
          { ...file, filename: 'a.png' },
          urlFile,
        ],
      },
      {
        role: 'assistant',
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call_1',
            toolName: 'weather',
            input: { city: 'Paris' },
          },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1',
            toolName: 'weather',
            output: {
              type: 'content',
              value: [{ type: 'text', text: '{"celsius":21}' }, toolFile],
            },
          },
        ],
      },
    ]);
    expect(call).toMatchObject({
      tools: [
        {
          type: 'function',
          name: 'weather',
          description: 'Weather',
          inputSchema: { type: 'object' },
        },
      ],
      toolChoice: { type: 'tool', toolName: 'weather' },
      responseFormat: { type: 'json', name: 'answer', schema: { type: 'object' } },
      temperature: 0.3,
      topP: 0.9,
      maxOutputTokens: 100,
      stopSequences: ['END'],
      seed: 7,
      headers: { 'x-team': 'a' },
    });
    // Passed through as it is, not copied key by key into something else.
    expect(call.providerOptions).toEqual({ mock: { user: 'u1', nested: { deep: true } } });
    // The call's own signal, following the caller's.
    expect(call.abortSignal).toBeInstanceOf(AbortSignal);
    expect(call.abortSignal.aborted).toBe(false);
  });

  it('reads a result: text, tool calls from JSON text, usage, finish reason, response', async () => {
    const mock = new Mock({
      doGenerate: generateResult(
        [
          { type: 'reasoning', text: 'thinking' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Oslo"}' },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'weather', input: '{"city":' },
        ],
        'tool-calls',
        'tool_use',
      ) as AnyOptions,
    });
    const response = await fromAiSdk(mock).generate({
      messages: Transcript.from([userMessage('?')]),
    });
    expect(response).toEqual({
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool-call', toolCall: { id: 'c1', name: 'weather', arguments: { city: 'Oslo' } } },
        {
          type: 'tool-call',
          toolCall: {
            id: 'c2',
            name: 'weather',
            arguments: '{"city":',
            argumentsError: expect.any(String),
          },
        },
      ],
      usage: {
        inputTokens: 15,
        outputTokens: 7,
        totalTokens: 22,
        cachedInputTokens: 5,
        reasoningTokens: 2,
      },
      finishReason: { unified: 'tool-calls', raw: 'tool_use' },
      response: { id: 'resp-1', modelId: 'mock-model-2026' },
    });
  });

  it('streams text and tool-call deltas with one index per call, then usage and finish', async () => {
    const mock = new Mock({
      doStream: streamOf([
        { type: 'stream-start', warnings: [] },
        { type: 'response-metadata', id: 'r1', modelId: 'm' },
        { type: 'text-start', id: 't1' },
        { type: 'text-delta', id: 't1', delta: 'Hel' },
        { type: 'tool-input-start', id: 'c1', toolName: 'weather' },
        { type: 'tool-input-start', id: 'c2', toolName: 'weather' },
        { type: 'tool-input-delta', id: 'c2', delta: '{"city":"Rome"}' },
        { type: 'tool-input-delta', id: 'c1', delta: '{"city":' },
        { type: 'text-delta', id: 't1', delta: 'lo' },
        { type: 'tool-input-delta', id: 'c1', delta: '"Oslo"}' },
        { type: 'text-end', id: 't1' },
        { type: 'tool-input-end', id: 'c1' },
        { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Oslo"}' },
        { type: 'tool-input-end', id: 'c2' },
        { type: 'tool-call', toolCallId: 'c2', toolName: 'weather', input: '{"city":"Rome"}' },
        {
          type: 'finish',
          usage: USAGE,
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        },
      ]) as AnyOptions,
    });
    const parts: StreamPart[] = [];
    for await (const part of fromAiSdk(mock).stream({
      messages: Transcript.from([userMessage('?')]),
    })) {
      parts.push(part);
    }
    expect(parts).toEqual([
      { type: 'text-delta', delta: 'Hel' },
      { type: 'tool-call-delta', index: 0, id: 'c1', name: 'weather', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 1, id: 'c2', name: 'weather', argumentsDelta: '' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"city":"Rome"}' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
      { type: 'text-delta', delta: 'lo' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"Oslo"}' },
      { type: 'tool-call', toolCall: { id: 'c1', name: 'weather', arguments: { city: 'Oslo' } } },
      { type: 'tool-call', toolCall: { id: 'c2', name: 'weather', arguments: { city: 'Rome' } } },
      {
        type: 'usage',
        usage: {
          inputTokens: 15,
          outputTokens: 7,
          totalTokens: 22,
          cachedInputTokens: 5,
          reasoningTokens: 2,
        },
      },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' } },
    ]);
  });

  it('sends a failed result’s files after the results, keeping the result an error', async () => {
    const mock = new Mock({
      doGenerate: generateResult([{ type: 'text', text: 'ok' }]) as AnyOptions,
    });
    await fromAiSdk(mock).generate({
      messages: Transcript.from([
        userMessage('Take a screenshot'),
        assistantMessage('', [{ id: 'call_1', name: 'shoot', arguments: {} }]),
        {
          role: 'tool',
          toolCallId: 'call_1',
          name: 'shoot',
          output: null,
          success: false,
          error: 'page crashed',
          attachments: [attachment({ data: PNG, name: 'last-frame.png' })],
        },
      ]),
    });
    const file =
      version === 'v4'
        ? { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG_BASE64 } }
        : { type: 'file', mediaType: 'image/png', data: PNG_BASE64 };
    const prompt = (mock.doGenerateCalls[0] as AnyOptions).prompt;
    expect(prompt.slice(2)).toEqual([
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1',
            toolName: 'shoot',
            output: { type: 'error-text', value: expect.stringContaining('page crashed') },
          },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Files returned by shoot (call_1):' },
          { ...file, filename: 'last-frame.png' },
        ],
      },
    ]);
  });

  it('runs a chain through a tool call, streamed', async () => {
    const mock = new Mock({
      doStream: [
        streamOf([
          { type: 'tool-input-start', id: 'c1', toolName: 'weather' },
          { type: 'tool-input-delta', id: 'c1', delta: '{"city":"Oslo"}' },
          { type: 'tool-input-end', id: 'c1' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: '{"city":"Oslo"}' },
          {
            type: 'finish',
            usage: USAGE,
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          },
        ]),
        streamOf([
          { type: 'text-delta', id: 't', delta: 'It is 21°C in Oslo.' },
          { type: 'finish', usage: USAGE, finishReason: { unified: 'stop', raw: 'stop' } },
        ]),
      ] as AnyOptions,
    });
    const chain = createChain({ model: fromAiSdk(mock), tools: [weather] });
    const events: string[] = [];
    let answer: unknown;
    for await (const event of chain.stream('Weather in Oslo?')) {
      events.push(event.type === 'text-delta' ? `text:${event.delta}` : event.type);
      if (event.type === 'final') answer = event.result?.result;
    }
    expect(answer).toBe('It is 21°C in Oslo.');
    expect(events).toContain('tool-call');
    expect(events).toContain('tool-result');
    expect(events).toContain('text:It is 21°C in Oslo.');
    const second = mock.doStreamCalls[1] as AnyOptions;
    expect(second.prompt.at(-1)).toEqual({
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'weather',
          output: { type: 'text', value: 'Oslo: 21°C' },
        },
      ],
    });
  });
});

/** A model whose `doGenerate` and `doStream` both fail with `error`. */
function failing(error: unknown) {
  return new MockLanguageModelV4({
    doGenerate: async () => {
      throw error;
    },
    doStream: async () => {
      throw error;
    },
  });
}

const ask: ModelRequest = { messages: Transcript.from([userMessage('Hello?')]) };

async function failureOf(work: Promise<unknown>): Promise<ModelError> {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(ModelError.isInstance(error), String(error)).toBe(true);
  return error as ModelError;
}

function apiError(statusCode: number, isRetryable?: boolean) {
  return new APICallError({
    message: `status ${statusCode}`,
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode,
    ...(isRetryable !== undefined && { isRetryable }),
  });
}

describe('fromAiSdk errors', () => {
  it('maps APICallError to ModelError, retryable as the provider says', async () => {
    for (const [status, retryable] of [
      [429, true],
      [500, true],
      [529, true],
      [400, false],
      [401, false],
    ] as const) {
      for (const call of ['generate', 'stream'] as const) {
        const model = fromAiSdk(failing(apiError(status)));
        const error = await failureOf(
          call === 'generate' ? model.generate(ask) : collectStream(model.stream(ask)),
        );
        expect([call, error.status, error.retryable]).toEqual([call, status, retryable]);
        expect(error.message).toMatch(new RegExp(`AI SDK \\(mock-provider\\) API error ${status}`));
      }
    }
    // The provider's own decision wins over the status.
    const overridden = await failureOf(fromAiSdk(failing(apiError(400, true))).generate(ask));
    expect(overridden.retryable).toBe(true);
  });

  it('recognises an AI SDK error from another copy of the package by its marker', async () => {
    // What a second copy of @ai-sdk/provider throws: not this copy's class, same markers.
    const foreign = Object.assign(new Error('Too many requests'), {
      name: 'AI_APICallError',
      statusCode: 429,
      isRetryable: true,
      [Symbol.for('vercel.ai.error')]: true,
      [Symbol.for('vercel.ai.error.AI_APICallError')]: true,
    });
    expect(foreign instanceof APICallError).toBe(false);
    const error = await failureOf(fromAiSdk(failing(foreign)).generate(ask));
    expect([error.status, error.retryable]).toEqual([429, true]);
  });

  it('turns a stream error part into the same error, and stops there', async () => {
    const model = fromAiSdk(
      new MockLanguageModelV4({
        doStream: streamOf([
          { type: 'text-delta', id: 't', delta: 'Hi' },
          { type: 'error', error: apiError(503) },
          { type: 'finish', usage: USAGE, finishReason: { unified: 'error', raw: undefined } },
        ]) as AnyOptions,
      }),
    );
    const parts: StreamPart[] = [];
    const error = await failureOf(
      (async () => {
        for await (const part of model.stream(ask)) parts.push(part);
      })(),
    );
    expect(parts).toEqual([{ type: 'text-delta', delta: 'Hi' }]);
    expect([error.status, error.retryable]).toEqual([503, true]);

    // A provider's raw error object (openai-compatible passes the JSON on as it came).
    const raw = fromAiSdk(
      new MockLanguageModelV4({
        doStream: streamOf([
          { type: 'error', error: { error: { message: 'overloaded', type: 'server_error' } } },
        ]) as AnyOptions,
      }),
    );
    const rawError = await failureOf(collectStream(raw.stream(ask)));
    expect(rawError.message).toMatch(/stream error: .*overloaded/);
    expect(rawError.retryable).toBe(true);
  });

  it('rejects a stream that ends before its finish part', async () => {
    const model = fromAiSdk(
      new MockLanguageModelV4({
        doStream: streamOf([{ type: 'text-delta', id: 't', delta: 'Hi' }]) as AnyOptions,
      }),
    );
    const error = await failureOf(collectStream(model.stream(ask)));
    expect(error.message).toMatch(/ended before it said it had finished/);
    expect(error.retryable).toBe(true);
  });

  it('rejects with AbortError when the signal aborts, mid-stream or before', async () => {
    let cancelled = false;
    const model = fromAiSdk(
      new MockLanguageModelV4({
        doStream: async () => ({
          stream: new ReadableStream({
            start(controller) {
              controller.enqueue({ type: 'text-delta', id: 't', delta: 'Hi' });
            },
            cancel() {
              cancelled = true;
            },
          }),
        }),
      }),
    );
    const controller = new AbortController();
    const seen: StreamPart[] = [];
    const error = await (async () => {
      for await (const part of model.stream(ask, { signal: controller.signal })) {
        seen.push(part);
        controller.abort();
      }
    })().catch((e: unknown) => e);
    expect(AbortError.isInstance(error), String(error)).toBe(true);
    expect(seen).toHaveLength(1);
    expect(cancelled).toBe(true);

    const before = new AbortController();
    before.abort();
    const generate = fromAiSdk(failing(new Error('never called')));
    await expect(generate.generate(ask, { signal: before.signal })).rejects.toSatisfy(
      (e: unknown) => AbortError.isInstance(e),
    );
  });

  it('bounds a stream that stops sending (idleTimeoutMs) and a generate that never answers (timeoutMs)', async () => {
    const silent = new MockLanguageModelV4({
      doStream: async () => ({ stream: new ReadableStream({ start() {} }) }),
      doGenerate: () => new Promise(() => {}),
    });
    const idle = await failureOf(
      collectStream(fromAiSdk(silent, { idleTimeoutMs: 50 }).stream(ask)),
    );
    expect(idle.message).toMatch(/idle for 50 ms/);
    expect(idle.retryable).toBe(true);
    const slow = await failureOf(fromAiSdk(silent, { timeoutMs: 50 }).generate(ask));
    expect(slow.message).toMatch(/no answer within 50 ms \(timeoutMs\)/);
    expect(slow.retryable).toBe(true);
  });

  it('bounds a supportedUrls promise that never settles by timeoutMs and by the signal', async () => {
    let calls = 0;
    const hung = {
      specificationVersion: 'v4' as const,
      provider: 'hung.chat',
      modelId: 'hung-1',
      supportedUrls: new Promise<never>(() => {}),
      doGenerate: async () => {
        calls++;
        return generateResult([{ type: 'text', text: 'ok' }]);
      },
      doStream: async () => {
        calls++;
        return streamOf([]);
      },
    } as never;
    const model = fromAiSdk(hung, { timeoutMs: 100 });
    for (const call of [() => model.generate(ask), () => collectStream(model.stream(ask))]) {
      const error = await failureOf(call());
      expect(error.message).toBe(
        'AI SDK (hung.chat): the model’s supportedUrls did not settle within 100 ms (timeoutMs), so the call was aborted',
      );
      expect(error.retryable).toBe(true);
    }
    const patient = fromAiSdk(hung, { timeoutMs: 600_000 });
    for (const call of [
      (signal: AbortSignal) => patient.generate(ask, { signal }),
      (signal: AbortSignal) => collectStream(patient.stream(ask, { signal })),
    ]) {
      const controller = new AbortController();
      const pending = call(controller.signal);
      setTimeout(() => controller.abort(), 20);
      await expect(pending).rejects.toBeInstanceOf(AbortError);
    }
    expect(calls).toBe(0);
  }, 20_000);
});

describe('fromAiSdk attachment URLs', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  /**
   * A local server: /chart.png answers the PNG, /missing.png 404, /huge.png announces 50 MB
   * and sends nothing, /endless.png sends chunks until the client hangs up, /slow.png never.
   */
  async function files(): Promise<string> {
    server = createServer((req, res) => {
      if (req.url === '/chart.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      else if (req.url === '/missing.png') res.writeHead(404).end();
      else if (req.url === '/huge.png') {
        res.writeHead(200, { 'content-length': '50000000' }).flushHeaders();
      } else if (req.url === '/endless.png') {
        const chunk = Buffer.alloc(16_384, 7);
        const more = () => {
          while (!res.destroyed && res.write(chunk)) {}
        };
        res.on('drain', more);
        res.writeHead(200);
        more();
      } else res.writeHead(200).flushHeaders();
    });
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  const withImage = (url: string): ModelRequest => ({
    messages: Transcript.from([userMessage('Look', [attachment({ url })])]),
  });

  it('downloads a URL the model does not list in supportedUrls, and passes one it does', async () => {
    const at = await files();
    const mock = new MockLanguageModelV4({
      supportedUrls: {},
      doGenerate: generateResult([{ type: 'text', text: 'ok' }]) as AnyOptions,
    });
    await fromAiSdk(mock).generate(withImage(`${at}/chart.png`));
    expect((mock.doGenerateCalls[0] as AnyOptions).prompt[0].content[1]).toEqual({
      type: 'file',
      mediaType: 'image/png',
      data: { type: 'data', data: PNG_BASE64 },
    });

    const takesUrls = new MockLanguageModelV4({
      supportedUrls: { 'image/*': [/^http:\/\/127\.0\.0\.1:\d+\//] },
      doGenerate: generateResult([{ type: 'text', text: 'ok' }]) as AnyOptions,
    });
    await fromAiSdk(takesUrls).generate(withImage(`${at}/chart.png`));
    expect((takesUrls.doGenerateCalls[0] as AnyOptions).prompt[0].content[1].data).toEqual({
      type: 'url',
      url: new URL(`${at}/chart.png`),
    });
  });

  it('fails clearly, and in bounded time, when a URL cannot be downloaded', async () => {
    const at = await files();
    const mock = new MockLanguageModelV4({ doGenerate: generateResult([]) as AnyOptions });
    const missing = await failureOf(fromAiSdk(mock).generate(withImage(`${at}/missing.png`)));
    expect(missing.message).toMatch(
      /Could not download the attachment http:\/\/127\.0\.0\.1:\d+\/missing\.png \(image\/png\), which AI SDK \(mock-provider\) does not take as a URL: HTTP 404/,
    );
    expect(missing.retryable).toBe(false);
    const slow = await failureOf(
      fromAiSdk(mock, { downloadTimeoutMs: 100 }).generate(withImage(`${at}/slow.png`)),
    );
    expect(slow.message).toMatch(/within 100 ms \(downloadTimeoutMs\)/);
    expect(slow.retryable).toBe(true);
    expect(mock.doGenerateCalls).toHaveLength(0);
  });

  it('refuses a download over maxDownloadBytes, by its content-length or while reading it', async () => {
    const at = await files();
    const mock = new MockLanguageModelV4({
      supportedUrls: {},
      doGenerate: generateResult([{ type: 'text', text: 'ok' }]) as AnyOptions,
    });
    // Long enough that only the size bound can end these downloads in a test's time.
    const model = fromAiSdk(mock, { maxDownloadBytes: 100_000, downloadTimeoutMs: 600_000 });
    const huge = await failureOf(model.generate(withImage(`${at}/huge.png`)));
    expect(huge.message).toMatch(
      /Could not download the attachment http:\/\/127\.0\.0\.1:\d+\/huge\.png \(image\/png\), which AI SDK \(mock-provider\) does not take as a URL: it is 50000000 bytes \(content-length\), more than maxDownloadBytes \(100000\)$/,
    );
    expect(huge.retryable).toBe(false);
    const endless = await failureOf(model.generate(withImage(`${at}/endless.png`)));
    expect(endless.message).toMatch(
      /attachment http:\/\/127\.0\.0\.1:\d+\/endless\.png .*: it is more than maxDownloadBytes \(100000\)$/,
    );
    expect(endless.retryable).toBe(false);
    expect(mock.doGenerateCalls).toHaveLength(0);

    // Exactly the limit is allowed.
    await fromAiSdk(mock, { maxDownloadBytes: PNG.length }).generate(withImage(`${at}/chart.png`));
    expect((mock.doGenerateCalls[0] as AnyOptions).prompt[0].content[1].data).toEqual({
      type: 'data',
      data: PNG_BASE64,
    });
    expect(() => fromAiSdk(mock, { maxDownloadBytes: 0 })).toThrow(/maxDownloadBytes/);
  }, 30_000);
});

describe('fromAiSdk options', () => {
  it('refuses what is not an AI SDK model of v3 or v4, and bad options, naming them', () => {
    expect(() => fromAiSdk({} as never)).toThrow(ConfigError);
    expect(() => fromAiSdk({} as never)).toThrow(/`model`: must be an AI SDK language model/);
    const v2 = { ...new MockLanguageModelV4(), specificationVersion: 'v2' };
    expect(() => fromAiSdk(v2 as never)).toThrow(/specification v2; fromAiSdk takes v3/);
    expect(() => fromAiSdk(new MockLanguageModelV4(), { idleTimeoutMs: -1 })).toThrow(
      /idleTimeoutMs/,
    );
    expect(() => fromAiSdk(new MockLanguageModelV4(), { idleTimout: 5 } as never)).toThrow(
      /is not an option of fromAiSdk; did you mean `idleTimeoutMs`\?/,
    );
    // Every problem at once.
    const all = (() => {
      try {
        fromAiSdk(new MockLanguageModelV4(), {
          timeoutMs: 0,
          providerOptions: [],
          headers: { a: 1 },
        } as never);
      } catch (error) {
        return error as ConfigError;
      }
    })();
    expect(all?.problems.map((p) => p.option)).toEqual(['timeoutMs', 'providerOptions', 'headers']);
  });

  it('sends no empty text beside files, and counts a bad token count as 0', async () => {
    const mock = new MockLanguageModelV4({
      doGenerate: {
        ...generateResult([{ type: 'text', text: 'ok' }]),
        usage: { inputTokens: { total: Number.NaN }, outputTokens: { total: -3, reasoning: 2 } },
      } as AnyOptions,
    });
    const response = await fromAiSdk(mock).generate({
      messages: Transcript.from([userMessage('', [attachment({ data: PNG })])]),
    });
    expect((mock.doGenerateCalls[0] as AnyOptions).prompt[0].content).toEqual([
      { type: 'file', mediaType: 'image/png', data: { type: 'data', data: PNG_BASE64 } },
    ]);
    expect(response.usage).toEqual({
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0,
      reasoningTokens: 2,
    });
  });

  it('hands the provider’s warnings to onWarnings, generated or streamed', async () => {
    const ignored = { type: 'unsupported', feature: 'temperature', details: 'thinking is on' };
    const mock = new MockLanguageModelV4({
      provider: 'mock.chat',
      modelId: 'm1',
      doGenerate: {
        ...generateResult([{ type: 'text', text: 'ok' }]),
        warnings: [ignored],
      } as AnyOptions,
      doStream: streamOf([
        { type: 'stream-start', warnings: [ignored] },
        { type: 'text-delta', id: 't', delta: 'ok' },
        { type: 'finish', usage: USAGE, finishReason: { unified: 'stop', raw: 'stop' } },
      ]) as AnyOptions,
    });
    const seen: unknown[] = [];
    const model = fromAiSdk(mock, {
      onWarnings: (warnings, from) => {
        seen.push([warnings, from]);
        throw new Error('a failing callback does not fail the call');
      },
    });
    await model.generate(ask);
    await collectStream(model.stream(ask));
    const call = [[ignored], { provider: 'mock.chat', modelId: 'm1' }];
    expect(seen).toEqual([call, call]);
  });

  it('merges its providerOptions under a request’s, key by key', async () => {
    const mock = new MockLanguageModelV4({ doGenerate: generateResult([]) as AnyOptions });
    const model = fromAiSdk(mock, {
      providerOptions: { anthropic: { a: 1, b: 1 }, other: { c: 1 } },
    });
    await model.generate({ ...ask, providerOptions: { anthropic: { b: 2 } } });
    expect((mock.doGenerateCalls[0] as AnyOptions).providerOptions).toEqual({
      anthropic: { a: 1, b: 2 },
      other: { c: 1 },
    });
  });

  it('runs a chain whose tool returns an image, which reaches the model with the result', async () => {
    const chart = defineTool({
      name: 'chart',
      description: 'Draws a chart',
      input: z.object({}),
      execute: async () => toolOutput('drawn', [attachment({ data: PNG, name: 'chart.png' })]),
    });
    const mock = new MockLanguageModelV3({
      doGenerate: [
        generateResult(
          [{ type: 'tool-call', toolCallId: 'c1', toolName: 'chart', input: '{}' }],
          'tool-calls',
        ),
        generateResult([{ type: 'text', text: 'A rising line.' }]),
      ] as AnyOptions,
    });
    const result = await createChain({ model: fromAiSdk(mock), tools: [chart] }).invoke('Chart?');
    expect(result.status === 'succeeded' && result.result).toBe('A rising line.');
    const toolMessage = (mock.doGenerateCalls[1] as AnyOptions).prompt.at(-1);
    expect(toolMessage.content[0].output).toEqual({
      type: 'content',
      value: [
        { type: 'text', text: 'drawn' },
        { type: 'image-data', mediaType: 'image/png', data: PNG_BASE64 },
      ],
    });
  });
});
