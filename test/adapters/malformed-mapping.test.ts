import { ModelError } from 'statecraft';
import { AnthropicStreamMapper, fromAnthropicMessage, mapUsage } from 'statecraft/anthropic';
import { GeminiStreamMapper, geminiResponse, geminiUsage } from 'statecraft/gemini';
import { describe, expect, it } from 'vitest';
import { chatResponse } from '../../adapters/models/openai/chat-response.js';
import { ChatStreamMapper } from '../../adapters/models/openai/chat-stream.js';
import { responsesResponse } from '../../adapters/models/openai/responses-response.js';
import { ResponsesStreamMapper } from '../../adapters/models/openai/responses-stream.js';
import { chatUsage } from '../../adapters/models/openai/usage.js';

// The pure mapping functions check what they are given (SPEC Q3): a malformed answer is a
// ModelError saying what is missing, retryable only when another try can help, never an
// empty answer or a crash further on. A missing usage is zero.

function errorOf(map: () => unknown): ModelError {
  try {
    map();
  } catch (error) {
    if (ModelError.isInstance(error)) return error as ModelError;
    throw error;
  }
  throw new Error('expected a ModelError');
}

const ZERO = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
const anyInput = <T>(value: unknown) => value as T;

describe('OpenAI Chat mapping of malformed completions', () => {
  it.each([
    [{ id: 'c', model: 'm' }, /no `choices`/, false],
    [{ id: 'c', choices: [] }, /no `choices`/, false],
    [{ choices: [{ index: 0 }] }, /first choice has no `message`/, false],
    [
      { choices: [{ message: { content: { text: 'x' } } }] },
      /`message.content` is an object/,
      false,
    ],
    [
      { choices: [{ message: { content: null, tool_calls: 'f' } }] },
      /tool_calls` is not a list/,
      false,
    ],
    ['<html>', /not an object/, true],
  ])('refuses %j', (completion, message, retryable) => {
    const error = errorOf(() => chatResponse(anyInput(completion)));
    expect(error.message).toMatch(message);
    expect(error.retryable).toBe(retryable);
  });

  it('reads an error object answered with 200 as that error', () => {
    const error = errorOf(() =>
      chatResponse(anyInput({ error: { code: 'server_error', message: 'busy' } })),
    );
    expect(error).toMatchObject({ message: expect.stringMatching(/busy/), retryable: true });
  });

  it('counts a missing or garbled usage as zero', () => {
    const completion = { choices: [{ message: { content: 'Hi' }, finish_reason: 'stop' }] };
    expect(chatResponse(anyInput(completion)).usage).toEqual(ZERO);
    expect(chatUsage(anyInput({ prompt_tokens: '12', completion_tokens: -3 }))).toEqual(ZERO);
  });

  it('refuses a stream chunk of another shape, retryable', () => {
    const mapper = new ChatStreamMapper();
    expect(errorOf(() => mapper.push(anyInput('garbage')))).toMatchObject({ retryable: true });
    expect(errorOf(() => mapper.push(anyInput({ choices: 'x' })))).toMatchObject({
      retryable: true,
    });
  });
});

describe('OpenAI Responses mapping of malformed responses', () => {
  it('refuses a response without an `output` list, and one that is not an object', () => {
    expect(
      errorOf(() => responsesResponse(anyInput({ id: 'r', status: 'completed' }))),
    ).toMatchObject({
      message: expect.stringMatching(/no `output` list/),
      retryable: false,
    });
    expect(errorOf(() => responsesResponse(anyInput(null)))).toMatchObject({ retryable: true });
  });

  it('refuses a completed event without its response, retryable', () => {
    const error = errorOf(() =>
      new ResponsesStreamMapper().push(anyInput({ type: 'response.completed' })),
    );
    expect(error).toMatchObject({
      message: expect.stringMatching(/without its response/),
      retryable: true,
    });
  });
});

describe('Anthropic mapping of malformed messages', () => {
  it.each([
    [{ id: 'm', type: 'message' }, /no `content` list/, false],
    [{ type: 'message', content: ['text'] }, /block is not an object/, false],
    [[], /not an object/, true],
    [
      { type: 'error', error: { type: 'overloaded_error', message: 'busy' } },
      /overloaded_error/,
      true,
    ],
  ])('refuses %j', (message, text, retryable) => {
    const error = errorOf(() => fromAnthropicMessage(anyInput(message)));
    expect(error.message).toMatch(text);
    expect(error.retryable).toBe(retryable);
  });

  it('counts a missing or garbled usage as zero', () => {
    const message = {
      type: 'message',
      content: [{ type: 'text', text: 'Hi' }],
      stop_reason: 'end_turn',
    };
    expect(fromAnthropicMessage(anyInput(message)).usage).toEqual(ZERO);
    expect(mapUsage(anyInput({ input_tokens: null, output_tokens: 'many' }))).toEqual(ZERO);
  });

  it('refuses a stream event without the object its type carries, retryable', () => {
    const error = errorOf(() =>
      new AnthropicStreamMapper().push(anyInput({ type: 'content_block_delta', index: 0 })),
    );
    expect(error).toMatchObject({
      message: expect.stringMatching(/without its `delta`/),
      retryable: true,
    });
  });
});

describe('Gemini mapping of malformed responses', () => {
  it.each([
    [{ modelVersion: 'm' }, /no `candidates`/, false],
    [{ candidates: [] }, /no `candidates`/, false],
    [{ candidates: ['x'] }, /first candidate is not an object/, false],
    [{ candidates: [{ content: { parts: 'Hi' } }] }, /`content.parts` is not a list/, false],
    ['<html>', /not an object/, true],
  ])('refuses %j', (raw, message, retryable) => {
    const error = errorOf(() => geminiResponse(anyInput(raw)));
    expect(error.message).toMatch(message);
    expect(error.retryable).toBe(retryable);
  });

  it('still answers a blocked prompt, which has no candidates', () => {
    const { response } = geminiResponse(anyInput({ promptFeedback: { blockReason: 'SAFETY' } }));
    expect(response.finishReason.unified).toBe('content-filter');
    expect(response.usage).toEqual(ZERO);
  });

  it('counts a garbled usage as zero, and refuses a chunk of another shape', () => {
    expect(
      geminiUsage(anyInput({ promptTokenCount: 'x', candidatesTokenCount: Number.NaN })),
    ).toEqual(ZERO);
    expect(
      errorOf(() => new GeminiStreamMapper().push(anyInput({ candidates: 'x' }))),
    ).toMatchObject({
      retryable: true,
    });
  });
});
