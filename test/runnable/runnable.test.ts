// SPEC R1: functions, chains, tool loops and models share one Runnable interface: invoke,
// batch (order kept, failures settled), stream (typed events ending in `final`).
import {
  AbortError,
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  fromFunction,
  fromModel,
  type RunEvent,
  runnable,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

async function collect<O>(stream: AsyncIterable<RunEvent<O>>): Promise<RunEvent<O>[]> {
  const events: RunEvent<O>[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const double = fromFunction((n: number) => n * 2, 'double');

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('Runnable: invoke, batch, stream (R1)', () => {
  it('a function step invokes, and streams its run as start, end and final', async () => {
    expect(await double.invoke(21)).toBe(42);
    const events = await collect(double.stream(4));
    expect(events.map((e) => e.type)).toEqual(['run-start', 'run-end', 'final']);
    const [start, end, final] = events;
    expect(start).toMatchObject({ run: { name: 'double', kind: 'function' }, input: 4 });
    expect(end).toMatchObject({
      run: { runId: start?.type === 'run-start' && start.run.runId },
      output: 8,
    });
    expect(final).toEqual({ type: 'final', output: 8 });
  });

  it('batch keeps input order and settles each input, so one failure loses nothing', async () => {
    const gates = [deferred(), deferred(), deferred()];
    const step = fromFunction(async (i: number) => {
      await gates[i]?.promise;
      if (i === 1) throw new Error('input 1 is bad');
      return `out ${i}`;
    });
    const batch = step.batch([0, 1, 2]);
    // Later inputs finish first; the results still follow the inputs.
    gates[2]?.resolve();
    gates[1]?.resolve();
    gates[0]?.resolve();
    const results = await batch;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(results[0]).toEqual({ status: 'fulfilled', value: 'out 0' });
    expect(results[2]).toEqual({ status: 'fulfilled', value: 'out 2' });
    expect((results[1] as { reason: Error }).reason.message).toBe('input 1 is bad');
  });

  it('batch runs at most `concurrency` inputs at once', async () => {
    let running = 0;
    let peak = 0;
    const step = fromFunction(async (i: number) => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      return i;
    });
    const results = await step.batch([1, 2, 3, 4, 5, 6, 7], { concurrency: 2 });
    expect(peak).toBe(2);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : null))).toEqual([
      1, 2, 3, 4, 5, 6, 7,
    ]);
    const unlimited = await step.batch([1, 2, 3, 4]);
    expect(unlimited).toHaveLength(4);
    expect(peak).toBe(4);
  });

  it('batch refuses a bad concurrency, naming it', async () => {
    await expect(double.batch([1], { concurrency: 0 })).rejects.toSatisfy(
      (error) => ConfigError.isInstance(error) && error.message.includes('concurrency'),
    );
    await expect(double.batch([1], { concurrency: 1.5 })).rejects.toThrow(/concurrency/);
  });

  it('a chain is a Runnable: its result, its state changes, tool calls and text as events', async () => {
    const add = defineTool({
      name: 'add',
      description: 'Adds.',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => a + b,
    });
    const script = () =>
      new ScriptedModel([
        { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }] },
        { text: 'Five.', chunks: ['Fi', 've.'] },
      ]);
    const invoked = await runnable(createChain({ model: script(), tools: [add] }), 'adder').invoke(
      '2+3?',
    );
    expect(invoked.result).toBe('Five.');

    const events = await collect(
      runnable(createChain({ model: script(), tools: [add] }), 'adder').stream('2+3?'),
    );
    const types = events.map((e) => e.type);
    expect(types[0]).toBe('run-start');
    expect(types.slice(-2)).toEqual(['run-end', 'final']);
    expect(
      events.filter((e) => e.type === 'state').map((e) => e.type === 'state' && e.state),
    ).toEqual(['thinking', 'doing', 'thinking', 'validating', 'succeeded']);
    expect(events.find((e) => e.type === 'tool-call')).toMatchObject({
      toolCall: { id: 'c1', name: 'add', arguments: { a: 2, b: 3 } },
      run: { name: 'adder', kind: 'chain' },
    });
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({
      result: { toolCallId: 'c1', output: 5, success: true },
    });
    expect(
      events.filter((e) => e.type === 'text-delta').map((e) => e.type === 'text-delta' && e.delta),
    ).toEqual(['Fi', 've.']);
    const final = events.at(-1);
    expect(final?.type === 'final' && final.output.result).toBe('Five.');
    expect(final?.type === 'final' && final.output.details().modelCalls).toHaveLength(2);
  });

  it('a chain has batch of its own', async () => {
    const chain = createChain({
      model: new ScriptedModel((request) => ({
        text: `echo: ${String((request.messages.at(-1) as { content?: unknown }).content)}`,
      })),
    });
    const results = await chain.batch(['a', 'b'], { concurrency: 1 });
    expect(results.map((r) => r.status === 'fulfilled' && r.value.result)).toEqual([
      'echo: a',
      'echo: b',
    ]);
  });

  it('a tool loop is a Runnable: planned commands as tool calls, records as their results', async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks a word up.',
      input: z.object({ word: z.string() }),
      execute: ({ word }) => `${word}: defined`,
    });
    const loop = createToolLoop({
      model: new ScriptedModel([{ text: 'Done.' }]),
      tools: [lookup],
      planner: (context) =>
        context.roundIndex === 0
          ? {
              nextAction: 'execute',
              executionCommands: [
                { purpose: 'define', toolName: 'lookup', toolKwargs: { word: 'x' } },
              ],
            }
          : { nextAction: 'response' },
    });
    const events = await collect(runnable(loop).stream('define x'));
    expect(events.find((e) => e.type === 'tool-call')).toMatchObject({
      toolCall: { id: 'round0_0', name: 'lookup', arguments: { word: 'x' } },
      run: { kind: 'tool-loop' },
    });
    expect(events.find((e) => e.type === 'tool-result')).toMatchObject({
      result: { toolCallId: 'round0_0', output: 'x: defined', success: true },
    });
    const final = events.at(-1);
    expect(final?.type === 'final' && final.output.answer).toBe('Done.');
    // One answer scripted for two inputs: the second input fails, the first keeps its result.
    const once = createToolLoop({
      model: new ScriptedModel([{ text: 'only once' }]),
      tools: [lookup],
      planner: () => ({ nextAction: 'response' }),
    });
    const results = await once.batch(['a', 'b'], { concurrency: 1 });
    expect(results[0]).toMatchObject({ status: 'fulfilled', value: { answer: 'only once' } });
    expect(results[1]).toMatchObject({ status: 'rejected', reason: { code: 'MODEL_ERROR' } });
  });

  it('a model adapter is a Runnable: invoke generates, stream yields the text as it arrives', async () => {
    const model = new ScriptedModel([
      { text: 'Hello there.' },
      { text: 'Hi.', chunks: ['H', 'i.'] },
    ]);
    const step = fromModel(model, { temperature: 0 });
    const response = await step.invoke('hello');
    expect(response.content).toEqual([{ type: 'text', text: 'Hello there.' }]);
    expect(model.requests[0]?.temperature).toBe(0);
    const events = await collect(step.stream([{ role: 'user', content: 'hi' }]));
    expect(
      events.filter((e) => e.type === 'text-delta').map((e) => e.type === 'text-delta' && e.delta),
    ).toEqual(['H', 'i.']);
    expect(events[0]).toMatchObject({ run: { kind: 'model', name: 'scripted:scripted-model' } });
  });

  it('a stream that fails yields run-error, then throws the error', async () => {
    const failing = fromFunction(() => {
      throw new Error('broken step');
    }, 'broken');
    const events: RunEvent<unknown>[] = [];
    await expect(async () => {
      for await (const event of failing.stream(1)) events.push(event);
    }).rejects.toThrow('broken step');
    expect(events.map((e) => e.type)).toEqual(['run-start', 'run-error']);
  });

  it('an aborted signal ends a run with an AbortError, and breaking out of a stream aborts it', async () => {
    const controller = new AbortController();
    controller.abort('user left');
    await expect(double.invoke(1, { signal: controller.signal })).rejects.toSatisfy((error) =>
      AbortError.isInstance(error),
    );

    let seen: AbortSignal | undefined;
    const slow = fromFunction(async (_: number, config) => {
      seen = config.signal;
      await new Promise((resolve) => config.signal?.addEventListener('abort', resolve));
      return 0;
    });
    for await (const event of slow.stream(1)) {
      if (event.type === 'run-start') break;
    }
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen?.aborted).toBe(true);
  });
});

describe('names of chains and tool loops', () => {
  it('are the name option in run events, and a bad one is refused naming it', async () => {
    const chain = createChain({ name: 'summarize', model: new ScriptedModel([{ text: 'ok' }]) });
    expect(chain.name).toBe('summarize');
    const events = await collect(runnable(chain).stream('x'));
    expect(events[0]).toMatchObject({
      type: 'run-start',
      run: { name: 'summarize', kind: 'chain' },
    });
    expect(createToolLoop({ model: new ScriptedModel([]) }).name).toBe('tool-loop');
    expect(() => createChain({ name: '', model: new ScriptedModel([]) })).toThrow(
      expect.objectContaining({ option: 'name' }),
    );
    expect(() => createToolLoop({ name: 3 as never, model: new ScriptedModel([]) })).toThrow(
      /name/,
    );
  });
});
