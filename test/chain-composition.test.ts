import { type ChainOutput, createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { assign, createActor, setup, toPromise } from 'xstate';
import { z } from 'zod';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: a finite-state machine diagram`,
});

describe('the chain inside an application machine (SPEC R5)', () => {
  it('runs as an invoked child actor with typed input and output', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'lookup', arguments: { word: 'statechart' } }] },
      { text: 'A statechart is a diagram of states.' },
    ]);
    const chain = createChain({ model, tools: [lookup] });
    const app = setup({
      types: { context: {} as { question: string; answer?: string; failed?: string } },
      actors: { explain: chain.machine },
    }).createMachine({
      context: { question: 'What is a statechart?' },
      initial: 'explaining',
      states: {
        explaining: {
          invoke: {
            src: 'explain',
            input: ({ context }) => chain.input(context.question),
            onDone: {
              target: 'done',
              actions: assign(({ event }) => {
                expectTypeOf(event.output).toEqualTypeOf<ChainOutput<string>>();
                return event.output.status === 'succeeded'
                  ? { answer: String(event.output.result) }
                  : { failed: event.output.failure.code };
              }),
            },
          },
        },
        done: { type: 'final' },
      },
    });
    const actor = createActor(app).start();
    await toPromise(actor);
    expect(actor.getSnapshot().context).toMatchObject({
      answer: 'A statechart is a diagram of states.',
    });
    expect(model.requests[1]?.messages.toArray().map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
    ]);
    model.assertComplete();
  });

  it('reports a failed chain as data in the output, which the app can branch on', async () => {
    const model = new ScriptedModel(() => ({
      toolCalls: [{ name: 'lookup', arguments: { word: 'loop' } }],
    }));
    const chain = createChain({ model, tools: [lookup], maxIterations: 2 });
    const app = setup({ actors: { explain: chain.machine } }).createMachine({
      initial: 'explaining',
      context: { code: '' },
      states: {
        explaining: {
          invoke: {
            src: 'explain',
            input: () => chain.input('Loop forever.'),
            onDone: [
              {
                guard: ({ event }) => event.output.status === 'failed',
                target: 'gaveUp',
                actions: assign({
                  code: ({ event }) =>
                    event.output.status === 'failed' ? event.output.failure.code : '',
                }),
              },
              { target: 'done' },
            ],
          },
        },
        gaveUp: { type: 'final' },
        done: { type: 'final' },
      },
    });
    const actor = createActor(app).start();
    await toPromise(actor);
    expect(actor.getSnapshot().value).toBe('gaveUp');
    expect(actor.getSnapshot().context.code).toBe('PROTOCOL_ERROR');
    expect(model.callCount).toBe(2);
  });

  it('reports every effect as an event to XState inspection (the inspector hook)', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'lookup', arguments: { word: 'actor' } }] },
      { text: 'An actor is a unit of computation.' },
    ]);
    const seen: string[] = [];
    await createChain({ model, tools: [lookup] }).invoke('What is an actor?', {
      inspect: (event) => {
        if (event.type === '@xstate.event' && event.event.type !== 'xstate.init')
          seen.push(event.event.type);
      },
    });
    expect(seen).toEqual([
      'callModel',
      'callModel.done',
      'executeTools',
      // Each call's result as it finishes, then the step's.
      'executeTools.result',
      'executeTools.done',
      'callModel',
      'callModel.done',
      'validateResult',
      'validateResult.done',
    ]);
  });
});

describe('createChain result types', () => {
  it('infers the result from the schema, and is unknown for JSON without one', () => {
    const model = new ScriptedModel([]);
    expectTypeOf(createChain({ model }).invoke)
      .returns.resolves.toHaveProperty('result')
      .toEqualTypeOf<string>();
    const typed = createChain({ model, outputSchema: z.object({ n: z.number() }) });
    expectTypeOf(typed.invoke)
      .returns.resolves.toHaveProperty('result')
      .toEqualTypeOf<{ n: number }>();
    const json = createChain({ model, outputSchema: { type: 'object' } });
    expectTypeOf(json.invoke).returns.resolves.toHaveProperty('result').toEqualTypeOf<unknown>();
    const format = createChain({ model, responseFormat: { type: 'json_object' } });
    expectTypeOf(format.invoke).returns.resolves.toHaveProperty('result').toEqualTypeOf<unknown>();
  });
});
