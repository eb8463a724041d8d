import { defineTool, systemMessage, Transcript, TranscriptError, userMessage } from 'statecraft';
import {
  type ContextMutation,
  compileTurn,
  type MutationLog,
  mutate,
  replayMutationLog,
} from 'statecraft/compile';
import { responseText, responseToolCalls } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { LocalToolRegistry } from 'statecraft/tools';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
  bestPractices: ['Use it for every sum, even small ones.'],
});

describe('compileTurn', () => {
  it('drives a scripted tool-calling conversation turn by turn', async () => {
    const tools = new LocalToolRegistry([add]);
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }] },
      { toolCalls: [{ id: 'c2', name: 'add', arguments: { a: 'two' } }] },
      { text: '2 + 3 = 5' },
    ]);
    const contract = { baseInstruction: 'You do arithmetic.', tools: tools.list() };
    const log: ContextMutation[][] = [];
    let transcript: Transcript = Transcript.from([userMessage('What is 2 + 3?')]);
    let pending: ContextMutation[] = [];
    for (;;) {
      const turn = compileTurn({ transcript, mutations: pending, contract });
      log.push(pending);
      transcript = turn.transcript;
      const response = await model.generate({ messages: turn.messages, tools: tools.specs() });
      const calls = responseToolCalls(response);
      pending = [mutate.assistantMessage(responseText(response), calls)];
      if (calls.length === 0) break;
      for (const call of calls) pending.push(mutate.toolResult(await tools.run(call)));
    }
    const final = compileTurn({ transcript, mutations: pending, contract });
    log.push(pending);
    model.assertComplete();

    const roles = final.transcript.toArray().map((m) => m.role);
    expect(roles).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(final.transcript.at(3)).toMatchObject({ success: true, output: 5 });
    // The invalid call became data the model could read, not an exception.
    expect(final.transcript.at(5)).toMatchObject({
      success: false,
      error: expect.stringContaining('Invalid arguments'),
    });
    // Every request carried the rendered tool blocks; the transcript kept the clean prompt.
    for (const request of model.requests) {
      expect(request.messages.first).toMatchObject({
        role: 'system',
        content: expect.stringContaining('<tool_best_practices>'),
      });
    }
    expect(final.transcript.first).toEqual(systemMessage('You do arithmetic.'));
    // The second request saw exactly the first turn's messages.
    expect(model.requests[1]?.messages.toArray().map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);

    // The log replays to the same transcript.
    const replayed = replayMutationLog([userMessage('What is 2 + 3?')], log, { contract });
    expect(replayed.transcript.toArray()).toEqual(final.transcript.toArray());
  });

  it('refuses to compile a request while tool calls are unanswered', () => {
    const call = { id: 'c1', name: 'add', arguments: { a: 1, b: 1 } };
    expect(() =>
      compileTurn({
        transcript: [userMessage('q')],
        mutations: [mutate.assistantMessage('', [call])],
      }),
    ).toThrow(
      "transcript[1]: the model cannot be called while its tool calls are unanswered: 'c1' (add)",
    );
    try {
      compileTurn({
        transcript: [userMessage('q')],
        mutations: [mutate.assistantMessage('', [call])],
      });
    } catch (error) {
      expect(TranscriptError.isInstance(error) && error.index).toBe(1);
    }
  });

  it('returns the mutations it applied and a snapshot for the next turn', () => {
    const mutations = [mutate.userMessage('hi'), mutate.experienceRemember('Be brief.')];
    const turn = compileTurn({ transcript: [systemMessage('Base.')], mutations });
    expect(turn.mutations).toBe(mutations);
    expect(turn.snapshot).toEqual({
      basePrompt: 'Base.',
      experiences: [{ id: 1, text: 'Be brief.' }],
    });
    expect(turn.systemPrompt).toBe('Base.\n\n<experiences>\n[1] Be brief.\n</experiences>');
  });

  it('replays a log turn by turn, keeping experience batches apart', () => {
    const log: MutationLog = [
      [mutate.userMessage('a'), mutate.experienceRemember('x')],
      [mutate.experienceForget(1), mutate.experienceRemember('y')],
    ];
    const { snapshot } = replayMutationLog([], log);
    // Turn 1 stored x as 1; turn 2 forgot it, and y took the id 1 again.
    expect(snapshot?.experiences).toEqual([{ id: 1, text: 'y' }]);
  });

  it('shares the previous turn: appending does not copy earlier messages', () => {
    let turn = compileTurn({ transcript: [userMessage('start')], contract: { systemPrompt: 'S' } });
    const firstUser = turn.transcript.at(1);
    for (let i = 0; i < 50; i++) {
      turn = compileTurn({
        transcript: turn.transcript,
        mutations: [mutate.assistantMessage(`a${i}`), mutate.userMessage(`u${i}`)],
        contract: { systemPrompt: 'S' },
      });
    }
    expect(turn.transcript.length).toBe(102);
    expect(turn.transcript.at(1)).toBe(firstUser);
    expect(turn.messages.at(1)).toBe(firstUser);
  });
});
