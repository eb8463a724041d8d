// SPEC X4: runs, model calls and tool calls as OpenTelemetry spans in the GenAI semantic
// conventions, recorded with the SDK's in-memory exporter. The library itself imports only
// @opentelemetry/api; the SDK is a devDependency for these tests.
import { trace } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import {
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  ModelError,
  type RunObserver,
  sequence,
} from 'statecraft';
import { observeRuns } from 'statecraft/observe';
import { instrument, otelObserver } from 'statecraft/otel';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idOf, ms, parentOf, SPAN_KIND, STATUS, tracing } from './tracing.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

function addingChain(name = 'calculator', secret = 'What is 1 + 2?') {
  const model = new ScriptedModel(
    [
      {
        toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }],
        usage: { inputTokens: 10, outputTokens: 4 },
      },
      { text: 'It is 3.', usage: { inputTokens: 20, outputTokens: 1, cachedInputTokens: 8 } },
    ],
    { modelId: 'scripted-calc' },
  );
  return {
    model,
    secret,
    chain: createChain({
      model,
      tools: [add],
      name,
      modelSettings: { temperature: 0, maxOutputTokens: 64 },
    }),
  };
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('a chain run as spans', () => {
  it('is an invoke_agent span with a chat span per model call and an execute_tool span per tool call', async () => {
    const t = tracing();
    const { chain } = addingChain();

    await chain.invoke('What is 1 + 2?', { observers: otelObserver({ tracer: t.tracer }) });

    expect(t.spans().map((span) => span.name)).toEqual([
      'chat scripted-calc',
      'execute_tool add',
      'chat scripted-calc',
      'invoke_agent calculator',
    ]);
    const agent = t.one('invoke_agent calculator');
    expect(agent.kind).toBe(SPAN_KIND.INTERNAL);
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'calculator',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-calc',
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.usage.output_tokens': 5,
      'statecraft.run.kind': 'chain',
    });
    expect(agent.status.code).toBe(STATUS.UNSET);
    expect(parentOf(agent)).toBeUndefined();

    const [first, second] = t.named('chat scripted-calc') as [ReadableSpan, ReadableSpan];
    expect(first.kind).toBe(SPAN_KIND.CLIENT);
    expect(first.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-calc',
      'gen_ai.request.temperature': 0,
      'gen_ai.request.max_tokens': 64,
      'gen_ai.response.finish_reasons': ['tool_call'],
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 4,
      'statecraft.model_call.purpose': 'generation 1',
    });
    expect(second.attributes).toMatchObject({
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 20,
      'gen_ai.usage.cache_read.input_tokens': 8,
    });

    const tool = t.one('execute_tool add');
    expect(tool.kind).toBe(SPAN_KIND.INTERNAL);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'add',
      'gen_ai.tool.call.id': 'call_1',
      'gen_ai.tool.type': 'function',
      'statecraft.tool.executor': 'local',
    });
    expect(tool.status.code).toBe(STATUS.UNSET);

    // Every call's span is a child of the run's span, in the same trace, inside its time.
    for (const child of [first, second, tool]) {
      expect(parentOf(child)).toBe(idOf(agent));
      expect(child.spanContext().traceId).toBe(agent.spanContext().traceId);
      expect(ms(child.startTime)).toBeGreaterThanOrEqual(ms(agent.startTime));
      expect(ms(child.endTime)).toBeLessThanOrEqual(ms(agent.endTime));
    }
    expect(ms(first.endTime)).toBeLessThanOrEqual(ms(tool.startTime));
    expect(ms(tool.endTime)).toBeLessThanOrEqual(ms(second.startTime));
  });

  it('marks a failing model call and its run as errors', async () => {
    const t = tracing();
    const model = new ScriptedModel([
      { error: new ModelError('the provider is down', { retryable: false }) },
    ]);
    const chain = createChain({ model, name: 'flaky' });

    await expect(
      chain.invoke('Hi', { observers: otelObserver({ tracer: t.tracer }) }),
    ).rejects.toThrow('the provider is down');

    // Both spans ended and reached the exporter, none left open.
    expect(t.spans()).toHaveLength(2);
    expect(t.started()).toBe(2);
    const chat = t.one('chat scripted-model');
    // Without captureContent the status message is the error's code, not its message.
    expect(chat.status).toEqual({ code: STATUS.ERROR, message: 'MODEL_ERROR' });
    expect(chat.attributes['error.type']).toBe('MODEL_ERROR');
    expect(chat.attributes['gen_ai.usage.input_tokens']).toBeUndefined();
    const agent = t.one('invoke_agent flaky');
    expect(agent.status).toEqual({ code: STATUS.ERROR, message: 'MODEL_ERROR' });
    expect(agent.attributes['error.type']).toBe('MODEL_ERROR');
    expect(parentOf(chat)).toBe(idOf(agent));
  });

  it('puts error messages in span statuses only with captureContent', async () => {
    const t = tracing();
    const model = new ScriptedModel([
      { error: new ModelError('the provider is down', { retryable: false }) },
    ]);
    const chain = createChain({ model, name: 'flaky' });

    await expect(
      chain.invoke('Hi', { observers: otelObserver({ tracer: t.tracer, captureContent: true }) }),
    ).rejects.toThrow('the provider is down');

    expect(t.one('chat scripted-model').status).toEqual({
      code: STATUS.ERROR,
      message: 'the provider is down',
    });
    expect(t.one('invoke_agent flaky').status.message).toBe('the provider is down');
  });

  it('marks a tool that throws as an error, while the run that recovers from it is not', async () => {
    const t = tracing();
    const broken = defineTool({
      name: 'lookup',
      description: 'Looks something up.',
      input: z.object({ q: z.string() }),
      execute: () => {
        throw new Error('index offline');
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'call_9', name: 'lookup', arguments: { q: 'x' } }] },
      { text: 'I could not look it up.' },
    ]);
    const chain = createChain({ model, tools: [broken], name: 'searcher' });

    await chain.invoke('Find x', { observers: otelObserver({ tracer: t.tracer }) });

    expect(t.spans()).toHaveLength(4);
    expect(t.started()).toBe(4);
    const tool = t.one('execute_tool lookup');
    expect(tool.status).toEqual({ code: STATUS.ERROR, message: 'tool_error' });
    expect(tool.attributes['error.type']).toBe('tool_error');
    expect(t.one('invoke_agent searcher').status.code).toBe(STATUS.UNSET);

    // With captureContent the tool's own message is the status message.
    const withContent = tracing();
    const again = createChain({
      model: new ScriptedModel([
        { toolCalls: [{ id: 'call_9', name: 'lookup', arguments: { q: 'x' } }] },
        { text: 'I could not look it up.' },
      ]),
      tools: [broken],
      name: 'searcher',
    });
    await again.invoke('Find x', {
      observers: otelObserver({ tracer: withContent.tracer, captureContent: true }),
    });
    expect(withContent.one('execute_tool lookup').status.message).toContain('index offline');
  });

  it('keeps the model’s answer out of a failed run’s status without captureContent', async () => {
    const t = tracing();
    // A malformed plan: the loop's error quotes the answer back ("It began: …").
    const leaked = '{"nextAction": "execute", "user_ssn": "123-45-6789"';
    const loop = createToolLoop({
      model: new ScriptedModel([{ text: leaked }, { text: leaked }, { text: leaked }]),
      tools: [add],
      name: 'planner',
      instant: false,
    });

    const error = await loop
      .invoke('secret question', { observers: otelObserver({ tracer: t.tracer }) })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );

    expect(String((error as Error).message)).toContain('123-45-6789');
    expect(t.spans().length).toBeGreaterThan(1);
    expect(t.spans()).toHaveLength(t.started());
    const agent = t.one('invoke_agent planner');
    expect(agent.status).toEqual({ code: STATUS.ERROR, message: 'PROTOCOL_ERROR' });
    for (const span of t.spans()) {
      expect(JSON.stringify(span.status)).not.toContain('123-45-6789');
      expect(JSON.stringify(span.attributes)).not.toContain('123-45-6789');
    }
  });
});

describe('cost on spans (SPEC H3)', () => {
  it('records statecraft.cost.usd on chat and agent spans of a priced chain, and nowhere else', async () => {
    const t = tracing();
    const model = new ScriptedModel(
      [
        {
          toolCalls: [{ id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }],
          usage: { inputTokens: 1_000, outputTokens: 100 },
        },
        {
          text: 'It is 3.',
          usage: { inputTokens: 2_000, outputTokens: 10, cachedInputTokens: 1_000 },
        },
      ],
      { modelId: 'scripted-calc' },
    );
    const prices = { inputPerMillion: 10, cachedInputPerMillion: 5, outputPerMillion: 30 };
    const chain = createChain({ model, tools: [add], name: 'priced', prices });

    const run = await chain.invoke('What is 1 + 2?', {
      observers: otelObserver({ tracer: t.tracer }),
    });

    const [first, second] = t.named('chat scripted-calc') as [ReadableSpan, ReadableSpan];
    expect(first.attributes['statecraft.cost.usd']).toBeCloseTo(0.013, 12);
    // 1,000 uncached at $10, 1,000 cached at $5, 10 out at $30.
    expect(second.attributes['statecraft.cost.usd']).toBeCloseTo(0.0153, 12);
    expect(t.one('invoke_agent priced').attributes['statecraft.cost.usd']).toBeCloseTo(
      run.cost ?? Number.NaN,
      12,
    );
    expect(t.one('execute_tool add').attributes).not.toHaveProperty('statecraft.cost.usd');

    // Unpriced: no cost attribute at all.
    const u = tracing();
    await addingChain('unpriced').chain.invoke('What is 1 + 2?', {
      observers: otelObserver({ tracer: u.tracer }),
    });
    for (const span of u.spans()) expect(span.attributes).not.toHaveProperty('statecraft.cost.usd');
  });
});

describe('composed runs as one trace', () => {
  it('a sequence of two chains is one tree under an invoke_workflow span', async () => {
    const t = tracing();
    const first = addingChain('first').chain;
    const second = addingChain('second').chain;

    await sequence(first, (result) => result.text, second).invoke('What is 1 + 2?', {
      observers: otelObserver({ tracer: t.tracer }),
    });

    const spans = t.spans();
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
    const workflow = t.one('invoke_workflow first | function | second');
    expect(workflow.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_workflow',
      'gen_ai.workflow.name': 'first | function | second',
      'statecraft.run.kind': 'sequence',
    });
    // A workflow is not an agent: it is named by gen_ai.workflow.name, not gen_ai.agent.name.
    expect(workflow.attributes['gen_ai.agent.name']).toBeUndefined();
    expect(parentOf(workflow)).toBeUndefined();
    const agents = [t.one('invoke_agent first'), t.one('invoke_agent second')];
    const step = t.one('function function');
    for (const child of [...agents, step]) expect(parentOf(child)).toBe(idOf(workflow));
    expect(step.attributes['gen_ai.operation.name']).toBeUndefined();
    // Each chain's calls hang under that chain's span: two chats and one tool each.
    for (const agent of agents) {
      const children = spans.filter((span) => parentOf(span) === idOf(agent));
      expect(children.map((span) => span.name).sort()).toEqual([
        'chat scripted-calc',
        'chat scripted-calc',
        'execute_tool add',
      ]);
    }
    // One span per run: the chains are not reported twice (once as Runnables, once as chains).
    expect(spans).toHaveLength(1 + 1 + 2 * 4);
  });

  it('a tool loop is an invoke_agent span over its planner, tool and responder calls', async () => {
    const t = tracing();
    const model = new ScriptedModel([
      {
        text: JSON.stringify({
          nextAction: 'execute',
          executionCommands: [
            { purpose: 'Sum', toolName: 'add', toolKwargs: { a: 2, b: 3 }, todoSuggestion: '' },
          ],
        }),
      },
      { text: '{"nextAction": "response"}' },
      { text: 'It is 5 [Sum].' },
    ]);
    const loop = createToolLoop({ model, tools: [add], name: 'summer' });

    await loop.invoke('What is 2 + 3?', { observers: otelObserver({ tracer: t.tracer }) });

    const agent = t.one('invoke_agent summer');
    expect(agent.attributes['statecraft.run.kind']).toBe('tool-loop');
    const children = t.spans().filter((span) => parentOf(span) === idOf(agent));
    expect(
      children.map((span) => span.attributes['statecraft.model_call.purpose'] ?? span.name),
    ).toEqual(['plan round 1', 'execute_tool add', 'plan round 2', 'respond']);
    expect(t.one('execute_tool add').attributes['gen_ai.tool.call.id']).toBe('round1_0');
  });
});

describe('instrument()', () => {
  it('records every run until it is stopped, and nothing after', async () => {
    const t = tracing();
    const stop = instrument({ tracer: t.tracer });
    cleanups.push(stop);

    await addingChain('before').chain.invoke('What is 1 + 2?');
    expect(t.named('invoke_agent before')).toHaveLength(1);
    const count = t.spans().length;

    stop();
    await addingChain('after').chain.invoke('What is 1 + 2?');
    await sequence(addingChain('after').chain).invoke('What is 1 + 2?');
    expect(t.spans()).toHaveLength(count);
  });

  it('records each span once when called twice with the same tracer: the second replaces the first', async () => {
    const t = tracing();
    const first = instrument({ tracer: t.tracer });
    const second = instrument({ tracer: t.tracer, captureContent: true });
    cleanups.push(first, second);

    await addingChain('twice').chain.invoke('What is 1 + 2?');
    expect(t.spans().map((span) => span.name)).toEqual([
      'chat scripted-calc',
      'execute_tool add',
      'chat scripted-calc',
      'invoke_agent twice',
    ]);
    // The second call's options are the ones in effect.
    expect(t.one('invoke_agent twice').attributes['gen_ai.input.messages']).toBeDefined();

    // The replaced call's stop does nothing; the current one's stops recording.
    first();
    await addingChain('still').chain.invoke('What is 1 + 2?');
    expect(t.named('invoke_agent still')).toHaveLength(1);
    second();
    const count = t.spans().length;
    await addingChain('after').chain.invoke('What is 1 + 2?');
    expect(t.spans()).toHaveLength(count);
  });

  it('records to different tracers independently', async () => {
    const a = tracing();
    const b = tracing();
    cleanups.push(instrument({ tracer: a.tracer }), instrument({ tracer: b.tracer }));

    await addingChain('both').chain.invoke('What is 1 + 2?');

    expect(a.named('invoke_agent both')).toHaveLength(1);
    expect(b.named('invoke_agent both')).toHaveLength(1);
  });

  it('uses the global tracer provider by default', async () => {
    const t = tracing();
    trace.setGlobalTracerProvider(t.provider);
    cleanups.push(() => trace.disable());
    cleanups.push(instrument());

    await addingChain('global').chain.invoke('What is 1 + 2?');

    const agent = t.one('invoke_agent global');
    expect(agent.instrumentationScope.name).toBe('statecraft');
  });
});

describe('an observer told of each event twice', () => {
  it('records one span per run and call, and ends each', async () => {
    const t = tracing();
    const observer = otelObserver({ tracer: t.tracer });
    cleanups.push(observeRuns(observer), observeRuns(observer));

    await addingChain('dup').chain.invoke('What is 1 + 2?');

    expect(t.spans().map((span) => span.name)).toEqual([
      'chat scripted-calc',
      'execute_tool add',
      'chat scripted-calc',
      'invoke_agent dup',
    ]);
    expect(t.started()).toBe(4);
  });
});

describe('message content', () => {
  it('is absent by default', async () => {
    const t = tracing();
    const { chain, secret } = addingChain();
    await chain.invoke(secret, { observers: otelObserver({ tracer: t.tracer }) });
    // The run was recorded (a loop over no spans would pass whatever they held).
    expect(t.spans().map((span) => span.name)).toEqual([
      'chat scripted-calc',
      'execute_tool add',
      'chat scripted-calc',
      'invoke_agent calculator',
    ]);
    for (const span of t.spans()) {
      const text = JSON.stringify(span.attributes);
      expect(text).not.toContain('1 + 2');
      expect(text).not.toContain('It is 3');
      for (const key of Object.keys(span.attributes)) {
        expect(key).not.toMatch(/messages|arguments|result/);
      }
    }
  });

  it('is recorded with captureContent, in the conventions’ message shapes', async () => {
    const t = tracing();
    const { chain, secret } = addingChain();
    await chain.invoke(secret, {
      observers: otelObserver({ tracer: t.tracer, captureContent: true }),
    });

    const [first, second] = t.named('chat scripted-calc') as [ReadableSpan, ReadableSpan];
    const input = JSON.parse(String(first.attributes['gen_ai.input.messages']));
    expect(input.at(-1)).toEqual({ role: 'user', parts: [{ type: 'text', content: secret }] });
    expect(JSON.parse(String(first.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'call_1', name: 'add', arguments: { a: 1, b: 2 } }],
        finish_reason: 'tool_call',
      },
    ]);
    const secondInput = JSON.parse(String(second.attributes['gen_ai.input.messages']));
    expect(secondInput.at(-1)).toEqual({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: 'call_1', response: 3 }],
    });
    expect(JSON.parse(String(second.attributes['gen_ai.output.messages']))[0].parts).toEqual([
      { type: 'text', content: 'It is 3.' },
    ]);
    const tool = t.one('execute_tool add');
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBe('{"a":1,"b":2}');
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('3');
    const agent = t.one('invoke_agent calculator');
    expect(JSON.parse(String(agent.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: secret }] },
    ]);
    expect(JSON.parse(String(agent.attributes['gen_ai.output.messages']))[0].parts).toEqual([
      { type: 'text', content: 'It is 3.' },
    ]);
  });
});

describe('bad options', () => {
  it('fail with a ConfigError naming the option', () => {
    const optionOf = (make: () => RunObserver) => {
      try {
        make();
      } catch (error) {
        if (ConfigError.isInstance(error)) return error.option;
        throw error;
      }
      throw new Error('no error');
    };
    expect(optionOf(() => otelObserver({ tracer: {} as never }))).toBe('tracer');
    expect(optionOf(() => otelObserver({ captureContent: 'yes' as never }))).toBe('captureContent');
    expect(optionOf(() => otelObserver(null as never))).toBe('options');
  });
});
