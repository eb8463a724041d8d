// Issue 13, defects 5, 6, 8 and 9: a failed run loses nothing (its last answer, the step cut
// short, a transcript valid for the next run), and input of the wrong shape is named as such.
import {
  AbortError,
  ChainError,
  createChain,
  createToolLoop,
  defineTool,
  InputError,
  type Message,
  ProtocolError,
  runnable,
  type StandardSchema,
  TimeoutError,
  TokenLimitError,
  userMessage,
} from 'statecraft';
import { validatedTranscript } from 'statecraft/compile';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { createActor, createMachine, fromPromise, waitFor } from 'xstate';
import { z } from 'zod';
import { aborted, add, drain, partialOf, rejectionOf, rolesOf } from './helpers.js';

/** A result schema whose value breaks the machine's own action (afterSucceed spreads it). */
function schemaWithTrappedValue(): StandardSchema<object> {
  const trapped = new Proxy(
    {},
    {
      ownKeys() {
        throw new Error('this value cannot be listed');
      },
    },
  );
  return { '~standard': { version: 1, vendor: 'test', validate: () => ({ value: trapped }) } };
}

/** The partial transcript continued by a new user turn, as a caller would: it must run. */
async function continues(transcript: readonly Message[]): Promise<void> {
  expect(() => validatedTranscript(transcript)).not.toThrow();
  const next = createChain({ model: new ScriptedModel([{ text: 'ok' }]), tools: [add] });
  const run = await next.invoke({ messages: [...transcript, userMessage('continue')] });
  expect(run.text).toBe('ok');
}

function sumOfSteps(steps: readonly { usage: { totalTokens: number } }[]): number {
  return steps.reduce((sum, step) => sum + step.usage.totalTokens, 0);
}

const slow = defineTool({
  name: 'slow',
  description: 'Waits until cancelled.',
  input: z.object({}),
  execute: async (_args, { signal }) => {
    await aborted(signal);
    return 'late';
  },
});

describe('a machine failure keeps the last answer (defect 5)', () => {
  it('invoke: a ChainError whose partial transcript ends with the answer being validated', async () => {
    const model = new ScriptedModel([{ text: '{"a": 1}' }]);
    const chain = createChain({ model, outputSchema: schemaWithTrappedValue() });
    const error = await rejectionOf(ChainError, chain.invoke('go'));
    expect(error.message).toContain('The chain machine failed: this value cannot be listed');
    const partial = partialOf(error);
    expect(rolesOf(partial.transcript)).toEqual(['user', 'assistant']);
    expect(partial.transcript.at(-1)).toMatchObject({ role: 'assistant', content: '{"a": 1}' });
    expect(partial.output.status).toBe('failed');
    expect(sumOfSteps(partial.steps)).toBe(partial.usage.totalTokens);
    expect(partial.details().modelCalls).toHaveLength(1);
    await continues(partial.transcript);
  });

  it('stream: ends with a final event, then the ChainError', async () => {
    const model = new ScriptedModel([{ text: '{"a": 1}' }]);
    const chain = createChain({ model, outputSchema: schemaWithTrappedValue() });
    const { events, error } = await drain(chain.stream('go'));
    expect(ChainError.isInstance(error)).toBe(true);
    const final = events.at(-1);
    if (final?.type !== 'final') throw new Error(`no final event: ${JSON.stringify(events)}`);
    expect(final.output.status).toBe('failed');
    expect(final.output.transcript.at(-1)).toMatchObject({ content: '{"a": 1}' });
  });
});

describe('an abort while tools run keeps their step (defect 6)', () => {
  it('the step is in partial.steps and the steps add up to the usage', async () => {
    const model = new ScriptedModel([
      { text: 'adding', toolCalls: [{ id: 'a1', name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'waiting', toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] },
    ]);
    const controller = new AbortController();
    const chain = createChain({ model, tools: [add, slow] });
    const running = chain.invoke('go', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    const partial = partialOf(await rejectionOf(AbortError, running));
    expect(partial.steps.map((s) => s.iteration)).toEqual([1, 2]);
    expect(sumOfSteps(partial.steps)).toBe(partial.usage.totalTokens);
    expect(partial.intermediateSteps.map((s) => s.action.id)).toEqual(['a1']);
    await continues(partial.transcript);
  });
});

describe("a failed run's transcript is valid input for a new run (defect 8)", () => {
  it('after a ProtocolError at the iteration limit', async () => {
    const model = new ScriptedModel(() => ({
      toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }],
    }));
    const chain = createChain({ model, tools: [add], maxIterations: 2 });
    const partial = partialOf(await rejectionOf(ProtocolError, chain.invoke('loop')));
    await continues(partial.transcript);
  });

  it('after a TokenLimitError on a response that asked for tools', async () => {
    const model = new ScriptedModel(() => ({
      toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }],
      usage: { inputTokens: 50, outputTokens: 10, totalTokens: 60 },
    }));
    const chain = createChain({ model, tools: [add], maxTokens: 100 });
    const partial = partialOf(await rejectionOf(TokenLimitError, chain.invoke('loop')));
    await continues(partial.transcript);
  });

  it('after a TimeoutError while a tool ran', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ id: 's1', name: 'slow', arguments: {} }] }]);
    const chain = createChain({ model, tools: [slow], maxExecutionTime: 30 });
    const partial = partialOf(await rejectionOf(TimeoutError, chain.invoke('go')));
    await continues(partial.transcript);
  });
});

describe('input of the wrong shape is named (defect 9)', () => {
  const chain = createChain({ model: new ScriptedModel([{ text: 'unused' }]) });

  it.each([
    ['a number', 123, /input must be a string, or \{ messages: Message\[\]/],
    ['null', null, /input must be a string, or \{ messages/],
    [
      'messages as a string',
      { messages: 'hi' },
      /input\.messages must be an array of messages; got the string "hi"/,
    ],
    [
      'a message without a role',
      { messages: [{ content: 'hi' }] },
      /input\.messages\[0\] is not a message/,
    ],
    [
      'a tool call that is not one',
      { messages: [{ role: 'assistant', content: '', toolCalls: [null] }] },
      /input\.messages\[0\]\.toolCalls\[0\] must be \{ id: string, name: string, arguments \}; got null/,
    ],
    [
      'an assistant message without toolCalls',
      { messages: [{ role: 'assistant', content: 'x' }] },
      /input\.messages\[0\]\.toolCalls must be an array/,
    ],
  ])('invoke with %s is an InputError', async (_name, input, message) => {
    const error = await rejectionOf(InputError, chain.invoke(input as never));
    expect(error.code).toBe('INVALID_INPUT');
    expect(error.message).toMatch(message);
  });

  it("the chain machine invoked without chain.input(...) fails the app's invoke with an InputError", async () => {
    const app = createMachine({
      initial: 'asking',
      states: {
        asking: {
          invoke: {
            src: chain.machine,
            input: { question: 'hi' },
            onError: { target: 'broken', actions: ({ event }) => errors.push(event.error) },
          },
        },
        broken: { type: 'final' },
      },
    });
    const errors: unknown[] = [];
    const actor = createActor(app).start();
    await waitFor(actor, (s) => s.status === 'done', { timeout: 2_000 });
    expect(InputError.isInstance(errors[0])).toBe(true);
    expect((errors[0] as Error).message).toContain('chain.input(...)');
    void fromPromise;
  });
});

describe('a stream whose final event cannot be built still ends (defect 5)', () => {
  it('ends the iteration with that error, and leaves no rejection unhandled', async () => {
    const { EventQueue } = await import('../../src/host/event-queue.js');
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      let cleaned = false;
      const queue = new EventQueue<string>();
      queue.endWith(
        Promise.resolve('output'),
        () => {
          throw new Error('final event broke');
        },
        () => undefined,
        () => {
          cleaned = true;
        },
      );
      const seen: string[] = [];
      await expect(
        (async () => {
          for await (const item of queue) seen.push(item);
        })(),
      ).rejects.toThrow('final event broke');
      expect(seen).toEqual([]);
      expect(cleaned).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe('a tool loop given input of the wrong shape names it (defect 9)', () => {
  it.each([
    ['a number', 123, /input must be a string, or \{ userInput: string/],
    ['an object without userInput', { question: 'hi' }, /input must be a string, or \{ userInput/],
    [
      'a non-string extraRequirement',
      { userInput: 'hi', extraRequirement: 3 },
      /extraRequirement must be a string/,
    ],
  ])('invoke with %s is an InputError', async (_name, input, message) => {
    const loop = createToolLoop({ planner: () => ({ nextAction: 'response' }), respond: false });
    const error = await rejectionOf(InputError, loop.invoke(input as never));
    expect(error.message).toMatch(message);
  });
});

describe('withRetry does not retry input of the wrong shape', () => {
  it('one attempt, the InputError', async () => {
    let attempts = 0;
    const chain = createChain({ model: new ScriptedModel([{ text: 'unused' }]) });
    const counted = runnable({
      invoke: (input: unknown) => {
        attempts++;
        return chain.invoke(input as never);
      },
    });
    await rejectionOf(InputError, counted.withRetry({ maxAttempts: 3 }).invoke(123));
    expect(attempts).toBe(1);
  });
});
