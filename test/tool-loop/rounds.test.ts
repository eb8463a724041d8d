// SPEC T1, T2, T3, T7: planning and executing rounds, the round state the planner sees, the
// hard bound on executions, and every stop condition. Only the public API is used.
import {
  AbortError,
  createToolLoop,
  type Planner,
  type PlannerContext,
  ProtocolError,
  type ToolLoopPartialResult,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { messagesOf, rejectionOf } from '../chain/helpers.js';
import { searchTool } from './search-tool.js';

type Step = unknown | ((context: PlannerContext) => unknown);

/**
 * A planner that answers with `steps[i]` on its i-th call (a function step is called with the
 * context) and records every context it saw. Calls beyond the script fail the run loudly.
 */
function scriptedPlanner(steps: readonly Step[]) {
  const contexts: PlannerContext[] = [];
  const planner: Planner = (context) => {
    contexts.push(context);
    const index = contexts.length - 1;
    if (index >= steps.length) {
      throw new Error(`the planner was scripted for ${steps.length} call(s), got #${index + 1}`);
    }
    const step = steps[index];
    return typeof step === 'function' ? (step as (c: PlannerContext) => unknown)(context) : step;
  };
  return { planner, contexts };
}

function searchPlan(...queries: string[]) {
  return {
    nextAction: 'execute',
    executionCommands: queries.map((q) => ({
      purpose: `Search ${q}`,
      toolName: 'search',
      toolKwargs: { q },
      todoSuggestion: `read ${q}`,
    })),
  };
}

const RESPOND = { nextAction: 'response', executionCommands: [] };

function partialOf(error: ProtocolError): ToolLoopPartialResult {
  const partial = error.partial as ToolLoopPartialResult | undefined;
  if (!partial) throw new Error(`${error.name} carries no partial result`);
  return partial;
}

function record(q: string) {
  return {
    purpose: `Search ${q}`,
    toolName: 'search',
    kwargs: { q },
    todoSuggestion: `read ${q}`,
    next: `read ${q}`,
    success: true,
    result: `results for ${q}`,
    error: null,
  };
}

describe('rounds and the round state (T1, T2, T3)', () => {
  it('shows each round the records of the rounds before it, then answers', async () => {
    const { tool, execute } = searchTool();
    const { planner, contexts } = scriptedPlanner([searchPlan('a', 'b'), searchPlan('c'), RESPOND]);
    const loop = createToolLoop({ planner, tools: [tool], maxRounds: 4 });

    const result = await loop.invoke('find things');

    expect(contexts).toHaveLength(3);
    expect(contexts[0]).toEqual({
      userInput: 'find things',
      extraRequirement: '',
      availableTools: [tool.spec],
      donePlans: [],
      lastRoundResult: [],
      roundIndex: 0,
      maxRounds: 4,
    });
    expect(contexts[1]).toMatchObject({
      roundIndex: 1,
      maxRounds: 4,
      donePlans: [record('a'), record('b')],
      lastRoundResult: [record('a'), record('b')],
    });
    expect(contexts[1]).not.toHaveProperty('planError');
    expect(contexts[2]).toMatchObject({
      roundIndex: 2,
      maxRounds: 4,
      donePlans: [record('a'), record('b'), record('c')],
      lastRoundResult: [record('c')],
    });

    expect(execute).toHaveBeenCalledTimes(3);
    expect(result.status).toBe('done');
    expect(result.stopReason).toBe('response');
    expect(result.rounds).toBe(2);
    expect(result.toolLogs).toEqual([record('a'), record('b'), record('c')]);
    expect(result.plans.map((p) => [p.roundIndex, p.plan.nextAction, p.shortCircuited])).toEqual([
      [0, 'execute', false],
      [1, 'execute', false],
      [2, 'response', false],
    ]);
    expect(result.plans[0]?.plan.executionCommands).toEqual([
      { purpose: 'Search a', toolName: 'search', toolKwargs: { q: 'a' }, todoSuggestion: 'read a' },
      { purpose: 'Search b', toolName: 'search', toolKwargs: { q: 'b' }, todoSuggestion: 'read b' },
    ]);
    // No model: no final response, the action results only.
    expect(result.answer).toBeUndefined();
    expect(result.actionResults).toEqual({
      'Search a': 'results for a',
      'Search b': 'results for b',
      'Search c': 'results for c',
    });
  });

  it('passes the extraRequirement of invoke({ userInput, extraRequirement }) to every round', async () => {
    const { tool } = searchTool();
    const { planner, contexts } = scriptedPlanner([searchPlan('x'), RESPOND]);
    const loop = createToolLoop({ planner, tools: [tool] });
    await loop.invoke({ userInput: 'q', extraRequirement: 'cite two sources' });
    expect(contexts.map((c) => [c.userInput, c.extraRequirement, c.maxRounds])).toEqual([
      ['q', 'cite two sources', 5],
      ['q', 'cite two sources', 5],
    ]);
  });
});

describe('maxRounds is a hard bound on executions (T2, T7)', () => {
  it.each([1, 2, 3])(
    'maxRounds %i: exactly that many rounds execute and the planner is asked that many times',
    async (maxRounds) => {
      const { tool, execute } = searchTool();
      const planner = vi.fn<Planner>((context) => searchPlan(`round ${context.roundIndex}`));
      const loop = createToolLoop({ planner, tools: [tool], maxRounds });

      const result = await loop.invoke('never satisfied');

      expect(execute).toHaveBeenCalledTimes(maxRounds);
      expect(planner).toHaveBeenCalledTimes(maxRounds);
      expect(result.stopReason).toBe('max-rounds');
      expect(result.rounds).toBe(maxRounds);
      expect(result.plans).toHaveLength(maxRounds);
      expect(result.toolLogs.map((r) => r.kwargs)).toEqual(
        Array.from({ length: maxRounds }, (_, i) => ({ q: `round ${i}` })),
      );
      expect(planner.mock.calls.map(([context]) => context.roundIndex)).toEqual(
        Array.from({ length: maxRounds }, (_, i) => i),
      );
    },
  );

  it('maxRounds 0 executes nothing and never calls the planner', async () => {
    const { tool, execute } = searchTool();
    const planner = vi.fn<Planner>(() => searchPlan('x'));
    const result = await createToolLoop({ planner, tools: [tool], maxRounds: 0 }).invoke('hi');
    expect(planner).not.toHaveBeenCalled();
    expect(execute).not.toHaveBeenCalled();
    expect(result).toMatchObject({
      stopReason: 'max-rounds',
      rounds: 0,
      plans: [],
      toolLogs: [],
      actionResults: {},
      extraInstruction: undefined,
    });
  });

  it('defaults to 5 rounds', async () => {
    const { tool, execute } = searchTool();
    const planner = vi.fn<Planner>(() => searchPlan('again'));
    const result = await createToolLoop({ planner, tools: [tool] }).invoke('loop');
    expect(execute).toHaveBeenCalledTimes(5);
    expect(planner).toHaveBeenCalledTimes(5);
    expect(result.stopReason).toBe('max-rounds');
  });
});

describe('the other stop conditions (T7)', () => {
  it('with no tools, returns without calling the planner (tools-off)', async () => {
    const planner = vi.fn<Planner>(() => searchPlan('x'));
    const result = await createToolLoop({ planner, tools: [] }).invoke('hello');
    expect(planner).not.toHaveBeenCalled();
    expect(result).toMatchObject({ stopReason: 'tools-off', rounds: 0, plans: [], toolLogs: [] });

    const bare = await createToolLoop({ planner }).invoke('hello');
    expect(planner).not.toHaveBeenCalled();
    expect(bare.stopReason).toBe('tools-off');
  });

  it('with no tools and a model, answers with the model alone (no planner call)', async () => {
    const model = new ScriptedModel([{ text: 'Hello there.' }]);
    const result = await createToolLoop({ model }).invoke('hello');
    expect(result.stopReason).toBe('tools-off');
    expect(result.answer).toBe('Hello there.');
    expect(model.requests[0]?.responseFormat).toBeUndefined();
    model.assertComplete();
  });

  it('stops with no-commands when an execute plan has no valid command', async () => {
    const { tool, execute } = searchTool();
    const { planner, contexts } = scriptedPlanner([
      {
        nextAction: 'execute',
        executionCommands: [{ purpose: 'nameless', toolName: '  ', toolKwargs: { q: 'x' } }, 42],
      },
    ]);
    const result = await createToolLoop({ planner, tools: [tool] }).invoke('go');
    expect(contexts).toHaveLength(1);
    expect(execute).not.toHaveBeenCalled();
    expect(result.stopReason).toBe('no-commands');
    expect(result.rounds).toBe(0);
    expect(result.plans[0]?.plan).toEqual({ nextAction: 'execute', executionCommands: [] });
  });

  it('stops with response when the plan says useTool: false, even with commands', async () => {
    const { tool, execute } = searchTool();
    const { planner } = scriptedPlanner([{ ...searchPlan('x'), useTool: false }]);
    const result = await createToolLoop({ planner, tools: [tool] }).invoke('go');
    expect(execute).not.toHaveBeenCalled();
    expect(result.rounds).toBe(0);
    expect(result.toolLogs).toEqual([]);
    // The recorded plan says what the loop did with it: respond, not execute nothing.
    expect(result.plans[0]?.plan).toEqual({ nextAction: 'response', executionCommands: [] });
    expect(result.stopReason).toBe('response');
  });

  it('stops with response when the plan responds, ignoring its commands', async () => {
    const { tool, execute } = searchTool();
    const { planner } = scriptedPlanner([{ ...searchPlan('x'), nextAction: 'Response' }]);
    const result = await createToolLoop({ planner, tools: [tool] }).invoke('go');
    expect(execute).not.toHaveBeenCalled();
    expect(result.stopReason).toBe('response');
    expect(result.plans[0]?.plan).toEqual({ nextAction: 'response', executionCommands: [] });
  });
});

describe('the default model planner (T3)', () => {
  function planText(plan: unknown) {
    return { text: JSON.stringify(plan) };
  }

  it.each([true, false])(
    'sends a tool_loop_plan json_schema and the round context as JSON (instant %s)',
    async (instant) => {
      const { tool } = searchTool();
      const model = new ScriptedModel([
        planText(searchPlan('statecharts')),
        planText(RESPOND),
        { text: 'Statecharts are hierarchical state machines.' },
      ]);
      const loop = createToolLoop({ model, tools: [tool], instant, maxRounds: 3 });

      const result = await loop.invoke({
        userInput: 'What is a statechart?',
        extraRequirement: 'Answer in one sentence.',
      });

      expect(result.answer).toBe('Statecharts are hierarchical state machines.');
      expect(result.toolLogs).toEqual([record('statecharts')]);
      model.assertComplete();

      const [first, second, final] = model.requests;
      for (const request of [first, second]) {
        expect(request?.responseFormat).toMatchObject({
          type: 'json_schema',
          name: 'tool_loop_plan',
        });
        expect(request?.tools ?? []).toEqual([]);
      }
      const format = first?.responseFormat;
      if (format?.type !== 'json_schema') throw new Error('no json_schema response format');
      // nextAction comes first, so a model writing in schema order decides early (T5).
      expect(Object.keys(format.schema.properties as object)[0]).toBe('nextAction');

      const roles = messagesOf(first).map((m) => m.role);
      expect(roles).toEqual(['system', 'user']);
      const contextOf = (request: typeof first) => {
        const user = messagesOf(request).find((m) => m.role === 'user') as { content: string };
        return JSON.parse(user.content) as PlannerContext;
      };
      const round0 = contextOf(first);
      expect(round0).toEqual({
        userInput: 'What is a statechart?',
        extraRequirement: 'Answer in one sentence.',
        availableTools: [JSON.parse(JSON.stringify(tool.spec))],
        donePlans: [],
        lastRoundResult: [],
        roundIndex: 0,
        maxRounds: 3,
      });
      const round1 = contextOf(second);
      expect(round1).toMatchObject({
        userInput: 'What is a statechart?',
        extraRequirement: 'Answer in one sentence.',
        donePlans: [record('statecharts')],
        lastRoundResult: [record('statecharts')],
        roundIndex: 1,
        maxRounds: 3,
      });

      // The final response is not a planning call.
      expect(final?.responseFormat).toBeUndefined();
      const finalUser = messagesOf(final).find((m) => m.role === 'user') as { content: string };
      expect(finalUser.content).toContain('What is a statechart?');
      expect(finalUser.content).toContain('Answer in one sentence.');
    },
  );
});

describe('a planner answer that is not a plan', () => {
  it('is retried once with planError in the context, then the run goes on', async () => {
    const { tool, execute } = searchTool();
    const { planner, contexts } = scriptedPlanner(['not json', searchPlan('x'), RESPOND]);
    const result = await createToolLoop({ planner, tools: [tool] }).invoke('go');

    expect(contexts).toHaveLength(3);
    expect(contexts[0]).not.toHaveProperty('planError');
    expect(contexts[1]?.roundIndex).toBe(0);
    expect(contexts[1]?.planError).toEqual(expect.stringContaining('not json'));
    // The next round starts clean.
    expect(contexts[2]?.roundIndex).toBe(1);
    expect(contexts[2]).not.toHaveProperty('planError');
    expect(execute).toHaveBeenCalledTimes(1);
    expect(result.stopReason).toBe('response');
    expect(result.plans.map((p) => p.roundIndex)).toEqual([0, 1]);
  });

  it('treats a non-object answer (a number) as not a plan', async () => {
    const { tool } = searchTool();
    const { planner, contexts } = scriptedPlanner([42, RESPOND]);
    const result = await createToolLoop({ planner, tools: [tool] }).invoke('go');
    expect(contexts).toHaveLength(2);
    expect(contexts[1]?.planError).toEqual(expect.any(String));
    expect(contexts[1]?.planError).not.toBe('');
    expect(result.stopReason).toBe('response');
  });

  it('rejects with a ProtocolError keeping earlier rounds when planRetries is 0', async () => {
    const { tool } = searchTool();
    const { planner, contexts } = scriptedPlanner([searchPlan('a'), 'still not json']);
    const loop = createToolLoop({ planner, tools: [tool], planRetries: 0 });

    const error = await rejectionOf(ProtocolError, loop.invoke('go'));

    expect(contexts).toHaveLength(2);
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(error.message).toContain('round 2');
    const partial = partialOf(error);
    expect(partial.toolLogs).toEqual([record('a')]);
    expect(partial.output?.status).toBe('failed');
    expect(partial.output?.rounds).toBe(1);
  });

  it('rejects with a ProtocolError after two malformed answers with the default planRetries', async () => {
    const { tool } = searchTool();
    const { planner, contexts } = scriptedPlanner([searchPlan('a'), 'nope', [1, 2]]);
    const error = await rejectionOf(
      ProtocolError,
      createToolLoop({ planner, tools: [tool] }).invoke('go'),
    );
    expect(contexts.map((c) => c.roundIndex)).toEqual([0, 1, 1]);
    expect(contexts[2]?.planError).toEqual(expect.stringContaining('nope'));
    expect(error.message).toContain('2 attempt(s)');
    expect(partialOf(error).toolLogs).toEqual([record('a')]);
  });

  it('retries the default model planner with the error in the next request', async () => {
    const { tool } = searchTool();
    const model = new ScriptedModel([
      { text: 'I would search for it.' },
      { text: JSON.stringify(RESPOND) },
    ]);
    const result = await createToolLoop({ model, tools: [tool], respond: false }).invoke('go');
    expect(result.stopReason).toBe('response');
    model.assertComplete();
    const user = messagesOf(model.requests[1]).find((m) => m.role === 'user') as {
      content: string;
    };
    const context = JSON.parse(user.content) as PlannerContext;
    expect(context.planError).toEqual(expect.stringContaining('I would search for it.'));
    expect(context.roundIndex).toBe(0);
  });
});

describe('planOnly', () => {
  it('returns one round of normalized commands and executes nothing', async () => {
    const { tool, execute } = searchTool();
    const { planner, contexts } = scriptedPlanner([
      {
        next_action: 'EXECUTE',
        tool_commands: [
          { purpose: '', tool_name: 'search', tool_kwargs: 'q=x', todo_suggestion: 'read' },
          { purpose: 'dropped', toolName: '' },
        ],
      },
    ]);
    const loop = createToolLoop({ planner, tools: [tool] });

    const plan = await loop.planOnly({ userInput: 'plan it', extraRequirement: 'be brief' });

    expect(plan).toEqual({
      nextAction: 'execute',
      executionCommands: [
        { purpose: 'Use search', toolName: 'search', toolKwargs: {}, todoSuggestion: 'read' },
      ],
    });
    expect(execute).not.toHaveBeenCalled();
    expect(contexts).toHaveLength(1);
    expect(contexts[0]).toMatchObject({
      userInput: 'plan it',
      extraRequirement: 'be brief',
      roundIndex: 0,
      donePlans: [],
      lastRoundResult: [],
      maxRounds: 5,
    });
  });

  it('asks the default model planner once', async () => {
    const { tool, execute } = searchTool();
    const model = new ScriptedModel([{ text: JSON.stringify(searchPlan('y')) }]);
    const plan = await createToolLoop({ model, tools: [tool] }).planOnly('plan');
    expect(plan.executionCommands.map((c) => c.toolKwargs)).toEqual([{ q: 'y' }]);
    expect(execute).not.toHaveBeenCalled();
    expect(model.requests[0]?.responseFormat).toMatchObject({ name: 'tool_loop_plan' });
    model.assertComplete();
  });

  it('with no tools, returns a response plan without calling the planner', async () => {
    const planner = vi.fn<Planner>(() => searchPlan('x'));
    const plan = await createToolLoop({ planner }).planOnly('hello');
    expect(plan).toEqual({ nextAction: 'response', executionCommands: [] });
    expect(planner).not.toHaveBeenCalled();
  });

  it('rejects with an AbortError for an already aborted signal, spending no model call', async () => {
    const { tool } = searchTool();
    const model = new ScriptedModel([{ text: JSON.stringify(searchPlan('x')) }]);
    await rejectionOf(
      AbortError,
      createToolLoop({ model, tools: [tool] }).planOnly('plan', { signal: AbortSignal.abort() }),
    );
    expect(model.callCount).toBe(0);
  });

  it('rejects with an AbortError for an already aborted signal, with a planner function', async () => {
    const { tool } = searchTool();
    const planner = vi.fn<Planner>(() => searchPlan('x'));
    await rejectionOf(
      AbortError,
      createToolLoop({ planner, tools: [tool] }).planOnly('plan', { signal: AbortSignal.abort() }),
    );
  });

  it('rejects with a ProtocolError when the planner answers with no plan', async () => {
    const { tool } = searchTool();
    const planner = vi.fn<Planner>(() => 'no plan here');
    await rejectionOf(
      ProtocolError,
      createToolLoop({ planner, tools: [tool], planRetries: 0 }).planOnly('x'),
    );
  });
});
