// SPEC R4 `returnDirect` tools (LangChain's return_direct) and `intermediateSteps` (its
// (AgentAction, observation) pairs), and SPEC R5's typed output of `chain.machine`.
import { type ChainOutput, createChain, defineTool, ProtocolError } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { assign, createActor, type OutputFrom, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { add, messagesOf, partialOf, rejectionOf, systemNotes } from './helpers.js';

const lookupOrder = defineTool({
  name: 'lookup_order',
  description: 'Finds an order by id; its record is the answer.',
  input: z.object({ id: z.string() }),
  execute: ({ id }) =>
    id === 'missing' ? Promise.reject(new Error('no such order')) : { id, total: 42 },
  returnDirect: true,
});

const quote = defineTool({
  name: 'quote',
  description: 'Returns a quote as text.',
  input: z.object({}),
  execute: () => 'Simple is better than complex.',
  returnDirect: true,
});

describe('returnDirect tools (R4)', () => {
  it('ends the run with the output of a single successful call, as text', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ id: 'q1', name: 'quote', arguments: {} }] }]);
    const run = await createChain({ model, tools: [quote] }).invoke('A quote, please.');
    expect(run).toMatchObject({
      status: 'succeeded',
      result: 'Simple is better than complex.',
      text: 'Simple is better than complex.',
      iterations: 1,
    });
    expect(run.stopped).toBeUndefined();
    expect(run.transcript.at(-1)).toMatchObject({ role: 'tool', toolCallId: 'q1' });
    model.assertComplete();
  });

  it('hands an object output to structured output as JSON text', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'lookup_order', arguments: { id: 'A7' } }] },
    ]);
    const chain = createChain({
      model,
      tools: [lookupOrder],
      outputSchema: z.object({ id: z.string(), total: z.number() }),
    });
    const run = await chain.invoke('Order A7?');
    expect(run.result).toEqual({ id: 'A7', total: 42 });
    expect(run.text).toBe('{"id":"A7","total":42}');
  });

  it('sends an output that fails validation back to the model as a correction', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'lookup_order', arguments: { id: 'A7' } }] },
      { text: '{"id": "A7", "total": 42, "currency": "EUR"}' },
    ]);
    const chain = createChain({
      model,
      tools: [lookupOrder],
      outputSchema: z.object({ id: z.string(), currency: z.string() }),
    });
    const run = await chain.invoke('Order A7, with its currency?');
    expect(run.result).toEqual({ id: 'A7', currency: 'EUR' });
    expect(systemNotes(messagesOf(model.requests[1])).at(-1)).toMatch(/does not match the schema/);
    model.assertComplete();
  });

  it('does not return directly from a step of two calls', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { id: 'q1', name: 'quote', arguments: {} },
          { id: 'a1', name: 'add', arguments: { a: 1, b: 2 } },
        ],
      },
      { text: 'A quote and a sum.' },
    ]);
    const run = await createChain({ model, tools: [quote, add] }).invoke('Both.');
    expect(run.result).toBe('A quote and a sum.');
    model.assertComplete();
  });

  it('does not return directly from a failed call', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'lookup_order', arguments: { id: 'missing' } }] },
      { text: 'That order does not exist.' },
    ]);
    const run = await createChain({ model, tools: [lookupOrder] }).invoke('Order "missing"?');
    expect(run.result).toBe('That order does not exist.');
    expect(run.intermediateSteps[0]?.observation).toMatchObject({ success: false });
  });

  it('does not return directly from a tool that is not marked', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: '3' },
    ]);
    await createChain({ model, tools: [add, quote] }).invoke('1 + 2?');
    model.assertComplete();
  });
});

describe('intermediateSteps (R4)', () => {
  const repeatable = defineTool({
    name: 'search',
    description: 'Searches.',
    input: z.object({ q: z.string() }),
    execute: ({ q }) => `results for ${q}`,
    duplicateCallWarn: true,
  });

  it('lists every call with what the model observed, in order, blocked duplicates included', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'search', arguments: { q: 'x' } },
          { id: 'c2', name: 'add', arguments: { a: 1, b: 2 } },
        ],
      },
      { toolCalls: [{ id: 'c3', name: 'search', arguments: { q: 'x' } }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [repeatable, add] }).invoke('go');
    expect(
      run.intermediateSteps.map(({ action, observation }) => [
        action.id,
        observation.toolCallId,
        observation.success,
      ]),
    ).toEqual([
      ['c1', 'c1', true],
      ['c2', 'c2', true],
      ['c3', 'c3', false],
    ]);
    expect(run.intermediateSteps[1]?.observation.output).toBe(3);
    expect(run.intermediateSteps[2]?.observation.error).toMatch(/already called/);
  });

  it('is on the partial run of a failed one', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }] },
      { toolCalls: [{ id: 'c2', name: 'add', arguments: { a: 3, b: 4 } }] },
    ]);
    const error = await rejectionOf(
      ProtocolError,
      createChain({ model, tools: [add], maxIterations: 2 }).invoke('go'),
    );
    const partial = partialOf(error);
    // c2 was made by the last allowed generation and never ran.
    expect(partial.intermediateSteps.map((s) => s.action.id)).toEqual(['c1']);
    expect(partial.output.intermediateSteps).toEqual(partial.intermediateSteps);
  });
});

describe('chain.machine in an app machine (R4 output, R5 types)', () => {
  it('outputs intermediateSteps, and a result of the chain type', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'lookup_order', arguments: { id: 'B2' } }] },
    ]);
    const chain = createChain({
      model,
      tools: [lookupOrder],
      outputSchema: z.object({ id: z.string(), total: z.number() }),
    });
    type Output = OutputFrom<typeof chain.machine>;
    expectTypeOf<Output>().toEqualTypeOf<ChainOutput<{ id: string; total: number }>>();
    const app = setup({
      types: { context: {} as { order?: Output }, output: {} as Output },
      actors: { order: chain.machine },
    }).createMachine({
      context: {},
      initial: 'looking',
      states: {
        looking: {
          invoke: {
            src: 'order',
            input: () => chain.input('Order B2?'),
            onDone: { target: 'done', actions: assign({ order: ({ event }) => event.output }) },
          },
        },
        done: { type: 'final' },
      },
      output: ({ context }) => context.order as Output,
    });
    const output = await toPromise(createActor(app).start());
    if (output.status !== 'succeeded') throw new Error('the chain did not succeed');
    expectTypeOf(output.result.total).toEqualTypeOf<number>();
    expect(output.result).toEqual({ id: 'B2', total: 42 });
    expect(output.intermediateSteps).toHaveLength(1);
    expect(output.intermediateSteps[0]?.action.name).toBe('lookup_order');
  });
});
