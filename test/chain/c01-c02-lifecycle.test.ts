// SPEC C1, C2: the chain's lifecycle (idle → thinking → doing → thinking … → succeeded), the
// seed's named guards and actions, generations counted, output appended to the transcript.
import {
  assistantMessage,
  createChain,
  defineTool,
  ProtocolError,
  systemMessage,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { NATIVE_TOOL_CALLING_PRINCIPLE, replayMutationLog } from 'statecraft/compile';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { createActor, type InspectionEvent, toPromise } from 'xstate';
import { z } from 'zod';
import { add, deferred, messagesOf, multiply, rejectionOf, rolesOf } from './helpers.js';

function twoStepModel() {
  return new ScriptedModel([
    {
      toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }],
      usage: { inputTokens: 10, outputTokens: 4 },
    },
    {
      text: 'Now the product.',
      toolCalls: [{ id: 'c2', name: 'multiply', arguments: { a: 5, b: 4 } }],
      usage: { inputTokens: 20, outputTokens: 6 },
    },
    { text: 'The answer is 20.', usage: { inputTokens: 30, outputTokens: 8 } },
  ]);
}

describe('chain lifecycle: a two-step tool run (C1, C2)', () => {
  it('runs tools twice, then answers; counts generations, sums usage and records steps', async () => {
    const model = twoStepModel();
    const chain = createChain({
      model,
      tools: [add, multiply],
      systemPrompt: 'You are a calculator.',
    });

    const run = await chain.invoke('What is (2 + 3) * 4?');
    model.assertComplete();

    expect(run.status).toBe('succeeded');
    expect(run.result).toBe('The answer is 20.');
    expect(run.text).toBe('The answer is 20.');
    expect(run.iterations).toBe(3);
    expect(run.usage).toEqual({ inputTokens: 60, outputTokens: 18, totalTokens: 78 });

    // The output of every generation reached the transcript, in order.
    expect(run.transcript).toEqual([
      systemMessage('You are a calculator.'),
      userMessage('What is (2 + 3) * 4?'),
      assistantMessage('', [{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }]),
      toolResultMessage({ toolCallId: 'c1', name: 'add', output: 5, success: true }),
      assistantMessage('Now the product.', [
        { id: 'c2', name: 'multiply', arguments: { a: 5, b: 4 } },
      ]),
      toolResultMessage({ toolCallId: 'c2', name: 'multiply', output: 20, success: true }),
      assistantMessage('The answer is 20.'),
    ]);

    // One step per generation, with its calls, results, usage and finish reason.
    expect(run.steps).toHaveLength(3);
    expect(run.steps.map((s) => s.iteration)).toEqual([1, 2, 3]);
    expect(run.steps[0]).toMatchObject({
      text: '',
      toolCalls: [{ id: 'c1', name: 'add' }],
      toolResults: [{ toolCallId: 'c1', output: 5, success: true }],
      usage: { totalTokens: 14 },
      finishReason: { unified: 'tool-calls' },
    });
    expect(run.steps[1]).toMatchObject({
      text: 'Now the product.',
      toolResults: [{ toolCallId: 'c2', output: 20, success: true }],
      usage: { totalTokens: 26 },
    });
    expect(run.steps[2]).toMatchObject({
      text: 'The answer is 20.',
      toolCalls: [],
      toolResults: [],
      finishReason: { unified: 'stop' },
    });
  });

  it('sends compiled requests: system prompt placed with the tool blocks, tool specs attached', async () => {
    const model = twoStepModel();
    const chain = createChain({
      model,
      tools: [add, multiply],
      systemPrompt: 'You are a calculator.',
    });
    await chain.invoke('What is (2 + 3) * 4?');

    expect(model.requests).toHaveLength(3);
    for (const request of model.requests) {
      const first = messagesOf(request)[0];
      expect(first?.role).toBe('system');
      expect((first as { content: string }).content).toContain('You are a calculator.');
      expect((first as { content: string }).content).toContain(NATIVE_TOOL_CALLING_PRINCIPLE);
      expect(request.tools).toEqual([add.spec, multiply.spec]);
    }
    // Each request holds exactly what the previous generations and tools produced.
    expect(rolesOf(messagesOf(model.requests[0]))).toEqual(['system', 'user']);
    expect(rolesOf(messagesOf(model.requests[1]))).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(rolesOf(messagesOf(model.requests[2]))).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(messagesOf(model.requests[2])[5]).toMatchObject({ toolCallId: 'c2', output: 20 });
  });

  it('sends no tools and keeps a system message the caller gave when there is no systemPrompt', async () => {
    const model = new ScriptedModel([{ text: 'hi' }]);
    const chain = createChain({ model });
    const run = await chain.invoke({
      messages: [systemMessage('Be brief.'), userMessage('hello')],
    });
    expect(model.requests[0]?.tools).toBeUndefined();
    expect(messagesOf(model.requests[0])).toEqual([
      systemMessage('Be brief.'),
      userMessage('hello'),
    ]);
    expect(run.transcript).toEqual([
      systemMessage('Be brief.'),
      userMessage('hello'),
      assistantMessage('hi'),
    ]);
    expect(run.iterations).toBe(1);
  });

  it('walks idle → thinking → doing → thinking → doing → thinking → succeeded', async () => {
    const model = twoStepModel();
    const chain = createChain({ model, tools: [add, multiply] });
    const path: string[] = [];
    await chain.invoke('go', {
      inspect: (event: InspectionEvent) => {
        if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
        if (event.actorRef.sessionId !== event.rootId) return;
        if (!('value' in event.snapshot)) return;
        const value = String(event.snapshot.value);
        if (path.at(-1) !== value) path.push(value);
      },
    });
    // idle is the initial state; its eventless transitions are the first microsteps.
    expect(chain.machine.config.initial).toBe('idle');
    // The SPEC's states, in order; transient helper states (preparing, …) may come between.
    const specStates = ['idle', 'thinking', 'doing', 'succeeded', 'failed'];
    expect(path.filter((state) => specStates.includes(state))).toEqual([
      'thinking',
      'doing',
      'thinking',
      'doing',
      'thinking',
      'succeeded',
    ]);
  });
});

describe('the transcript is built from mutations (C2, P1, P4)', () => {
  it("replaying the run's mutation log rebuilds its transcript", async () => {
    const model = twoStepModel();
    const chain = createChain({ model, tools: [add, multiply], systemPrompt: 'Calculator.' });
    const run = await chain.invoke('What is (2 + 3) * 4?');
    // One entry per compiled turn, plus the final answer.
    expect(run.mutationLog.length).toBeGreaterThanOrEqual(3);
    expect(run.mutationLog.flat().map((m) => m.type)).toEqual([
      'assistantMessage',
      'toolResult',
      'assistantMessage',
      'toolResult',
      'assistantMessage',
    ]);
    const { contract } = chain.input('x').config;
    const replayed = replayMutationLog([userMessage('What is (2 + 3) * 4?')], run.mutationLog, {
      contract,
    });
    expect(replayed.transcript.toArray()).toEqual(run.transcript);
  });
});

describe('what every request carries', () => {
  it('sends modelSettings with every call', async () => {
    const model = twoStepModel();
    await createChain({
      model,
      tools: [add, multiply],
      modelSettings: { temperature: 0.2, seed: 7, maxOutputTokens: 300 },
    }).invoke('go');
    for (const request of model.requests) {
      expect(request).toMatchObject({ temperature: 0.2, seed: 7, maxOutputTokens: 300 });
    }
  });

  it('renders tool best practices into the sent system prompt, not into the transcript', async () => {
    const careful = defineTool({
      name: 'careful',
      description: 'Needs care.',
      input: z.object({}),
      execute: () => 'ok',
      bestPractices: ['Call it at most once.'],
    });
    const model = new ScriptedModel([{ text: 'fine' }]);
    const run = await createChain({ model, tools: [careful], systemPrompt: 'Be careful.' }).invoke(
      'go',
    );
    const sent = (messagesOf(model.requests[0])[0] as { content: string }).content;
    expect(sent).toContain('careful: Call it at most once.');
    expect(sent).toContain('Be careful.');
    expect(run.transcript[0]).toEqual(systemMessage('Be careful.'));
  });
});

describe('runs of one chain are independent', () => {
  it('two concurrent runs keep their own transcripts, counts and tool state', async () => {
    const gate = deferred();
    const started: string[] = [];
    const wait = defineTool({
      name: 'wait',
      description: 'Waits for the gate.',
      input: z.object({ who: z.string() }),
      execute: async ({ who }) => {
        started.push(who);
        if (started.length === 2) gate.resolve();
        await gate.promise;
        return `${who} waited`;
      },
      duplicateCallWarn: true,
    });
    // Answers by the run's own user message, so the interleaving of calls does not matter.
    const model = new ScriptedModel((request) => {
      const messages = request.messages.toArray();
      const who = (messages.find((m) => m.role === 'user') as { content: string }).content;
      const last = messages.at(-1);
      return last?.role === 'tool'
        ? { text: `${who}: ${String(last.output)}` }
        : { toolCalls: [{ name: 'wait', arguments: { who: 'same' } }] };
    });
    const chain = createChain({ model, tools: [wait] });
    const [a, b] = await Promise.all([chain.invoke('alice'), chain.invoke('bob')]);
    // Both ran the identical call: the duplicate check is per run.
    expect(started).toEqual(['same', 'same']);
    expect(a.result).toBe('alice: same waited');
    expect(b.result).toBe('bob: same waited');
    expect(a.iterations).toBe(2);
    expect(b.iterations).toBe(2);
    expect(rolesOf(a.transcript)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});

describe('the seed names are real, replaceable implementations (C1)', () => {
  it('names every guard and action of the seed in setup()', () => {
    const chain = createChain({ model: new ScriptedModel([]) });
    const { guards, actions } = chain.machine.implementations;
    for (const name of ['canThink', 'canDo', 'canSucceed', 'canFail']) {
      expect(typeof guards[name]).toBe('function');
    }
    for (const name of ['beforeThink', 'onEnterThinking', 'beforeDo', 'onEnterDoing']) {
      expect(actions[name]).toBeDefined();
    }
    expect(actions.afterSucceed).toBeDefined();
  });

  it('runs as a child of the app: chain.machine with chain.input(), no createChain run needed', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 1 } }] },
      { text: 'two' },
    ]);
    const chain = createChain({ model, tools: [add] });
    const actor = createActor(chain.machine, { input: chain.input('1 + 1?') }).start();
    const output = await toPromise(actor);
    expect(output.status).toBe('succeeded');
    expect(output.iterations).toBe(2);
    expect(output.transcript.toArray().at(-2)).toMatchObject({ role: 'tool', output: 2 });
  });

  it('lets machine.provide() replace canDo: tool calls are then never run', async () => {
    const execute = vi.fn(() => 1);
    const model = new ScriptedModel([{ toolCalls: [{ name: 'counted', arguments: {} }] }]);
    const counted = defineTool({
      name: 'counted',
      description: 'Counts its calls.',
      input: z.object({}),
      execute,
    });
    const chain = createChain({ model, tools: [counted] });
    const machine = chain.machine.provide({ guards: { canDo: () => false } });
    const output = await toPromise(createActor(machine, { input: chain.input('go') }).start());
    expect(execute).not.toHaveBeenCalled();
    expect(output.status).toBe('failed');
    if (output.status === 'failed') expect(output.failure.code).toBe('PROTOCOL_ERROR');
  });

  it('lets machine.provide() replace afterSucceed, which runs once on success', async () => {
    const afterSucceed = vi.fn();
    const model = new ScriptedModel([{ text: 'done' }]);
    const chain = createChain({ model });
    const machine = chain.machine.provide({ actions: { afterSucceed } });
    const output = await toPromise(createActor(machine, { input: chain.input('go') }).start());
    expect(output.status).toBe('succeeded');
    expect(afterSucceed).toHaveBeenCalledTimes(1);
  });

  it('a chain whose model answers with tool calls it cannot run never succeeds silently', async () => {
    // canDo is false at the iteration limit: the last generation's calls are not run.
    const model = new ScriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] }]);
    const chain = createChain({ model, tools: [add], maxIterations: 1 });
    const error = await rejectionOf(ProtocolError, chain.invoke('go'));
    expect(error.message).toContain('maxIterations (1)');
  });
});
