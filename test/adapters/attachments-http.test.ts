// Attachments through each real SDK (openai, @anthropic-ai/sdk, @google/genai) over HTTP,
// against the local replay server on 127.0.0.1: a chain run whose input is
// `userMessage(text, [attachment(...)])` and whose tool returns `toolOutput(...)`, generated and
// streamed. The recorded request bodies must carry both images where each provider reads them.
import {
  attachment,
  createChain,
  defineTool,
  InputError,
  ModelError,
  Transcript,
  toolOutput,
  userMessage,
} from 'statecraft';
import { AnthropicModel } from 'statecraft/anthropic';
import { GeminiModel } from 'statecraft/gemini';
import { collectStream, type LanguageModel } from 'statecraft/model';
import { OpenAIChatModel, OpenAIResponsesModel } from 'statecraft/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  fixture,
  jsonFixture,
  type ReplayResponse,
  type ReplayServer,
  ssePieces,
  startReplayServer,
} from '../support/replay-server.js';

// The user's photo (JPEG, read from its first bytes) and the map the tool draws (a 1×1 PNG).
const PHOTO_DATA = '/9j/4AAQSkZJRgABAQ==';
const MAP_DATA =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';
const PHOTO_URL = `data:image/jpeg;base64,${PHOTO_DATA}`;
const MAP_URL = `data:image/png;base64,${MAP_DATA}`;

// Every recorded fixture calls get_weather; this one answers with a map besides the numbers.
const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather for a city, with a map.',
  input: z.object({ city: z.string(), unit: z.string().optional() }),
  execute: ({ city }) =>
    toolOutput({ city, tempC: 18 }, [attachment({ data: MAP_DATA, name: 'map.png' })]),
});

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(responses: ReplayResponse[]): Promise<ReplayServer> {
  server = await startReplayServer(responses);
  return server;
}

const json = (provider: string, name: string): ReplayResponse => ({
  json: jsonFixture(provider, name),
});
const sse = (provider: string, name: string): ReplayResponse => ({
  sse: ssePieces(fixture(provider, name), 31),
});

type Mode = 'generate' | 'stream';

/** The chain run with a photo in its input, generated or streamed; its status. */
async function run(model: LanguageModel, mode: Mode): Promise<string> {
  const chain = createChain({ model, tools: [getWeather] });
  const input = {
    messages: [
      userMessage('What is the weather where I took this?', [attachment({ data: PHOTO_DATA })]),
    ],
  };
  if (mode === 'generate') return (await chain.invoke(input)).status;
  let status = 'none';
  for await (const event of chain.stream(input)) {
    if (event.type === 'final') status = event.output.status;
  }
  return status;
}

// biome-ignore lint/suspicious/noExplicitAny: wire bodies are checked field by field below.
const bodyOf = (at: ReplayServer, index: number): any => at.requests[index]?.body;

describe.each<Mode>(['generate', 'stream'])('attachments over HTTP (%s)', (mode) => {
  it('OpenAI Chat: the photo as image_url, the map in a user message after the tool messages', async () => {
    const at = await serve(
      mode === 'generate'
        ? [json('openai', 'chat-tool-calls.json'), json('openai', 'chat-text.json')]
        : [sse('openai', 'chat-tool-calls.sse'), sse('openai', 'chat-text.sse')],
    );
    const model = new OpenAIChatModel({
      model: 'gpt-4.1-mini',
      apiKey: 'sk-test',
      baseURL: `${at.url}/v1`,
    });
    expect(await run(model, mode)).toBe('succeeded');

    const photo = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is the weather where I took this?' },
        { type: 'image_url', image_url: { url: PHOTO_URL } },
      ],
    };
    // The chain's system prompt leads; Chat Completions sends it as a message.
    const withoutSystem = (index: number) =>
      bodyOf(at, index).messages.filter((m: { role: string }) => m.role !== 'system');
    expect(withoutSystem(0)).toEqual([photo]);
    const second = withoutSystem(1);
    // The two tool messages, then one user message holding both maps, labelled by call.
    expect(second.map((m: { role: string }) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'user',
    ]);
    expect(second[0]).toEqual(photo);
    const calls = second.slice(2, 4).map((m: { tool_call_id: string }) => m.tool_call_id);
    expect(second[4]).toEqual({
      role: 'user',
      content: calls.flatMap((id: string) => [
        {
          type: 'text',
          text: `Attachments returned by the tool call get_weather (id ${id}), 1 item:`,
        },
        { type: 'image_url', image_url: { url: MAP_URL } },
      ]),
    });
  });

  it('OpenAI Responses: input_image in the user message and inside function_call_output', async () => {
    const at = await serve(
      mode === 'generate'
        ? [json('openai', 'responses-tool-calls.json'), json('openai', 'responses-text.json')]
        : [sse('openai', 'responses-tool-calls.sse'), sse('openai', 'responses-text.sse')],
    );
    const model = new OpenAIResponsesModel({
      model: 'gpt-4.1-mini',
      apiKey: 'sk-test',
      baseURL: `${at.url}/v1`,
    });
    expect(await run(model, mode)).toBe('succeeded');

    const photo = {
      type: 'message',
      role: 'user',
      content: [
        { type: 'input_text', text: 'What is the weather where I took this?' },
        { type: 'input_image', image_url: PHOTO_URL, detail: 'auto' },
      ],
    };
    expect(bodyOf(at, 0).input).toEqual([photo]);
    const input = bodyOf(at, 1).input;
    expect(input[0]).toEqual(photo);
    const outputs = input.filter((item: { type: string }) => item.type === 'function_call_output');
    expect(outputs.length).toBeGreaterThan(0);
    for (const item of outputs) {
      expect(item.output).toEqual([
        { type: 'input_text', text: expect.stringContaining('"tempC":18') },
        { type: 'input_image', image_url: MAP_URL, detail: 'auto' },
      ]);
    }
  });

  it('Anthropic: image blocks in the user message and inside tool_result', async () => {
    const at = await serve(
      mode === 'generate'
        ? [json('anthropic', 'message-one-tool.json'), json('anthropic', 'message-text.json')]
        : [sse('anthropic', 'stream-tool-split.sse'), sse('anthropic', 'stream-answer.sse')],
    );
    const model = new AnthropicModel({
      model: 'claude-sonnet-5-5',
      apiKey: 'sk-ant-test',
      baseURL: at.url,
    });
    expect(await run(model, mode)).toBe('succeeded');

    const photo = {
      role: 'user',
      content: [
        { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: PHOTO_DATA } },
        { type: 'text', text: 'What is the weather where I took this?' },
      ],
    };
    expect(bodyOf(at, 0).messages).toEqual([photo]);
    const messages = bodyOf(at, 1).messages;
    expect(messages[0]).toEqual(photo);
    const results = messages[2].content;
    expect(results.length).toBeGreaterThan(0);
    for (const block of results) {
      expect(block).toEqual({
        type: 'tool_result',
        tool_use_id: expect.any(String),
        content: [
          { type: 'text', text: expect.stringContaining('"tempC":18') },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: MAP_DATA } },
        ],
      });
    }
  });

  describe.each([
    ['gemini-2.5-flash', 'after the function responses'],
    ['gemini-3-pro-preview', 'in functionResponse.parts'],
  ])('Gemini %s', (modelId, where) => {
    it(`sends the photo as inlineData, and the map ${where}`, async () => {
      const at = await serve(
        mode === 'generate'
          ? [json('gemini', 'generate-function-calls.json'), json('gemini', 'generate-text.json')]
          : [sse('gemini', 'stream-function-call.sse'), sse('gemini', 'stream-text.sse')],
      );
      const model = new GeminiModel({ model: modelId, apiKey: 'test-key', baseUrl: at.url });
      expect(await run(model, mode)).toBe('succeeded');

      const photo = {
        role: 'user',
        parts: [
          { text: 'What is the weather where I took this?' },
          { inlineData: { mimeType: 'image/jpeg', data: PHOTO_DATA } },
        ],
      };
      expect(bodyOf(at, 0).contents).toEqual([photo]);
      const contents = bodyOf(at, 1).contents;
      expect(contents[0]).toEqual(photo);
      const parts: Record<string, unknown>[] = contents[2].parts;
      const responses = parts.filter((part) => 'functionResponse' in part);
      expect(responses.length).toBeGreaterThan(0);
      const map = { inlineData: { mimeType: 'image/png', data: MAP_DATA } };
      if (modelId.startsWith('gemini-3')) {
        expect(parts).toHaveLength(responses.length);
        for (const part of responses)
          expect(part.functionResponse).toMatchObject({ name: 'get_weather', parts: [map] });
      } else {
        // Each function response, then per call a label and its map, in the same user turn.
        expect(parts.slice(responses.length)).toEqual(
          responses.flatMap(() => [
            { text: expect.stringMatching(/^Attachments returned by the tool call get_weather/) },
            map,
          ]),
        );
        for (const part of responses) expect(part.functionResponse).not.toHaveProperty('parts');
      }
    });
  });
});

describe('an attachment a provider cannot take', () => {
  it('is an InputError naming it, raised before any request; a chain run fails with it as the cause', async () => {
    const at = await serve([json('openai', 'chat-text.json')]);
    const model = new OpenAIChatModel({
      model: 'gpt-4.1-mini',
      apiKey: 'sk-test',
      baseURL: `${at.url}/v1`,
    });
    const paper = attachment({ url: 'https://example.com/paper.pdf' });
    const messages = [userMessage('Summarise this paper', [paper])];
    const problem =
      /^messages\[0\]\.attachments\[0\]: OpenAI Chat Completions cannot take application\/pdf files by URL \(https:\/\/example\.com\/paper\.pdf\); only images may be URLs\./;

    for (const call of [
      () => model.generate({ messages: Transcript.from(messages) }),
      () => collectStream(model.stream({ messages: Transcript.from(messages) })),
    ]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(InputError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(problem);
    }
    // Through a chain: the model call failed, not retryable, and the cause says why.
    const error = await createChain({ model })
      .invoke({ messages })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(ModelError.isInstance(error)).toBe(true);
    expect((error as ModelError).retryable).toBe(false);
    expect(InputError.isInstance((error as ModelError).cause)).toBe(true);
    expect((error as Error).message).toMatch(problem);
    expect(at.requests).toHaveLength(0);
  });

  it('Anthropic: audio is an InputError before any request, generated or streamed', async () => {
    const at = await serve([json('anthropic', 'message-text.json')]);
    const model = new AnthropicModel({ model: 'claude-sonnet-5-5', apiKey: 'k', baseURL: at.url });
    const voice = attachment({ data: 'UklGRiQAAABXQVZF', mediaType: 'audio/wav' });
    const request = { messages: Transcript.from([userMessage('Listen', [voice])]) };
    for (const call of [
      () => model.generate(request),
      () => collectStream(model.stream(request)),
    ]) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(InputError.isInstance(error)).toBe(true);
      expect((error as Error).message).toMatch(/Anthropic cannot take audio\/wav attachments/);
    }
    expect(at.requests).toHaveLength(0);
  });
});
