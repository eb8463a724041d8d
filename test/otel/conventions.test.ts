// SPEC X4: which span each kind of run becomes, and the GenAI conventions' finer points
// (semantic-conventions-genai spans.yaml / registry.yaml): model runs as chat spans,
// workflows only where agents run, wrappers as plain spans, usage only where a model was
// called, low-cardinality finish reasons, streaming tool results.
import {
  createChain,
  createToolLoop,
  defineTool,
  fromChain,
  fromModel,
  InMemoryChatMemory,
  ModelError,
  type ObservedModelCall,
  type ObservedRun,
  sequence,
  withMemory,
} from 'statecraft';
import { otelObserver } from 'statecraft/otel';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { idOf, parentOf, SPAN_KIND, STATUS, tracing } from './tracing.js';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

const answering = (name: string, text = 'Done.') =>
  createChain({ model: new ScriptedModel([{ text }]), name });

const usageKeys = (attributes: Record<string, unknown>) =>
  Object.keys(attributes).filter((key) => key.startsWith('gen_ai.usage.'));

describe('a model run as a step (fromModel)', () => {
  it('is a chat CLIENT span with provider, model, request settings, usage and finish reason', async () => {
    const t = tracing();
    const model = new ScriptedModel([{ text: 'Hi!', usage: { inputTokens: 5, outputTokens: 2 } }]);
    const step = fromModel(model, { temperature: 0.5, maxOutputTokens: 32 });

    await sequence(step).invoke('Hello', { observers: otelObserver({ tracer: t.tracer }) });

    expect(t.spans().map((span) => span.name)).toEqual([
      'chat scripted-model',
      'sequence scripted:scripted-model',
    ]);
    expect(t.started()).toBe(2);
    const chat = t.one('chat scripted-model');
    expect(chat.kind).toBe(SPAN_KIND.CLIENT);
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'scripted',
      'gen_ai.request.model': 'scripted-model',
      'gen_ai.request.temperature': 0.5,
      'gen_ai.request.max_tokens': 32,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 5,
      'gen_ai.usage.output_tokens': 2,
      'statecraft.run.kind': 'model',
      'statecraft.model_call.purpose': 'generation',
    });
    expect(chat.status.code).toBe(STATUS.UNSET);
    // A sequence of model calls runs no agent: a plain span, not a workflow.
    const group = t.one('sequence scripted:scripted-model');
    expect(group.attributes['gen_ai.operation.name']).toBeUndefined();
    expect(parentOf(chat)).toBe(idOf(group));
  });

  it('is one chat span when streamed, with content under captureContent', async () => {
    const t = tracing();
    const step = fromModel(new ScriptedModel([{ chunks: ['Hi', ' there'] }]));

    for await (const _event of step.stream('Hello', {
      observers: otelObserver({ tracer: t.tracer, captureContent: true }),
    })) {
      // read to the end
    }

    expect(t.spans()).toHaveLength(1);
    const chat = t.one('chat scripted-model');
    expect(JSON.parse(String(chat.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'Hello' }] },
    ]);
    expect(JSON.parse(String(chat.attributes['gen_ai.output.messages']))[0].parts).toEqual([
      { type: 'text', content: 'Hi there' },
    ]);
  });

  it('marks a failed call as an error and ends its span', async () => {
    const t = tracing();
    const step = fromModel(
      new ScriptedModel([{ error: new ModelError('quota exceeded', { retryable: false }) }]),
    );

    await expect(
      step.invoke('Hello', { observers: otelObserver({ tracer: t.tracer }) }),
    ).rejects.toThrow('quota exceeded');

    expect(t.spans()).toHaveLength(1);
    expect(t.started()).toBe(1);
    const chat = t.one('chat scripted-model');
    expect(chat.status).toEqual({ code: STATUS.ERROR, message: 'MODEL_ERROR' });
    expect(chat.attributes['error.type']).toBe('MODEL_ERROR');
    expect(usageKeys(chat.attributes)).toEqual([]);
  });

  it('is reported to observers with its model and its one model call', async () => {
    const runs: ObservedRun[] = [];
    const calls: ObservedModelCall[] = [];
    const step = fromModel(new ScriptedModel([{ text: 'Hi!' }]), {}, 'greeter');

    await step.invoke('Hello', {
      observers: {
        onRunStart: (run) => runs.push(run),
        onModelCallStart: (_run, call) => calls.push(call),
      },
    });

    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({
      name: 'greeter',
      kind: 'model',
      model: { provider: 'scripted', modelId: 'scripted-model' },
    });
    expect(calls.map((call) => call.purpose)).toEqual(['generation']);
  });
});

describe('workflows', () => {
  it('a sequence of functions runs no agent: a plain span', async () => {
    const t = tracing();
    await sequence(
      (text: string) => text.trim(),
      (text: string) => text.toUpperCase(),
    ).invoke(' hi ', { observers: otelObserver({ tracer: t.tracer }) });

    const group = t.spans().find((span) => span.attributes['statecraft.run.kind'] === 'sequence');
    expect(group?.name).toMatch(/^sequence /);
    expect(group?.attributes['gen_ai.operation.name']).toBeUndefined();
    expect(group?.attributes['gen_ai.workflow.name']).toBeUndefined();
    for (const span of t.spans()) expect(span.name).not.toMatch(/invoke_workflow/);
  });

  it('a sequence whose agent runs inside a wrapper is still a workflow; the wrappers are plain spans', async () => {
    const t = tracing();
    const remembered = withMemory(answering('inner'), new InMemoryChatMemory());

    await sequence(remembered, (result) => result.text, answering('second')).invoke('Hi', {
      observers: otelObserver({ tracer: t.tracer }),
      runName: 'pipeline',
    });

    const workflow = t.one('invoke_workflow pipeline');
    expect(workflow.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_workflow',
      'gen_ai.workflow.name': 'pipeline',
    });
    const memory = t.one('memory inner (with memory)');
    expect(memory.kind).toBe(SPAN_KIND.INTERNAL);
    expect(memory.attributes['gen_ai.operation.name']).toBeUndefined();
    expect(parentOf(memory)).toBe(idOf(workflow));
    expect(parentOf(t.one('invoke_agent inner'))).toBe(idOf(memory));
    expect(parentOf(t.one('invoke_agent second'))).toBe(idOf(workflow));
  });

  it('a workflow records its input and output messages under captureContent', async () => {
    const t = tracing();
    await sequence(answering('only', 'The answer.')).invoke('The question', {
      observers: otelObserver({ tracer: t.tracer, captureContent: true }),
    });

    const workflow = t.one('invoke_workflow only');
    expect(JSON.parse(String(workflow.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'The question' }] },
    ]);
    expect(JSON.parse(String(workflow.attributes['gen_ai.output.messages']))[0].parts).toEqual([
      { type: 'text', content: 'The answer.' },
    ]);
  });

  it('retry and fallbacks are plain spans over their attempts', async () => {
    const t = tracing();
    const failing = createChain({
      model: new ScriptedModel([{ error: new ModelError('down', { retryable: false }) }]),
      name: 'primary',
    });
    const guarded = fromChain(failing)
      .withFallbacks([answering('backup')])
      .withRetry({ maxAttempts: 1 });

    await guarded.invoke('Hi', { observers: otelObserver({ tracer: t.tracer }) });

    const byKind = (kind: string) =>
      t.spans().filter((span) => span.attributes['statecraft.run.kind'] === kind);
    const [retry] = byKind('retry');
    const [fallbacks] = byKind('fallbacks');
    for (const wrapper of [retry, fallbacks]) {
      expect(wrapper?.name).toMatch(/^(retry|fallbacks) /);
      expect(wrapper?.kind).toBe(SPAN_KIND.INTERNAL);
      expect(wrapper?.attributes['gen_ai.operation.name']).toBeUndefined();
      expect(wrapper?.attributes['gen_ai.workflow.name']).toBeUndefined();
    }
    expect(parentOf(fallbacks as never)).toBe(idOf(retry as never));
    const primary = t.one('invoke_agent primary');
    expect(primary.status.code).toBe(STATUS.ERROR);
    expect(parentOf(primary)).toBe(idOf(fallbacks as never));
    expect(parentOf(t.one('invoke_agent backup'))).toBe(idOf(fallbacks as never));
    expect(t.spans()).toHaveLength(t.started());
  });
});

describe('usage', () => {
  it('records reasoning tokens as gen_ai.usage.reasoning.output_tokens', async () => {
    const t = tracing();
    const model = new ScriptedModel([
      { text: 'Four.', usage: { inputTokens: 3, outputTokens: 9, reasoningTokens: 6 } },
    ]);

    await createChain({ model, name: 'thinker' }).invoke('2 + 2?', {
      observers: otelObserver({ tracer: t.tracer }),
    });

    for (const name of ['chat scripted-model', 'invoke_agent thinker']) {
      expect(t.one(name).attributes).toMatchObject({
        'gen_ai.usage.output_tokens': 9,
        'gen_ai.usage.reasoning.output_tokens': 6,
      });
    }
  });

  it('a tool loop planned and answered by functions calls no model: no agent span, no usage', async () => {
    const t = tracing();
    const loop = createToolLoop({
      planner: () => ({ nextAction: 'response' }),
      respond: () => 'Nothing to do.',
      name: 'scripted-plan',
    });

    await loop.invoke('Anything?', { observers: otelObserver({ tracer: t.tracer }) });

    expect(t.spans()).toHaveLength(1);
    const span = t.one('tool-loop scripted-plan');
    expect(span.attributes['statecraft.run.kind']).toBe('tool-loop');
    expect(span.attributes['gen_ai.operation.name']).toBeUndefined();
    expect(span.attributes['gen_ai.provider.name']).toBeUndefined();
    expect(usageKeys(span.attributes)).toEqual([]);
  });

  it('a tool loop planned by a function that responds with its model is an agent with usage', async () => {
    const t = tracing();
    const loop = createToolLoop({
      model: new ScriptedModel([
        { text: 'Nothing to do.', usage: { inputTokens: 7, outputTokens: 3 } },
      ]),
      planner: () => ({ nextAction: 'response' }),
      name: 'half-scripted',
    });

    await loop.invoke('Anything?', { observers: otelObserver({ tracer: t.tracer }) });

    expect(t.one('invoke_agent half-scripted').attributes).toMatchObject({
      'gen_ai.provider.name': 'scripted',
      'gen_ai.usage.input_tokens': 7,
      'gen_ai.usage.output_tokens': 3,
    });
  });
});

describe('finish reasons', () => {
  it('the instant plan short-circuit is a low-cardinality `other`, not its explanation', async () => {
    const t = tracing();
    const model = new ScriptedModel([
      { chunks: ['{"nextAction": "response", ', '"executionCommands": [', ']}'] },
      { text: 'Nothing to do.' },
    ]);
    const loop = createToolLoop({ model, tools: [add], name: 'instant' });

    await loop.invoke('Anything?', { observers: otelObserver({ tracer: t.tracer }) });

    const reasons = t
      .named('chat scripted-model')
      .map((span) => [
        span.attributes['statecraft.model_call.purpose'],
        span.attributes['gen_ai.response.finish_reasons'],
      ]);
    expect(reasons).toEqual([
      ['plan round 1', ['other']],
      ['respond', ['stop']],
    ]);
  });

  it('a provider’s own reason word is kept, lowercased', async () => {
    const t = tracing();
    const model = new ScriptedModel([
      { text: 'Paused.', finishReason: { unified: 'other', raw: 'PAUSE_TURN' } },
    ]);

    await createChain({ model, name: 'pausing' }).invoke('Go', {
      observers: otelObserver({ tracer: t.tracer }),
    });

    expect(t.one('chat scripted-model').attributes['gen_ai.response.finish_reasons']).toEqual([
      'pause_turn',
    ]);
  });
});

describe('a streaming tool', () => {
  it('has no result attribute under captureContent: its output is read later', async () => {
    const t = tracing();
    const feed = defineTool({
      name: 'feed',
      description: 'Streams items.',
      input: z.object({}),
      execute: async function* () {
        yield 'one';
        yield 'two';
      },
    });
    const chain = createChain({
      model: new ScriptedModel([
        { toolCalls: [{ id: 's1', name: 'feed', arguments: {} }] },
        { text: 'Done.' },
      ]),
      tools: [feed],
      name: 'streamer',
    });

    await chain.invoke('Go', {
      observers: otelObserver({ tracer: t.tracer, captureContent: true }),
    });

    const tool = t.one('execute_tool feed');
    expect(tool.attributes['gen_ai.tool.call.arguments']).toBe('{}');
    expect(tool.attributes).not.toHaveProperty('gen_ai.tool.call.result');
    expect(tool.status.code).toBe(STATUS.UNSET);
  });
});
