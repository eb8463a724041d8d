// SPEC C5: toolResponseInstructions, a system note that goes with each step's tool results.
// Custom text: after every tool step; false: never; default: the stream note, only when a
// streaming tool opened a stream in that step.
import { createChain, defineTool, type Message, systemMessage } from 'statecraft';
import { DEFAULT_TOOL_RESPONSE_INSTRUCTIONS } from 'statecraft/compile';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { add, messagesOf, rolesOf, systemNotes } from './helpers.js';

const ticker = defineTool({
  name: 'ticker',
  description: 'Streams numbers.',
  input: z.object({}),
  execute: async function* () {
    for (let i = 1; i <= 20; i++) yield i;
  },
});

const NOTE = 'Check every tool result before you answer.';

/** The roles after the user's message, with system notes shown by their text. */
function shape(messages: readonly Message[]): string[] {
  return messages
    .slice(messages.findIndex((m) => m.role === 'user') + 1)
    .map((m) => (m.role === 'system' ? `system:${m.content}` : m.role));
}

describe('toolResponseInstructions (C5)', () => {
  it('custom text follows the tool results of every step', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { id: 'a', name: 'add', arguments: { a: 1, b: 2 } },
          { id: 'b', name: 'add', arguments: { a: 3, b: 4 } },
        ],
      },
      { toolCalls: [{ id: 'c', name: 'add', arguments: { a: 5, b: 6 } }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [add], toolResponseInstructions: NOTE }).invoke(
      'go',
    );
    expect(shape(messagesOf(model.requests[0]))).toEqual([]);
    expect(shape(messagesOf(model.requests[1]))).toEqual([
      'assistant',
      'tool',
      'tool',
      `system:${NOTE}`,
    ]);
    expect(shape(messagesOf(model.requests[2]))).toEqual([
      'assistant',
      'tool',
      'tool',
      `system:${NOTE}`,
      'assistant',
      'tool',
      `system:${NOTE}`,
    ]);
    expect(run.transcript.filter((m) => m.role === 'system' && m.content === NOTE)).toHaveLength(2);
  });

  it('false adds no note, not even for a streaming tool', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ name: 'ticker', arguments: {} }] },
      { text: 'done' },
    ]);
    await createChain({
      model,
      tools: [add, ticker],
      toolResponseInstructions: false,
    }).invoke('go');
    for (const request of model.requests) expect(systemNotes(messagesOf(request))).toEqual([]);
  });

  it('by default, notes nothing after ordinary tools', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [add] }).invoke('go');
    expect(rolesOf(messagesOf(model.requests[1]))).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(systemNotes(run.transcript)).toEqual([]);
  });

  it('by default, adds the stream note after the step that opened a stream, once', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 't', name: 'ticker', arguments: {} }] },
      { toolCalls: [{ id: 'a', name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'done' },
    ]);
    await createChain({ model, tools: [add, ticker] }).invoke('go');
    const second = messagesOf(model.requests[1]);
    expect(shape(second)).toEqual([
      'assistant',
      'tool',
      `system:${DEFAULT_TOOL_RESPONSE_INSTRUCTIONS}`,
    ]);
    expect(DEFAULT_TOOL_RESPONSE_INSTRUCTIONS).toContain('stop_stream');
    // The next step only continues the stream: no second note.
    const third = messagesOf(model.requests[2]);
    expect(
      third.filter((m) => m.role === 'system' && m.content === DEFAULT_TOOL_RESPONSE_INSTRUCTIONS),
    ).toEqual([systemMessage(DEFAULT_TOOL_RESPONSE_INSTRUCTIONS)]);
  });
});
