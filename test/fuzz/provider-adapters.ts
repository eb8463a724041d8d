import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { type LanguageModel, Transcript, userMessage } from 'statecraft';
import { fromAiSdk } from 'statecraft/ai-sdk';
import { AnthropicModel } from 'statecraft/anthropic';
import { GeminiModel } from 'statecraft/gemini';
import type { ModelRequest } from 'statecraft/model';
import { OpenAIChatModel, OpenAIResponsesModel } from 'statecraft/openai';

// Each adapter with its real SDK, pointed at a local replay server, and the few wire answers
// the provider-fault suite needs from it: a well-formed answer without usage (as JSON and as
// a stream), an answer missing what the format requires, and the first event of a stream.
// SDK retries are off: a fault must reach the caller at once, classified.

export interface ProviderUnderTest {
  readonly name: string;
  /** The model on the server at `url`, aborting answers idle for `idleTimeoutMs`. */
  make(url: string, idleTimeoutMs: number): LanguageModel;
  /** A complete, valid non-streamed answer "Hi" with no usage at all. */
  readonly answerWithoutUsage: unknown;
  /** A JSON object of the right kind, without the list the format requires. */
  readonly answerWithoutContent: unknown;
  /** What `answerWithoutContent` lacks, as the error names it. */
  readonly missing: RegExp;
  /** A complete, valid stream answering "Hi" with no usage at all. */
  readonly streamWithoutUsage: string;
  /** The first event of a stream, after which it stalls. */
  readonly streamHead: string;
  /**
   * What a non-streamed answer that stalls fails with, when not the idle timeout's words:
   * an AI SDK model reads its own body, so `fromAiSdk` bounds the call whole (`timeoutMs`).
   */
  readonly stalledAnswer?: (ms: number) => RegExp;
}

export const ask: ModelRequest = { messages: Transcript.from([userMessage('Hello?')]) };

const sse = (events: readonly unknown[], named = false) =>
  events
    .map((event) => {
      const type = (event as { type?: string }).type;
      return `${named && type ? `event: ${type}\n` : ''}data: ${JSON.stringify(event)}\n\n`;
    })
    .join('');

const chatChunk = (delta: object, finish: string | null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

/**
 * Faulty Chat Completions answers, one wire for two adapters under test: the OpenAI adapter
 * and fromAiSdk over @ai-sdk/openai-compatible.
 */
const CHAT_COMPLETIONS_FAULTS = {
  answerWithoutUsage: {
    id: 'c1',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
  },
  answerWithoutContent: { id: 'c1', object: 'chat.completion', model: 'm' },
  missing: /choices/,
  streamWithoutUsage: `${sse([chatChunk({ content: 'Hi' }, null), chatChunk({}, 'stop')])}data: [DONE]\n\n`,
  streamHead: sse([chatChunk({ role: 'assistant', content: 'H' }, null)]),
} as const;

const responseMessage = {
  type: 'message',
  id: 'msg1',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: 'Hi', annotations: [] }],
};

const anthropicStream = [
  {
    type: 'message_start',
    message: { id: 'msg1', type: 'message', role: 'assistant', model: 'm', content: [] },
  },
  { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
  { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
  { type: 'content_block_stop', index: 0 },
  { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null } },
  { type: 'message_stop' },
];

const geminiChunk = (text: string, finishReason?: string) => ({
  candidates: [
    { content: { role: 'model', parts: [{ text }] }, ...(finishReason && { finishReason }) },
  ],
  modelVersion: 'm',
});

export const PROVIDERS: readonly ProviderUnderTest[] = [
  {
    name: 'OpenAI Chat',
    make: (url, idleTimeoutMs) =>
      new OpenAIChatModel({
        model: 'm',
        apiKey: 'k',
        baseURL: `${url}/v1`,
        maxRetries: 0,
        idleTimeoutMs,
      }),
    ...CHAT_COMPLETIONS_FAULTS,
  },
  {
    name: 'OpenAI Responses',
    make: (url, idleTimeoutMs) =>
      new OpenAIResponsesModel({
        model: 'm',
        apiKey: 'k',
        baseURL: `${url}/v1`,
        maxRetries: 0,
        idleTimeoutMs,
      }),
    answerWithoutUsage: {
      id: 'r1',
      object: 'response',
      model: 'm',
      status: 'completed',
      output: [responseMessage],
    },
    answerWithoutContent: { id: 'r1', object: 'response', model: 'm', status: 'completed' },
    missing: /output/,
    streamWithoutUsage: sse(
      [
        {
          type: 'response.output_text.delta',
          item_id: 'msg1',
          output_index: 0,
          content_index: 0,
          delta: 'Hi',
          sequence_number: 1,
        },
        {
          type: 'response.completed',
          sequence_number: 2,
          response: {
            id: 'r1',
            object: 'response',
            model: 'm',
            status: 'completed',
            output: [responseMessage],
          },
        },
      ],
      true,
    ),
    streamHead: sse(
      [
        {
          type: 'response.created',
          sequence_number: 0,
          response: { id: 'r1', object: 'response', status: 'in_progress', output: [] },
        },
      ],
      true,
    ),
  },
  {
    name: 'Anthropic',
    make: (url, idleTimeoutMs) =>
      new AnthropicModel({ model: 'm', apiKey: 'k', baseURL: url, maxRetries: 0, idleTimeoutMs }),
    answerWithoutUsage: {
      id: 'msg1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [{ type: 'text', text: 'Hi' }],
      stop_reason: 'end_turn',
    },
    answerWithoutContent: { id: 'msg1', type: 'message', role: 'assistant', model: 'm' },
    missing: /content/,
    streamWithoutUsage: sse(anthropicStream, true),
    streamHead: sse(anthropicStream.slice(0, 2), true),
  },
  {
    name: 'Gemini',
    make: (url, idleTimeoutMs) =>
      new GeminiModel({ model: 'm', apiKey: 'k', baseUrl: url, retries: 0, idleTimeoutMs }),
    answerWithoutUsage: geminiChunk('Hi', 'STOP'),
    answerWithoutContent: { modelVersion: 'm', responseId: 'r1' },
    missing: /candidates/,
    streamWithoutUsage: sse([geminiChunk('H'), geminiChunk('i', 'STOP')]),
    streamHead: sse([geminiChunk('H')]),
  },
  {
    name: 'AI SDK openai-compatible',
    make: (url, idleTimeoutMs) =>
      fromAiSdk(createOpenAICompatible({ name: 'local', baseURL: `${url}/v1`, apiKey: 'k' })('m'), {
        idleTimeoutMs,
        timeoutMs: idleTimeoutMs,
      }),
    ...CHAT_COMPLETIONS_FAULTS,
    stalledAnswer: (ms) => new RegExp(`no answer within ${ms} ms \\(timeoutMs\\)`),
  },
];
