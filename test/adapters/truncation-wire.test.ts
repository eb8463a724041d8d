// SPEC P1: a truncated assistant message keeps only its partial text in the transcript, and
// every provider is told it was cut off: the assistant text on the wire ends with the seed's
// marker. Each adapter runs its real SDK against the local replay server on 127.0.0.1, which
// records the request body; nothing leaves the machine.

import { userMessage } from 'statecraft';
import { AnthropicModel } from 'statecraft/anthropic';
import { mutate, reduceTurnContext } from 'statecraft/compile';
import { GeminiModel } from 'statecraft/gemini';
import type { ModelRequest } from 'statecraft/model';
import { OpenAIChatModel, OpenAIResponsesModel } from 'statecraft/openai';
import { afterEach, describe, expect, it } from 'vitest';
import { jsonFixture, type ReplayServer, startReplayServer } from '../support/replay-server.js';

const REASON = 'the user pressed stop';
const WITH_REASON = `Roses are red, violets<Truncated due to cancel from user. Reason: ${REASON}>`;
const WITHOUT_REASON = 'Sugar is<Truncated due to cancel from user.>';

/** Two cut-off answers, one with a reason and one without, each followed by the user. */
function truncatedTranscript() {
  return reduceTurnContext(
    [userMessage('Write a poem.')],
    [
      mutate.assistantTruncated('Roses are red, violets', REASON),
      mutate.userMessage('Go on, another one.'),
      mutate.assistantTruncated('Sugar is'),
      mutate.userMessage('Finish it.'),
    ],
  ).transcript;
}

let server: ReplayServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// biome-ignore lint/suspicious/noExplicitAny: each provider's body differs; each test reads its own fields.
type WireBody = any;

/** Sends the truncated transcript through `model` and returns the request body it sent. */
async function sentBody(
  provider: string,
  fixture: string,
  model: (url: string) => { generate(request: ModelRequest): Promise<unknown> },
): Promise<WireBody> {
  server = await startReplayServer([{ json: jsonFixture(provider, fixture) }]);
  const transcript = truncatedTranscript();
  await model(server.url).generate({ messages: transcript });
  // The transcript itself is not touched: only the request carries the marker.
  expect(transcript.at(1)).toMatchObject({ content: 'Roses are red, violets', truncated: true });
  expect(transcript.at(3)).toMatchObject({ content: 'Sugar is', truncated: true });
  return server.requests[0]?.body;
}

describe('a truncated assistant message on the wire ends with the truncation marker', () => {
  it('OpenAI Chat Completions', async () => {
    const body = await sentBody('openai', 'chat-text.json', (url) => {
      return new OpenAIChatModel({
        model: 'gpt-4.1-mini',
        apiKey: 'sk-test',
        baseURL: `${url}/v1`,
      });
    });
    const assistant = body.messages.filter((m: { role: string }) => m.role === 'assistant');
    expect(assistant.map((m: { content: string }) => m.content)).toEqual([
      WITH_REASON,
      WITHOUT_REASON,
    ]);
  });

  it('OpenAI Responses', async () => {
    const body = await sentBody('openai', 'responses-text.json', (url) => {
      return new OpenAIResponsesModel({
        model: 'gpt-4.1-mini',
        apiKey: 'sk-test',
        baseURL: `${url}/v1`,
      });
    });
    const assistant = body.input.filter((item: { role?: string }) => item.role === 'assistant');
    expect(assistant.map((item: { content: string }) => item.content)).toEqual([
      WITH_REASON,
      WITHOUT_REASON,
    ]);
  });

  it('Anthropic Messages', async () => {
    const body = await sentBody('anthropic', 'message-text.json', (url) => {
      return new AnthropicModel({
        model: 'claude-sonnet-5-5',
        apiKey: 'sk-ant-test',
        baseURL: url,
      });
    });
    const assistant = body.messages.filter((m: { role: string }) => m.role === 'assistant');
    expect(assistant.map((m: { content: { text: string }[] }) => m.content)).toEqual([
      [{ type: 'text', text: WITH_REASON }],
      [{ type: 'text', text: WITHOUT_REASON }],
    ]);
  });

  it('Gemini', async () => {
    const body = await sentBody('gemini', 'generate-text.json', (url) => {
      return new GeminiModel({ model: 'gemini-2.5-flash', apiKey: 'test-key', baseUrl: url });
    });
    const model = body.contents.filter((c: { role: string }) => c.role === 'model');
    expect(model.map((c: { parts: unknown[] }) => c.parts)).toEqual([
      [{ text: WITH_REASON }],
      [{ text: WITHOUT_REASON }],
    ]);
  });
});
