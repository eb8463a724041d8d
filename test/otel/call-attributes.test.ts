// SPEC X4: attributes that say how a call was made and what it belonged to. Whether a model
// call streamed (`gen_ai.request.stream`), the cancellation of a tool call cut short by its
// run's end (`error.type` ABORTED, not a tool's failure), and the conversation a run belongs
// to (`gen_ai.conversation.id`, from the run config's `sessionId`).
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  createChain,
  createToolLoop,
  defineTool,
  fromModel,
  InMemoryChatMemory,
  type ObservedModelCall,
  sequence,
  withMemory,
} from 'statecraft';
import { otelObserver } from 'statecraft/otel';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { STATUS, tracing } from './tracing.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

const callsAdd = { toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }] };
const plansAdd = {
  text: JSON.stringify({
    nextAction: 'execute',
    executionCommands: [{ purpose: 'sum', toolName: 'add', toolKwargs: { a: 1, b: 2 } }],
  }),
};
const plansAnswer = { text: JSON.stringify({ nextAction: 'response', executionCommands: [] }) };

async function drain(events: AsyncIterable<unknown>): Promise<void> {
  for await (const _event of events) {
    // read to the end
  }
}

/** Each chat span's purpose and `gen_ai.request.stream`, in the order the spans ended. */
const streamFlags = (spans: readonly ReadableSpan[]) =>
  spans
    .filter((span) => span.attributes['gen_ai.operation.name'] === 'chat')
    .map((span) => [
      span.attributes['statecraft.model_call.purpose'],
      span.attributes['gen_ai.request.stream'],
    ]);

describe('gen_ai.request.stream', () => {
  it("is false for a chain's generated calls and true for its streamed ones", async () => {
    const chain = () =>
      createChain({
        model: new ScriptedModel([callsAdd, { text: 'It is 3.' }]),
        tools: [add],
        name: 'calculator',
      });

    const invoked = tracing();
    await chain().invoke('1 + 2?', { observers: otelObserver({ tracer: invoked.tracer }) });
    expect(streamFlags(invoked.spans())).toEqual([
      ['generation 1', false],
      ['generation 2', false],
    ]);

    const streamed = tracing();
    await drain(chain().stream('1 + 2?', { observers: otelObserver({ tracer: streamed.tracer }) }));
    expect(streamFlags(streamed.spans())).toEqual([
      ['generation 1', true],
      ['generation 2', true],
    ]);
  });

  it("follows a tool loop's plan mode and whether its answer is streamed", async () => {
    const loop = (instant: boolean) =>
      createToolLoop({
        model: new ScriptedModel([plansAdd, plansAnswer, { text: 'It is 3.' }]),
        tools: [add],
        name: 'planner',
        instant,
      });

    // The instant plan is always read from a stream; the answer only under stream().
    const instantInvoked = tracing();
    await loop(true).invoke('1 + 2?', {
      observers: otelObserver({ tracer: instantInvoked.tracer }),
    });
    expect(streamFlags(instantInvoked.spans())).toEqual([
      ['plan round 1', true],
      ['plan round 2', true],
      ['respond', false],
    ]);

    const wholeStreamed = tracing();
    await drain(
      loop(false).stream('1 + 2?', { observers: otelObserver({ tracer: wholeStreamed.tracer }) }),
    );
    expect(streamFlags(wholeStreamed.spans())).toEqual([
      ['plan round 1', false],
      ['plan round 2', false],
      ['respond', true],
    ]);
  });

  it('follows whether a model step is invoked or streamed, and tells observers', async () => {
    const calls: ObservedModelCall[] = [];
    const t = tracing();
    const observers = [
      otelObserver({ tracer: t.tracer }),
      { onModelCallStart: (_run: unknown, call: ObservedModelCall) => calls.push(call) },
    ];
    const step = fromModel(new ScriptedModel([{ text: 'Hi!' }, { chunks: ['Hi', ' there'] }]));

    await step.invoke('Hello', { observers });
    await drain(step.stream('Hello', { observers }));

    expect(calls.map((call) => call.streamed)).toEqual([false, true]);
    expect(streamFlags(t.spans())).toEqual([
      ['generation', false],
      ['generation', true],
    ]);
  });
});

describe('a tool call cancelled by its run’s end', () => {
  it('is an execute_tool span with error.type ABORTED, not tool_error', async () => {
    const t = tracing();
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // Waits until the test releases it: the abort, not timing, decides how the call ends.
    const slow = defineTool({
      name: 'slow',
      description: 'Takes as long as the test says.',
      input: z.object({}),
      execute: async () => {
        started();
        await released;
        return 'late';
      },
    });
    const chain = createChain({
      model: new ScriptedModel([
        { toolCalls: [{ id: 'call_1', name: 'slow', arguments: {} }] },
        { text: 'done' },
      ]),
      tools: [slow],
      name: 'aborted',
    });
    const controller = new AbortController();

    const run = chain.invoke('go', {
      observers: otelObserver({ tracer: t.tracer }),
      signal: controller.signal,
    });
    await toolStarted;
    controller.abort();
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
    release();

    const tool = t.one('execute_tool slow');
    expect(tool.attributes['error.type']).toBe('ABORTED');
    expect(tool.status).toEqual({ code: STATUS.ERROR, message: 'ABORTED' });
    expect(t.one('invoke_agent aborted').attributes['error.type']).toBe('ABORTED');
    expect(t.spans()).toHaveLength(t.started());
  });
});

describe('gen_ai.conversation.id', () => {
  it("is the config's sessionId on workflow, agent and chat spans", async () => {
    const t = tracing();
    const first = withMemory(
      createChain({ model: new ScriptedModel([{ text: 'One.' }]), name: 'first' }),
      new InMemoryChatMemory(),
    );
    const second = createChain({ model: new ScriptedModel([{ text: 'Two.' }]), name: 'second' });
    const answer = fromModel(new ScriptedModel([{ text: 'Three.' }]), {}, 'third');

    await sequence(
      first,
      (result) => result.text,
      second,
      (result) => result.text,
      answer,
    ).invoke('Hi', {
      observers: otelObserver({ tracer: t.tracer }),
      sessionId: 'session-42',
      runName: 'flow',
    });

    const conversations = Object.fromEntries(
      t
        .spans()
        .map((span) => [span.name, span.attributes['gen_ai.conversation.id']] as const)
        .filter(([, id]) => id !== undefined),
    );
    expect(conversations).toEqual({
      'invoke_workflow flow': 'session-42',
      'invoke_agent first': 'session-42',
      'invoke_agent second': 'session-42',
      'chat scripted-model': 'session-42',
    });
    // The three chat spans (two calls in agents, one model step) share a name; all carry it.
    expect(
      t.named('chat scripted-model').map((span) => span.attributes['gen_ai.conversation.id']),
    ).toEqual(['session-42', 'session-42', 'session-42']);
    // Plain spans (the memory wrapper, the functions) are no GenAI operation: none there.
    const memory = t.spans().find((span) => span.attributes['statecraft.run.kind'] === 'memory');
    expect(memory?.attributes['gen_ai.conversation.id']).toBeUndefined();
  });

  it('is absent when the run has no sessionId', async () => {
    const t = tracing();
    await createChain({ model: new ScriptedModel([{ text: 'One.' }]), name: 'solo' }).invoke('Hi', {
      observers: otelObserver({ tracer: t.tracer }),
    });

    for (const span of t.spans()) {
      expect(span.attributes['gen_ai.conversation.id']).toBeUndefined();
    }
  });
});
