// SPEC R3 memory: loaded before a run, saved after a successful one, per session.
import {
  ConfigError,
  createChain,
  InMemoryChatMemory,
  type Message,
  pipe,
  withMemory,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';

function contents(messages: readonly Message[]): string[] {
  return messages.map((m) => `${m.role}: ${'content' in m ? String(m.content) : ''}`);
}

describe('memory (R3)', () => {
  it("loads the session's conversation before a run and saves the exchange after it", async () => {
    const model = new ScriptedModel([
      { text: 'Nice to meet you, Ana.' },
      { text: 'Your name is Ana.' },
    ]);
    const memory = new InMemoryChatMemory();
    const chat = withMemory(createChain({ model, systemPrompt: 'You are friendly.' }), memory);

    await chat.invoke('My name is Ana.');
    const second = await chat.invoke('What is my name?');
    expect(second.result).toBe('Your name is Ana.');
    // The second call saw the first exchange, after the system prompt and before the new question.
    expect(contents(model.requests[1]?.messages.toArray() ?? [])).toEqual([
      'system: You are friendly.',
      'user: My name is Ana.',
      'assistant: Nice to meet you, Ana.',
      'user: What is my name?',
    ]);
    expect(contents(memory.messages())).toEqual([
      'user: My name is Ana.',
      'assistant: Nice to meet you, Ana.',
      'user: What is my name?',
      'assistant: Your name is Ana.',
    ]);
  });

  it('keeps sessions apart', async () => {
    const model = new ScriptedModel((request) => ({
      text: `seen ${request.messages.length} messages`,
    }));
    const memory = new InMemoryChatMemory();
    const chat = withMemory(createChain({ model }), memory);
    await chat.invoke('hello', { sessionId: 'a' });
    await chat.invoke('hello again', { sessionId: 'a' });
    await chat.invoke('hello', { sessionId: 'b' });
    expect(memory.messages('a')).toHaveLength(4);
    expect(memory.messages('b')).toHaveLength(2);
    expect(memory.messages('default')).toHaveLength(0);
  });

  it('saves nothing when the run fails', async () => {
    const memory = new InMemoryChatMemory();
    const chat = withMemory(
      createChain({ model: new ScriptedModel([{ error: new Error('provider down') }]) }),
      memory,
    );
    await expect(chat.invoke('hello')).rejects.toThrow('provider down');
    expect(memory.messages()).toEqual([]);
  });

  it('drops whole turns from the oldest beyond maxMessages', async () => {
    const memory = new InMemoryChatMemory({ maxMessages: 4 });
    const chat = withMemory(
      createChain({ model: new ScriptedModel(() => ({ text: 'ok' })) }),
      memory,
    );
    for (const question of ['one', 'two', 'three']) await chat.invoke(question);
    expect(contents(memory.messages())).toEqual([
      'user: two',
      'assistant: ok',
      'user: three',
      'assistant: ok',
    ]);
    expect(() => new InMemoryChatMemory({ maxMessages: 0 })).toThrow(ConfigError);
  });

  it('composes: memory around a chain inside a sequence', async () => {
    const memory = new InMemoryChatMemory();
    const model = new ScriptedModel(() => ({ text: 'noted' }));
    const app = pipe(
      (topic: string) => `Remember ${topic}`,
      withMemory(createChain({ model }), memory),
    );
    await app.invoke('apples');
    await app.invoke('pears');
    expect(contents(model.requests[1]?.messages.toArray() ?? [])).toEqual([
      'user: Remember apples',
      'assistant: noted',
      'user: Remember pears',
    ]);
  });

  it('refuses something that is not a memory, naming the option', () => {
    const chain = createChain({ model: new ScriptedModel([]) });
    expect(() => withMemory(chain, {} as never)).toThrow(/memory/);
  });
});
