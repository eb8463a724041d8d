// SPEC X4 (and A5, D1 through the viewer and CLI built on it): run observers see every run —
// chains, tool loops and Runnables — as it happens: its start, each state, each model call
// and tool call with their outcome, and its end. Only the public API is used.
import {
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  fromFunction,
  ModelError,
  type ObservedModelCall,
  type ObservedRun,
  type ObservedToolCall,
  type RunObserver,
  sequence,
  type ToolResult,
  type Usage,
} from 'statecraft';
import { observeRuns } from 'statecraft/observe';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { outcomeOf, recordingObserver } from './helpers.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

/** A chain that calls `add` once, then answers; 14 + 21 tokens. */
function addingChain(name = 'calculator') {
  const model = new ScriptedModel(
    [
      {
        toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }],
        usage: { inputTokens: 10, outputTokens: 4 },
      },
      { text: 'It is 3.', usage: { inputTokens: 20, outputTokens: 1 } },
    ],
    { modelId: 'scripted-calc' },
  );
  return { model, chain: createChain({ model, tools: [add], name }) };
}

const unregister: (() => void)[] = [];
/** observeRuns, undone after the test even when it fails. */
function observeGlobally(observer: RunObserver): () => void {
  const off = observeRuns(observer);
  unregister.push(off);
  return off;
}
afterEach(() => {
  for (const off of unregister.splice(0)) off();
  vi.restoreAllMocks();
});

describe('a chain run', () => {
  it('reports its start, states, model and tool calls, and end, in order', async () => {
    const { chain } = addingChain();
    const { observer, events, lines } = recordingObserver();

    const result = await chain.invoke('What is 1 + 2?', { observers: observer });

    expect(lines()).toEqual([
      'chain:calculator start',
      'chain:calculator state thinking',
      'chain:calculator model #1 generation 1 start',
      'chain:calculator model #1 generation 1 end',
      'chain:calculator state doing',
      'chain:calculator tool add start',
      'chain:calculator tool add end',
      // The call's result reached the machine before its step ended: a macrostep of its own.
      'chain:calculator state doing',
      'chain:calculator state thinking',
      'chain:calculator model #2 generation 2 start',
      'chain:calculator model #2 generation 2 end',
      'chain:calculator state validating',
      'chain:calculator state succeeded',
      'chain:calculator end',
    ]);
    const run = events[0]?.run as ObservedRun;
    expect(run).toMatchObject({
      kind: 'chain',
      name: 'calculator',
      parentRunId: undefined,
      machine: chain.machine,
      model: { provider: 'scripted', modelId: 'scripted-calc' },
    });
    expect(typeof run.runId).toBe('string');
    expect(events.every((event) => event.run === run)).toBe(true);
    expect(events[0]).toMatchObject({ input: 'What is 1 + 2?' });

    const modelEnds = events.filter((event) => event.hook === 'onModelCallEnd');
    const firstEnd = modelEnds[0] as { call: ObservedModelCall; outcome: { usage: Usage } };
    expect(firstEnd.call.model).toEqual({ provider: 'scripted', modelId: 'scripted-calc' });
    expect(firstEnd.call.request.messages.toArray().at(-1)).toMatchObject({ role: 'user' });
    expect(firstEnd.outcome.usage).toEqual({ inputTokens: 10, outputTokens: 4, totalTokens: 14 });
    expect(outcomeOf<{ usage: Usage }>(modelEnds[1]).usage.totalTokens).toBe(21);

    const toolStart = events.find((event) => event.hook === 'onToolCallStart');
    const toolEnd = events.find((event) => event.hook === 'onToolCallEnd');
    const started = toolStart?.call as ObservedToolCall;
    expect(started.call).toMatchObject({ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } });
    expect(started.executor).toBe('local');
    // The end reports the call object the start did, so observers can pair them by identity.
    expect(toolEnd?.call).toBe(started);
    const toolOutcome = toolEnd?.outcome as { result: ToolResult; endTime: number };
    expect(toolOutcome.result).toMatchObject({ toolCallId: 'call_1', output: 3, success: true });
    expect(toolOutcome.endTime).toBeGreaterThanOrEqual(started.startTime);

    const end = events.at(-1)?.outcome as { output: unknown; usage: Usage; endTime: number };
    expect(end.output).toBe(result);
    expect(end.usage).toEqual({ inputTokens: 30, outputTokens: 5, totalTokens: 35 });
    expect(end.endTime).toBeGreaterThanOrEqual(run.startTime);
    // Times are wall-clock milliseconds, what an exporter puts on a span.
    expect(Math.abs(run.startTime - Date.now())).toBeLessThan(60_000);
  });

  it('reports a streamed run the same way', async () => {
    const { chain } = addingChain();
    const { observer, lines } = recordingObserver();
    for await (const _event of chain.stream('What is 1 + 2?', { observers: [observer] })) {
      // drained
    }
    expect(lines()).toContain('chain:calculator tool add end');
    expect(lines().at(-1)).toBe('chain:calculator end');
    expect(lines().filter((l) => l.endsWith(' end') && l.startsWith('chain:calculator e'))).toEqual(
      ['chain:calculator end'],
    );
  });

  it('reports a failed run with its error, the error the caller gets, and its usage', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }],
        usage: { inputTokens: 10, outputTokens: 4 },
      },
      { error: new ModelError('the provider is down', { retryable: false }) },
    ]);
    const chain = createChain({ model, tools: [add], name: 'flaky' });
    const { observer, events, lines } = recordingObserver();

    const thrown = await chain.invoke('What is 1 + 2?', { observers: observer }).catch((e) => e);

    expect(ModelError.isInstance(thrown)).toBe(true);
    const failedCall = events.filter((event) => event.hook === 'onModelCallEnd')[1];
    expect(outcomeOf<{ error: unknown }>(failedCall).error).toBeInstanceOf(ModelError);
    expect(lines().at(-2)).toBe('chain:flaky state failed');
    expect(lines().at(-1)).toBe('chain:flaky end with error');
    const end = events.at(-1)?.outcome as { error: unknown; usage: Usage };
    expect(end.error).toBe(thrown);
    expect(end.usage).toEqual({ inputTokens: 10, outputTokens: 4, totalTokens: 14 });
  });

  it('reports a run that reached a limit as failed, once', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }] },
    ]);
    const chain = createChain({ model, tools: [add], name: 'limited', maxIterations: 1 });
    const { observer, events } = recordingObserver();
    const thrown = await chain.invoke('Add forever', { observers: observer }).catch((e) => e);
    const ends = events.filter((event) => event.hook === 'onRunEnd');
    expect(ends).toHaveLength(1);
    expect(outcomeOf<{ error: unknown }>(ends[0]).error).toBe(thrown);
  });
});

describe('a tool loop run', () => {
  it('reports its start, states, planner and responder calls, tool calls, and end', async () => {
    const model = new ScriptedModel([
      {
        text: JSON.stringify({
          nextAction: 'execute',
          executionCommands: [
            { purpose: 'Sum', toolName: 'add', toolKwargs: { a: 2, b: 3 }, todoSuggestion: '' },
          ],
        }),
        usage: { inputTokens: 30, outputTokens: 20 },
      },
      { text: '{"nextAction": "response"}', usage: { inputTokens: 40, outputTokens: 5 } },
      { text: 'It is 5 [Sum].', usage: { inputTokens: 50, outputTokens: 6 } },
    ]);
    const loop = createToolLoop({ model, tools: [add], name: 'summer' });
    const { observer, events, lines } = recordingObserver();

    const result = await loop.invoke('What is 2 + 3?', { observers: observer });

    expect(result.answer).toBe('It is 5 [Sum].');
    // An invoked actor starts inside the transition, before the snapshot that enters its
    // state is published: the planner's call is seen starting just before `planning`.
    expect(lines()).toEqual([
      'tool-loop:summer start',
      'tool-loop:summer model #1 plan round 1 start',
      'tool-loop:summer state {"running":"planning"}',
      'tool-loop:summer model #1 plan round 1 end',
      'tool-loop:summer tool add start',
      'tool-loop:summer state {"running":"executing"}',
      'tool-loop:summer tool add end',
      // Every macrostep is reported: the command's record arrives as an event of its own.
      'tool-loop:summer state {"running":"executing"}',
      'tool-loop:summer model #2 plan round 2 start',
      'tool-loop:summer state {"running":"planning"}',
      'tool-loop:summer model #2 plan round 2 end',
      'tool-loop:summer model #3 respond start',
      'tool-loop:summer state {"running":"responding"}',
      'tool-loop:summer model #3 respond end',
      'tool-loop:summer state done',
      'tool-loop:summer end',
    ]);
    expect(events[0]?.run).toMatchObject({
      kind: 'tool-loop',
      machine: loop.machine,
      model: { provider: 'scripted', modelId: model.modelId },
    });
    const toolEnd = events.find((event) => event.hook === 'onToolCallEnd');
    expect(outcomeOf<{ result: ToolResult }>(toolEnd).result).toMatchObject({
      name: 'add',
      output: 5,
      success: true,
    });
    const end = events.at(-1)?.outcome as { output: unknown; usage: Usage };
    expect(end.output).toBe(result);
    expect(end.usage.totalTokens).toBe(result.usage.totalTokens);
  });

  it('makes a chain responder run a child of the loop run', async () => {
    const responder = createChain({
      model: new ScriptedModel([{ text: 'Done.' }]),
      name: 'responder',
    });
    const loop = createToolLoop({
      planner: () => ({ nextAction: 'response' }),
      respond: responder,
      name: 'planner-loop',
    });
    const { observer, events } = recordingObserver();
    await loop.invoke('Hi', { observers: observer });
    const runs = new Map(events.map((event) => [event.run.name, event.run]));
    expect(runs.get('responder')?.parentRunId).toBe(runs.get('planner-loop')?.runId);
  });
});

describe('runs inside Runnables', () => {
  it('a chain in a sequence is one run, a child of the sequence run', async () => {
    const { chain } = addingChain('first');
    const { chain: second } = addingChain('second');
    const { observer, events } = recordingObserver();
    const callbackRuns: string[] = [];

    await sequence(chain, (result) => result.text, second).invoke('What is 1 + 2?', {
      observers: observer,
      callbacks: { onStart: (run) => void callbackRuns.push(`${run.kind}:${run.runId}`) },
    });

    const starts = events.filter((event) => event.hook === 'onRunStart').map((e) => e.run);
    expect(starts.map((run) => `${run.kind}:${run.name}`)).toEqual([
      'sequence:first | function | second',
      'chain:first',
      'function:function',
      'chain:second',
    ]);
    const [outer, first, step, last] = starts as [
      ObservedRun,
      ObservedRun,
      ObservedRun,
      ObservedRun,
    ];
    expect(outer.parentRunId).toBeUndefined();
    for (const child of [first, step, last]) expect(child.parentRunId).toBe(outer.runId);
    // The chain's observed run is the Runnable's run, the one callbacks saw: same id.
    expect(callbackRuns).toEqual(starts.map((run) => `${run.kind}:${run.runId}`));
    expect(first.machine).toBe(chain.machine);
    // Its model and tool calls belong to it, and it ends before the sequence does.
    expect(events.filter((e) => e.hook === 'onToolCallEnd').map((e) => e.run.runId)).toEqual([
      first.runId,
      last.runId,
    ]);
    expect(events.at(-1)).toMatchObject({ hook: 'onRunEnd', run: outer });
  });

  it('a streamed sequence reports the same tree', async () => {
    const { chain } = addingChain('streamed');
    const { observer, events } = recordingObserver();
    for await (const _event of sequence(chain).stream('What is 1 + 2?', { observers: observer })) {
      // drained
    }
    const starts = events.filter((event) => event.hook === 'onRunStart').map((e) => e.run);
    expect(starts.map((run) => run.kind)).toEqual(['sequence', 'chain']);
    expect(starts[1]?.parentRunId).toBe(starts[0]?.runId);
    expect(events.filter((event) => event.hook === 'onRunEnd')).toHaveLength(2);
  });

  it('a chain a function step invokes with its config is a child of that step', async () => {
    const { chain } = addingChain('inner');
    const { observer, events } = recordingObserver();
    const step = fromFunction((input: string, config) => chain.invoke(input, config), 'wrapper');
    await step.invoke('What is 1 + 2?', { observers: observer });
    const starts = events.filter((event) => event.hook === 'onRunStart').map((e) => e.run);
    expect(starts.map((run) => run.name)).toEqual(['wrapper', 'inner']);
    expect(starts[1]?.parentRunId).toBe(starts[0]?.runId);
  });

  it('a failed Runnable run reports its error', async () => {
    const failing = fromFunction(() => {
      throw new Error('step broke');
    }, 'broken');
    const { observer, events } = recordingObserver();
    await expect(failing.invoke('x', { observers: observer })).rejects.toThrow('step broke');
    expect(events.map((event) => event.hook)).toEqual(['onRunStart', 'onRunEnd']);
    expect(outcomeOf<{ error: Error }>(events[1]).error.message).toBe('step broke');
  });
});

describe('global and per-run observers', () => {
  it('both receive every event; one registered both ways hears each once', async () => {
    const global = recordingObserver();
    const own = recordingObserver();
    const both = recordingObserver();
    observeGlobally(global.observer);
    observeGlobally(both.observer);
    const { chain } = addingChain();

    await chain.invoke('What is 1 + 2?', { observers: [own.observer, both.observer] });

    expect(global.lines()).toHaveLength(14);
    expect(own.lines()).toEqual(global.lines());
    expect(both.lines()).toEqual(global.lines());
  });

  it('stop receiving once unregistered', async () => {
    const global = recordingObserver();
    const off = observeGlobally(global.observer);
    await addingChain().chain.invoke('What is 1 + 2?');
    const seen = global.events.length;
    expect(seen).toBeGreaterThan(0);

    off();
    off(); // twice is harmless
    await addingChain().chain.invoke('What is 1 + 2?');
    await sequence(addingChain().chain).invoke('What is 1 + 2?');
    expect(global.events).toHaveLength(seen);
  });

  it('unregistering one registration keeps the others', async () => {
    const global = recordingObserver();
    const other = recordingObserver();
    const off = observeGlobally(global.observer);
    observeGlobally(other.observer);
    off();
    await addingChain().chain.invoke('What is 1 + 2?');
    expect(global.events).toHaveLength(0);
    expect(other.events.length).toBeGreaterThan(0);
  });
});

describe('observers never fail a run', () => {
  it('a throwing observer is reported once per hook on stderr, and the run succeeds', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const broken: RunObserver = {
      onState: () => {
        throw new Error('exporter down');
      },
      onModelCallEnd: () => Promise.reject(new Error('async exporter down')),
    };
    const healthy = recordingObserver();
    observeGlobally(broken);
    const { chain } = addingChain();

    const result = await chain.invoke('What is 1 + 2?', { observers: healthy.observer });
    await new Promise((resolve) => setImmediate(resolve)); // let the rejection be seen

    expect(result.text).toBe('It is 3.');
    // The healthy observer still heard everything, after the broken one threw.
    expect(healthy.lines()).toHaveLength(14);
    const reports = errors.mock.calls.map((call) => String(call[0]));
    expect(reports).toHaveLength(2);
    expect(reports[0]).toContain('onState');
    expect(reports[1]).toContain('onModelCallEnd');
  });
});

describe('bad observers', () => {
  it('fail with a ConfigError naming the option', async () => {
    expect(() => observeRuns(null as unknown as RunObserver)).toThrow(ConfigError);
    expect(() => observeRuns({} as RunObserver)).toThrow(/observer.*none of the RunObserver hooks/);
    expect(() => observeRuns({ onRunEnd: 'log' } as unknown as RunObserver)).toThrow(
      /`observer.onRunEnd`: must be a function/,
    );
    const { chain } = addingChain();
    const error = await chain
      .invoke('x', { observers: [recordingObserver().observer, 42 as unknown as RunObserver] })
      .catch((e) => e);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).option).toBe('observers[1]');
  });
});
