import { ModelError } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { checkModelResponse } from '../../src/model/check-response.js';

// checkModelResponse is the boundary check for any LanguageModel's answer (SPEC Q3). Not yet
// exported from 'statecraft': imported from its module until the runtimes use it.

const text = { type: 'text', text: 'Hi' } as const;
const call = { type: 'tool-call', toolCall: { id: 'c1', name: 'f', arguments: {} } } as const;
const usage = { inputTokens: 3, outputTokens: 2, totalTokens: 5 };
const stop = { unified: 'stop', raw: 'stop' } as const;

function problemOf(response: unknown): ModelError {
  try {
    checkModelResponse(response, "model 'mine'");
  } catch (error) {
    if (ModelError.isInstance(error)) return error as ModelError;
    throw error;
  }
  throw new Error('expected a ModelError');
}

describe('checkModelResponse', () => {
  it('returns a valid response as it is', () => {
    const response = { content: [text, call], usage, finishReason: stop, response: { id: 'r' } };
    expect(checkModelResponse(response, 'm')).toBe(response);
  });

  it.each([
    [undefined, /returned undefined/],
    [null, /returned null/],
    ['Hi', /returned the string "Hi"/],
    [[text], /returned an array/],
    [{ usage }, /`content` is undefined, not an array/],
    [{ content: 'Hi' }, /`content` is the string "Hi"/],
    [{ content: [null] }, /returned null as content\[0\]/],
    [{ content: [text, { type: 'image', url: 'x' }] }, /unknown type "image" as content\[1\]/],
    [
      { content: [{ type: 'text', text: 42 }] },
      /text part \(content\[0\]\) whose `text` is the number 42/,
    ],
    [{ content: [{ type: 'tool-call' }] }, /without a `toolCall` object/],
    [
      { content: [{ type: 'tool-call', toolCall: { id: 'c', name: '' } }] },
      /`name` is not a non-empty string/,
    ],
    [{ content: [{ type: 'tool-call', toolCall: { id: 7, name: 'f' } }] }, /`id` is not a string/],
  ])('refuses %j, naming what is wrong, not retryable', (response, message) => {
    const error = problemOf(response);
    expect(error.message).toMatch(/^model 'mine' /);
    expect(error.message).toMatch(message);
    expect(error.retryable).toBe(false);
  });

  it('keeps a tool call without an id (the runtime gives it one, SPEC A1)', () => {
    const noId = { type: 'tool-call', toolCall: { name: 'f', arguments: {} } };
    expect(checkModelResponse({ content: [noId] }, 'm').content).toEqual([noId]);
  });

  it('makes tool-call arguments JSON cannot carry safe, without touching the input', () => {
    const cyclic: Record<string, unknown> = { n: 10n };
    cyclic.self = cyclic;
    const part = { type: 'tool-call', toolCall: { id: 'c', name: 'f', arguments: cyclic } };
    const checked = checkModelResponse({ content: [part] }, 'm');
    expect(checked.content[0]).toEqual({
      type: 'tool-call',
      toolCall: { id: 'c', name: 'f', arguments: { n: '10', self: '[Circular]' } },
    });
    expect(part.toolCall.arguments).toBe(cyclic);
  });

  it('fills a missing usage with zeros and a missing finish reason from the content', () => {
    expect(checkModelResponse({ content: [text] }, 'm')).toEqual({
      content: [text],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      finishReason: { unified: 'stop', raw: undefined },
    });
    expect(checkModelResponse({ content: [call] }, 'm').finishReason).toEqual({
      unified: 'tool-calls',
      raw: undefined,
    });
  });

  it('completes a partial usage: invalid counts are 0, the total is derived when missing', () => {
    const checked = checkModelResponse(
      {
        content: [],
        usage: { inputTokens: 4, outputTokens: 'x', reasoningTokens: -1 },
        finishReason: stop,
      },
      'm',
    );
    expect(checked.usage).toEqual({
      inputTokens: 4,
      outputTokens: 0,
      totalTokens: 4,
      reasoningTokens: 0,
    });
  });

  it('reads a bare reason word, and keeps an unknown one as raw under `other`', () => {
    expect(
      checkModelResponse({ content: [], usage, finishReason: 'length' }, 'm').finishReason,
    ).toEqual({
      unified: 'length',
      raw: 'length',
    });
    expect(
      checkModelResponse({ content: [], usage, finishReason: { unified: 'max_tokens' } }, 'm')
        .finishReason,
    ).toEqual({ unified: 'other', raw: 'max_tokens' });
  });

  it('never mutates its input', () => {
    const response = Object.freeze({
      content: Object.freeze([text]),
      usage: Object.freeze({ inputTokens: 1 }),
    });
    const checked = checkModelResponse(response, 'm');
    expect(checked).not.toBe(response);
    expect(response).toEqual({ content: [text], usage: { inputTokens: 1 } });
    expect(checked.usage).toEqual({ inputTokens: 1, outputTokens: 0, totalTokens: 1 });
  });
});
