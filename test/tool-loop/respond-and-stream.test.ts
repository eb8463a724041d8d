// SPEC T8 through the public API: the records converge into actionResults, the final response
// sees them with the instruction to quote them (or nothing, when no tool ran), and every kind
// of responder. Then stream(): its events in order, and a reader that stops early (R1).
import {
  createChain,
  createToolLoop,
  defineTool,
  type LanguageModel,
  type Planner,
  type Responder,
  type ToolLoopStreamEvent,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { QUOTE_SOURCES_INSTRUCTION } from 'statecraft/tool-loop';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { aborted, deferred, messagesOf, rolesOf, within } from '../chain/helpers.js';

const weather = defineTool({
  name: 'weather',
  description: 'The weather in a city.',
  input: z.object({ city: z.string() }),
  execute: ({ city }) => ({ city, sky: city === 'Oslo' ? 'snow' : 'sun' }),
});

function weatherCommand(city: string, purpose = `Weather in ${city}`) {
  return { purpose, toolName: 'weather', toolKwargs: { city } };
}

/** Plans `rounds[i]` (lists of cities) in round i, then answers. */
function roundsPlanner(rounds: readonly (readonly string[])[]) {
  return vi.fn<Planner>((context) => {
    const cities = rounds[context.roundIndex];
    if (!cities) return { nextAction: 'response' };
    return { nextAction: 'execute', executionCommands: cities.map((c) => weatherCommand(c)) };
  });
}

const contentOf = (message: unknown) => (message as { content: string }).content;

describe('convergence into the final response (T8)', () => {
  it('injects the action results and the quote instruction after the user message', async () => {
    const model = new ScriptedModel([{ text: 'Snow in Oslo [Weather in Oslo], sun in Rome.' }]);
    const planner = roundsPlanner([['Oslo'], ['Rome']]);
    const loop = createToolLoop({ model, planner, tools: [weather] });

    const result = await loop.invoke('Snow or sun?');

    model.assertComplete();
    const expectedResults = {
      'Weather in Oslo': { city: 'Oslo', sky: 'snow' },
      'Weather in Rome': { city: 'Rome', sky: 'sun' },
    };
    expect(result.answer).toBe('Snow in Oslo [Weather in Oslo], sun in Rome.');
    expect(result.result).toBe(result.answer);
    expect(result.actionResults).toEqual(expectedResults);
    expect(result.extraInstruction).toBe(QUOTE_SOURCES_INSTRUCTION);
    expect(result.toolLogs).toHaveLength(2);

    const messages = messagesOf(model.requests[0]);
    expect(rolesOf(messages)).toEqual(['user', 'system']);
    expect(contentOf(messages[0])).toBe('Snow or sun?');
    const note = contentOf(messages[1]);
    expect(note).toContain(JSON.stringify(expectedResults, null, 2));
    expect(note).toContain(QUOTE_SOURCES_INSTRUCTION);
    expect(model.requests[0]?.responseFormat).toBeUndefined();
    expect(model.requests[0]?.tools ?? []).toEqual([]);
  });

  it('keys failures as { error, result }, blank purposes as tool_call_<n> and duplicates with (2)', async () => {
    const model = new ScriptedModel([{ text: 'ok' }]);
    const planner = vi.fn<Planner>((context) =>
      context.roundIndex === 0
        ? {
            nextAction: 'execute',
            executionCommands: [
              weatherCommand('Oslo', 'Check'),
              weatherCommand('Rome', 'Check'),
              { purpose: 'Broken', toolName: 'weather', toolKwargs: {} },
            ],
          }
        : { nextAction: 'response' },
    );
    const result = await createToolLoop({ model, planner, tools: [weather] }).invoke('go');
    expect(Object.keys(result.actionResults)).toEqual(['Check', 'Check (2)', 'Broken']);
    expect(result.actionResults.Broken).toEqual({
      error: expect.stringContaining("Invalid arguments for tool 'weather'"),
      result: null,
    });
  });

  it('injects nothing when no tool ran', async () => {
    const model = new ScriptedModel([{ text: 'Just an answer.' }]);
    const planner = roundsPlanner([]);
    const result = await createToolLoop({ model, planner, tools: [weather] }).invoke({
      userInput: 'Hello',
      extraRequirement: 'Be kind.',
    });
    expect(planner).toHaveBeenCalledTimes(1);
    expect(result.answer).toBe('Just an answer.');
    expect(result.actionResults).toEqual({});
    expect(result.extraInstruction).toBeUndefined();
    expect(result.toolLogs).toEqual([]);
    const messages = messagesOf(model.requests[0]);
    expect(rolesOf(messages)).toEqual(['user']);
    expect(contentOf(messages[0])).toContain('Hello');
    expect(contentOf(messages[0])).toContain('Be kind.');
    expect(JSON.stringify(messages)).not.toContain(QUOTE_SOURCES_INSTRUCTION);
  });

  it('puts `instructions` first as the system prompt of the final response', async () => {
    const model = new ScriptedModel([{ text: 'ok' }, { text: 'ok' }]);
    const loop = createToolLoop({
      model,
      planner: roundsPlanner([['Oslo']]),
      tools: [weather],
      instructions: 'You are a weather bot.',
    });
    await loop.invoke('Weather?');
    const messages = messagesOf(model.requests[0]);
    expect(rolesOf(messages)).toEqual(['system', 'user', 'system']);
    expect(contentOf(messages[0])).toBe('You are a weather bot.');
    expect(contentOf(messages[2])).toContain(QUOTE_SOURCES_INSTRUCTION);

    // Without records, the instructions and the user message only.
    const loop2 = createToolLoop({
      model,
      planner: roundsPlanner([]),
      tools: [weather],
      instructions: 'You are a weather bot.',
    });
    await loop2.invoke('Hi');
    expect(rolesOf(messagesOf(model.requests[1]))).toEqual(['system', 'user']);
    model.assertComplete();
  });
});

describe('responders', () => {
  it('respond: false makes no final call: the action results only', async () => {
    const model = new ScriptedModel([
      {
        text: JSON.stringify({
          nextAction: 'execute',
          executionCommands: [weatherCommand('Oslo')],
        }),
      },
      { text: JSON.stringify({ nextAction: 'response' }) },
    ]);
    const result = await createToolLoop({ model, tools: [weather], respond: false }).invoke('go');
    model.assertComplete();
    expect(model.requests.every((r) => r.responseFormat?.type === 'json_schema')).toBe(true);
    expect(result.answer).toBeUndefined();
    expect(result.result).toBeUndefined();
    expect(result.actionResults).toEqual({ 'Weather in Oslo': { city: 'Oslo', sky: 'snow' } });
    expect(result.extraInstruction).toBe(QUOTE_SOURCES_INSTRUCTION);
  });

  it('a chain from createChain answers with its own result', async () => {
    const chainModel = new ScriptedModel([
      { text: '{"sky": "snow", "source": "Weather in Oslo"}' },
    ]);
    const chain = createChain({
      model: chainModel,
      outputSchema: z.object({ sky: z.string(), source: z.string() }),
    });
    const result = await createToolLoop({
      planner: roundsPlanner([['Oslo']]),
      tools: [weather],
      respond: chain,
    }).invoke('Will it snow in Oslo?');

    chainModel.assertComplete();
    expect(result.result).toEqual({ sky: 'snow', source: 'Weather in Oslo' });
    expect(result.answer).toBe('{"sky": "snow", "source": "Weather in Oslo"}');
    const sent = JSON.stringify(messagesOf(chainModel.requests[0]));
    expect(sent).toContain('Will it snow in Oslo?');
    expect(sent).toContain('Weather in Oslo');
    expect(sent).toContain(JSON.stringify(QUOTE_SOURCES_INSTRUCTION).slice(1, -1));
    expect(result.usage.totalTokens).toBeGreaterThan(0);
  });

  it('a function gets { userInput, extraRequirement, actionResults, extraInstruction }', async () => {
    const respond = vi.fn<Responder>(({ actionResults }) => `keys: ${Object.keys(actionResults)}`);
    const result = await createToolLoop({
      planner: roundsPlanner([['Oslo', 'Rome']]),
      tools: [weather],
      respond,
    }).invoke({ userInput: 'Compare', extraRequirement: 'Short.' });

    expect(respond).toHaveBeenCalledTimes(1);
    const [input, options] = respond.mock.calls[0] ?? [];
    expect(input).toEqual({
      userInput: 'Compare',
      extraRequirement: 'Short.',
      actionResults: {
        'Weather in Oslo': { city: 'Oslo', sky: 'snow' },
        'Weather in Rome': { city: 'Rome', sky: 'sun' },
      },
      extraInstruction: QUOTE_SOURCES_INSTRUCTION,
    });
    expect(options?.signal).toBeInstanceOf(AbortSignal);
    expect(result.answer).toBe('keys: Weather in Oslo,Weather in Rome');
    expect(result.result).toBe('keys: Weather in Oslo,Weather in Rome');
  });

  it('a function without records gets empty actionResults and no instruction', async () => {
    const respond = vi.fn<Responder>(() => 'nothing to cite');
    const result = await createToolLoop({
      planner: roundsPlanner([]),
      tools: [weather],
      respond,
    }).invoke('hi');
    expect(respond.mock.calls[0]?.[0]).toEqual({
      userInput: 'hi',
      extraRequirement: '',
      actionResults: {},
      extraInstruction: undefined,
    });
    expect(result.answer).toBe('nothing to cite');
  });
});

/** A compact, readable form of a stream event. */
function show(event: ToolLoopStreamEvent): string {
  switch (event.type) {
    case 'state':
      return `state ${event.state}`;
    case 'round-started':
      return `round-started ${event.roundIndex}`;
    case 'commands-planned':
      return `commands-planned ${event.roundIndex} ${event.plan.nextAction} ${event.plan.executionCommands.length}`;
    case 'record':
      return `record ${event.roundIndex}.${event.index} ${event.record.kwargs.city}`;
    case 'text-delta':
      return `text-delta ${event.delta}`;
    case 'approval-requested':
      return `approval-requested ${event.request.callId}`;
    case 'approval-decided':
      return `approval-decided ${event.decision.callId} ${event.decision.approved}`;
    case 'final':
      return `final ${event.output.status}`;
  }
}

describe('stream() (R1)', () => {
  it('emits rounds, plans, records, text deltas and the final output in order', async () => {
    const model = new ScriptedModel([{ chunks: ['Snow ', 'and ', 'sun.'] }]);
    const planner = roundsPlanner([['Oslo', 'Rome'], ['Paris']]);
    const loop = createToolLoop({ model, planner, tools: [weather] });

    const events: ToolLoopStreamEvent[] = [];
    for await (const event of loop.stream('Weather?')) events.push(event);

    expect(events.map(show)).toEqual([
      'round-started 0',
      'state running.planning',
      'commands-planned 0 execute 2',
      'state running.executing',
      'record 0.0 Oslo',
      'record 0.1 Rome',
      'round-started 1',
      'state running.planning',
      'commands-planned 1 execute 1',
      'state running.executing',
      'record 1.0 Paris',
      'round-started 2',
      'state running.planning',
      'commands-planned 2 response 0',
      'state running.responding',
      'text-delta Snow ',
      'text-delta and ',
      'text-delta sun.',
      'state done',
      'final done',
    ]);
    const record = events.find((e) => e.type === 'record');
    expect(record).toMatchObject({
      type: 'record',
      roundIndex: 0,
      index: 0,
      record: { purpose: 'Weather in Oslo', success: true, result: { city: 'Oslo', sky: 'snow' } },
    });
    const final = events.at(-1);
    if (final?.type !== 'final' || final.output.status !== 'done') throw new Error('no final');
    expect(final.output.response?.text).toBe('Snow and sun.');
    expect(final.output.toolLogs).toHaveLength(3);
    expect(final.output.stopReason).toBe('response');
  });

  it('streams only the final response as text deltas, never the default planner JSON', async () => {
    const model = new ScriptedModel([
      {
        chunks: [
          '{"nextAction": "execute", ',
          '"executionCommands": [{"toolName": "weather", "toolKwargs": {"city": "Rome"}}]}',
        ],
      },
      { chunks: ['{"nextAction": "response"', ', "executionCommands": []}'] },
      { chunks: ['Sun ', 'in Rome.'] },
    ]);
    const events: ToolLoopStreamEvent[] = [];
    for await (const event of createToolLoop({ model, tools: [weather] }).stream('Rome?')) {
      events.push(event);
    }
    model.assertComplete();
    const deltas = events.flatMap((e) => (e.type === 'text-delta' ? [e.delta] : []));
    expect(deltas).toEqual(['Sun ', 'in Rome.']);
    const planned = events.flatMap((e) => (e.type === 'commands-planned' ? [e] : []));
    expect(planned.map((e) => [e.roundIndex, e.plan.nextAction, e.shortCircuited])).toEqual([
      [0, 'execute', false],
      [1, 'response', true],
    ]);
  });

  it('streams records as they finish, each with its command index', async () => {
    const gates = new Map([
      ['A', deferred()],
      ['B', deferred()],
    ]);
    const slow = defineTool({
      name: 'slow',
      description: 'Waits for the test.',
      input: z.object({ id: z.string() }),
      execute: async ({ id }) => {
        await gates.get(id)?.promise;
        return id;
      },
    });
    const planner = vi.fn<Planner>((context) =>
      context.roundIndex === 0
        ? {
            nextAction: 'execute',
            executionCommands: [
              { toolName: 'slow', toolKwargs: { id: 'A' } },
              { toolName: 'slow', toolKwargs: { id: 'B' } },
            ],
          }
        : { nextAction: 'response' },
    );
    const records: [number, unknown][] = [];
    for await (const event of createToolLoop({ planner, tools: [slow] }).stream('go')) {
      if (event.type === 'state' && event.state === 'running.executing') {
        gates.get('B')?.resolve();
      }
      if (event.type === 'record') {
        records.push([event.index, event.record.result]);
        gates.get('A')?.resolve();
      }
    }
    expect(records).toEqual([
      [1, 'B'],
      [0, 'A'],
    ]);
  });

  it('stops the run when the reader breaks out early: running tools see the abort', async () => {
    const started = deferred();
    const signals: AbortSignal[] = [];
    const hang = defineTool({
      name: 'hang',
      description: 'Never finishes on its own.',
      input: z.object({}),
      execute: async (_args, { signal }) => {
        signals.push(signal);
        started.resolve();
        await aborted(signal);
        return 'cancelled';
      },
    });
    const model = new ScriptedModel([]);
    const planner = vi.fn<Planner>(() => ({
      nextAction: 'execute',
      executionCommands: [{ toolName: 'hang', toolKwargs: {} }],
    }));
    const seen: string[] = [];
    for await (const event of createToolLoop({ model, planner, tools: [hang] }).stream('go')) {
      seen.push(event.type);
      if (event.type === 'state' && event.state === 'running.executing') {
        await started.promise;
        break;
      }
    }
    expect(await within(1_000, aborted(signals[0] as AbortSignal))).not.toBe('hung');
    expect(signals[0]?.aborted).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(planner).toHaveBeenCalledTimes(1);
    expect(model.callCount).toBe(0);
    expect(seen).not.toContain('final');
  });

  it('stops the final response when the reader breaks out during it', async () => {
    const scripted = new ScriptedModel([
      { chunks: ['one ', 'two ', 'three'], chunkDelayMs: 5_000 },
    ]);
    const signals: AbortSignal[] = [];
    const model: LanguageModel = {
      specificationVersion: scripted.specificationVersion,
      provider: 'spy',
      modelId: 'spy',
      generate: (request, options = {}) => scripted.generate(request, options),
      stream(request, options = {}) {
        if (options.signal) signals.push(options.signal);
        return scripted.stream(request, options);
      },
    };
    const loop = createToolLoop({ model, planner: roundsPlanner([['Oslo']]), tools: [weather] });
    const deltas: string[] = [];
    for await (const event of loop.stream('go')) {
      if (event.type === 'text-delta') {
        deltas.push(event.delta);
        break;
      }
    }
    expect(deltas).toEqual(['one ']);
    expect(signals).toHaveLength(1);
    expect(await within(1_000, aborted(signals[0] as AbortSignal))).not.toBe('hung');
  });

  it('ends the iteration with the typed error of a failed run', async () => {
    const planner = vi.fn<Planner>(() => 'not a plan');
    const events: ToolLoopStreamEvent[] = [];
    let caught: unknown;
    try {
      for await (const event of createToolLoop({
        planner,
        tools: [weather],
        planRetries: 0,
      }).stream('go'))
        events.push(event);
    } catch (error) {
      caught = error;
    }
    expect((caught as { code?: string })?.code).toBe('PROTOCOL_ERROR');
    const final = events.at(-1);
    expect(final?.type).toBe('final');
    expect(final?.type === 'final' && final.output.status).toBe('failed');
  });
});
