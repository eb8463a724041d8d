// SPEC H3, budgets: maxToolCalls (an over-budget request runs none of its calls and one final
// call without tools answers), maxTokens and maxCost checked before each model call as well
// as after, maxIterations 0 and Infinity, and the last generation's tools running at the
// iteration limit with earlyStopping. Only the public API is used.

import {
  type ChainOptions,
  ConfigError,
  CostLimitError,
  createChain,
  createToolLoop,
  defineTool,
  type Message,
  memoryStore,
  type Planner,
  ProtocolError,
  TokenLimitError,
  Transcript,
  userMessage,
} from 'statecraft';
import { pendingToolCalls, validatedTranscript } from 'statecraft/compile';
import { BUDGET_STOP_MESSAGE, EARLY_STOP_MESSAGE } from 'statecraft/machines';
import { ScriptedModel, type ScriptedTurn } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { thrownBy } from '../support/errors.js';
import { messagesOf, partialOf, rejectionOf, systemNotes, toolMessages } from './helpers.js';

function pingTool() {
  const execute = vi.fn(({ n }: { n: number }) => `pong ${n}`);
  const tool = defineTool({
    name: 'ping',
    description: 'Answers pong.',
    input: z.object({ n: z.number() }),
    execute,
  });
  return { tool, execute };
}

/** A turn that calls `ping` once per number. */
function pings(...ns: number[]): ScriptedTurn {
  return {
    text: `pinging ${ns.join(', ')}`,
    toolCalls: ns.map((n) => ({ id: `call_${n}`, name: 'ping', arguments: { n } })),
  };
}

/** A transcript can go on: valid, no call unanswered, and a new run accepts it. */
async function continues(transcript: readonly Message[]) {
  expect(() => validatedTranscript(transcript)).not.toThrow();
  expect(pendingToolCalls(Transcript.from(transcript)).calls).toEqual([]);
  const next = createChain({ model: new ScriptedModel([{ text: 'ok' }]) });
  await expect(
    next.invoke({ messages: [...transcript, userMessage('go on')] }),
  ).resolves.toMatchObject({ text: 'ok' });
}

describe('maxToolCalls (H3)', () => {
  it('runs none of an over-budget request, and answers with one final call without tools', async () => {
    const { tool, execute } = pingTool();
    const model = new ScriptedModel([pings(1, 2), pings(3, 4), { text: 'pong 1 and 2' }]);
    const chain = createChain({ model, tools: [tool], maxToolCalls: 3 });

    const run = await chain.invoke('ping away');

    // 2 calls ran; 2 more would make 4 of 3: none of them runs.
    expect(execute.mock.calls.map(([args]) => args)).toEqual([{ n: 1 }, { n: 2 }]);
    model.assertComplete();
    expect(run).toMatchObject({
      status: 'succeeded',
      text: 'pong 1 and 2',
      stopped: { reason: 'maxToolCalls', method: 'generate' },
      iterations: 3,
    });
    const final = model.requests[2];
    expect(final?.toolChoice).toBe('none');
    // The final call's transcript lacks the message that asked for the over-budget calls.
    const messages = messagesOf(final);
    expect(messages.some((m) => m.role === 'assistant' && m.content === 'pinging 3, 4')).toBe(
      false,
    );
    expect(toolMessages(messages).map((m) => m.toolCallId)).toEqual(['call_1', 'call_2']);
    expect(systemNotes(messages).at(-1)).toMatch(
      /cannot call tools any more: the tool-call budget/,
    );
    // So does the run's: it is valid input for a new run.
    expect(run.transcript.some((m) => m.role === 'assistant' && m.content === 'pinging 3, 4')).toBe(
      false,
    );
    await continues(run.transcript);
    // The over-budget generation is a step (its tokens count), marked, with no results.
    expect(run.steps.map((s) => [s.iteration, s.toolResults.length, s.overBudget])).toEqual([
      [1, 2, undefined],
      [2, 0, true],
      [3, 0, undefined],
    ]);
    expect(run.intermediateSteps.map((s) => s.action.id)).toEqual(['call_1', 'call_2']);
  });

  it('with maxToolCalls 0, no tool ever runs', async () => {
    const { tool, execute } = pingTool();
    const model = new ScriptedModel([pings(1), { text: 'no tools, then' }]);
    const run = await createChain({ model, tools: [tool], maxToolCalls: 0 }).invoke('go');
    expect(execute).not.toHaveBeenCalled();
    expect(run.text).toBe('no tools, then');
    expect(run.transcript.map((m) => m.role)).toEqual(['user', 'system', 'assistant']);
    await continues(run.transcript);
  });

  it('lets calls up to the budget run, exactly', async () => {
    const { tool, execute } = pingTool();
    const model = new ScriptedModel([pings(1, 2), pings(3), { text: 'done' }]);
    const run = await createChain({ model, tools: [tool], maxToolCalls: 3 }).invoke('go');
    expect(execute).toHaveBeenCalledTimes(3);
    expect(run.stopped).toBeUndefined();
  });

  it("makes its final call whatever earlyStopping says ('force' too)", async () => {
    const { tool } = pingTool();
    const model = new ScriptedModel([pings(1), { text: 'answered' }]);
    const run = await createChain({
      model,
      tools: [tool],
      maxToolCalls: 0,
      earlyStopping: 'force',
    }).invoke('go');
    expect(run).toMatchObject({
      text: 'answered',
      stopped: { reason: 'maxToolCalls', method: 'generate' },
    });
  });

  it('fails with the budget the final call would cross, making no final call', async () => {
    const { tool } = pingTool();
    const model = new ScriptedModel([
      { ...pings(1), usage: { inputTokens: 150, outputTokens: 40 } },
    ]);
    const error = await rejectionOf(
      TokenLimitError,
      createChain({ model, tools: [tool], maxToolCalls: 0, maxTokens: 200 }).invoke('go'),
    );
    expect(model.callCount).toBe(1);
    expect(error.message).toMatch(
      /^maxToolCalls \(0\) was reached, and the final call without tools would exceed maxTokens \(200\)/,
    );
    expect(error).toMatchObject({ limit: 200, used: 190 });
    await continues(partialOf(error).transcript);

    // 'force' does not answer for it: maxToolCalls asks for an answer, not a stop message.
    const forced = new ScriptedModel([
      { ...pings(1), usage: { inputTokens: 150, outputTokens: 40 } },
    ]);
    await rejectionOf(
      TokenLimitError,
      createChain({
        model: forced,
        tools: [tool],
        maxToolCalls: 0,
        maxTokens: 200,
        earlyStopping: 'force',
      }).invoke('go'),
    );
  });
});

describe('maxToolCalls in a tool loop (H3)', () => {
  function searchTool() {
    const execute = vi.fn(({ q }: { q: string }) => `results for ${q}`);
    const tool = defineTool({
      name: 'search',
      description: 'Searches.',
      input: z.object({ q: z.string() }),
      execute,
    });
    return { tool, execute };
  }
  const plan = (...qs: string[]) => ({
    nextAction: 'execute',
    executionCommands: qs.map((q) => ({
      purpose: `Search ${q}`,
      toolName: 'search',
      toolKwargs: { q },
    })),
  });

  it('runs none of a plan that would pass it, and goes to the response with what it has', async () => {
    const { tool, execute } = searchTool();
    const planner = vi
      .fn<Planner>()
      .mockReturnValueOnce(plan('a', 'b'))
      .mockReturnValueOnce(plan('c', 'd'));
    const responder = vi.fn(() => 'answer from a and b');
    const loop = createToolLoop({ planner, tools: [tool], maxToolCalls: 3, respond: responder });

    const result = await loop.invoke('find');

    expect(execute.mock.calls.map(([args]) => args)).toEqual([{ q: 'a' }, { q: 'b' }]);
    expect(planner).toHaveBeenCalledTimes(2);
    expect(result).toMatchObject({
      stopReason: 'max-tool-calls',
      rounds: 1,
      answer: 'answer from a and b',
      actionResults: { 'Search a': 'results for a', 'Search b': 'results for b' },
    });
    // The plan that was not run is still shown.
    expect(result.plans.map((p) => p.plan.executionCommands.length)).toEqual([2, 2]);
  });

  it('asks the planner no more once the budget is spent', async () => {
    const { tool, execute } = searchTool();
    const planner = vi.fn<Planner>().mockReturnValue(plan('a', 'b'));
    const loop = createToolLoop({ planner, tools: [tool], maxToolCalls: 2, respond: false });
    const result = await loop.invoke('find');
    expect(execute).toHaveBeenCalledTimes(2);
    expect(planner).toHaveBeenCalledTimes(1);
    expect(result.stopReason).toBe('max-tool-calls');

    const none = vi.fn<Planner>();
    const zero = createToolLoop({ planner: none, tools: [tool], maxToolCalls: 0, respond: false });
    expect((await zero.invoke('find')).stopReason).toBe('max-tool-calls');
    expect(none).not.toHaveBeenCalled();
  });
});

describe('maxTokens, checked before each model call (H3)', () => {
  it('makes no call that would pass the budget: with a budget of 200, a run no longer spends 355', async () => {
    // The case: the first call spends 150, the second would spend 205.
    const { tool, execute } = pingTool();
    const model = new ScriptedModel([
      { ...pings(1), usage: { inputTokens: 100, outputTokens: 50 } },
      { text: 'the answer', usage: { inputTokens: 155, outputTokens: 50 } },
    ]);
    const chain = createChain({ model, tools: [tool], maxTokens: 200 });

    const error = await rejectionOf(TokenLimitError, chain.invoke('go'));

    expect(model.callCount).toBe(1);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(error).toMatchObject({ code: 'TOKEN_LIMIT', limit: 200, used: 150 });
    // About 100 tokens of input as before, what the call and its result added, and 50 of output.
    expect(error.estimate).toBeGreaterThan(150);
    expect(error.message).toBe(
      `The next model call would exceed maxTokens (200): about ${error.estimate} tokens with 150 spent; it was not made`,
    );
    const partial = partialOf(error);
    expect(partial.usage.totalTokens).toBe(150);
    expect(partial.details().modelCalls).toHaveLength(1);
    await continues(partial.transcript);
  });

  it('reserves modelSettings.maxOutputTokens for the output', async () => {
    const model = () =>
      new ScriptedModel([
        { ...pings(1), usage: { inputTokens: 20, outputTokens: 5 } },
        { text: 'done', usage: { inputTokens: 30, outputTokens: 5 } },
      ]);
    const options = { tools: [pingTool().tool], maxTokens: 150 };
    // Without it the largest output so far (5) is reserved: the call fits.
    await expect(createChain({ model: model(), ...options }).invoke('go')).resolves.toMatchObject({
      text: 'done',
    });
    // 100 reserved does not fit the 125 left with the input.
    const reserved = model();
    await rejectionOf(
      TokenLimitError,
      createChain({ model: reserved, ...options, modelSettings: { maxOutputTokens: 100 } }).invoke(
        'go',
      ),
    );
    expect(reserved.callCount).toBe(1);
  });

  it("'force' ends a run its budget stops with the budget's stop message", async () => {
    const model = new ScriptedModel([
      { ...pings(1), usage: { inputTokens: 100, outputTokens: 50 } },
    ]);
    const run = await createChain({
      model,
      tools: [pingTool().tool],
      maxTokens: 200,
      earlyStopping: 'force',
    }).invoke('go');
    expect(run).toMatchObject({
      result: BUDGET_STOP_MESSAGE,
      text: BUDGET_STOP_MESSAGE,
      stopped: { reason: 'maxTokens', method: 'force' },
    });
    expect(model.callCount).toBe(1);
    await continues(run.transcript);
  });

  it("'generate' makes its final call only if it fits", async () => {
    const { tool } = pingTool();
    const options = { tools: [tool], maxIterations: 1, earlyStopping: 'generate' } as const;
    // It fits: the final answer reads the last generation's results.
    const fits = new ScriptedModel([
      { ...pings(1), usage: { inputTokens: 20, outputTokens: 10 } },
      { text: 'pong 1, finally', usage: { inputTokens: 40, outputTokens: 10 } },
    ]);
    const run = await createChain({ model: fits, maxTokens: 200, ...options }).invoke('go');
    expect(run).toMatchObject({ text: 'pong 1, finally', stopped: { method: 'generate' } });

    // It does not: no final call, and the limit that fired is the failure.
    const tight = new ScriptedModel([
      { ...pings(1), usage: { inputTokens: 20, outputTokens: 10 } },
    ]);
    const error = await rejectionOf(
      ProtocolError,
      createChain({ model: tight, maxTokens: 60, ...options }).invoke('go'),
    );
    expect(tight.callCount).toBe(1);
    expect(error.message).toMatch(
      /^Reached maxIterations \(1\) without a final answer; earlyStopping 'generate' made no final call: it would exceed maxTokens \(60\): about \d+ tokens with 30 spent$/,
    );
  });

  it("a budget stop with 'generate' fails with the budget's error: the final call would not fit either", async () => {
    const model = new ScriptedModel([
      { ...pings(1), usage: { inputTokens: 100, outputTokens: 50 } },
    ]);
    await rejectionOf(
      TokenLimitError,
      createChain({
        model,
        tools: [pingTool().tool],
        maxTokens: 200,
        earlyStopping: 'generate',
      }).invoke('go'),
    );
    expect(model.callCount).toBe(1);
  });
});

describe('maxCost and prices (H3)', () => {
  // $10 per million input tokens, $30 per million output: 1,000 in and 100 out cost $0.013.
  const prices = { inputPerMillion: 10, cachedInputPerMillion: 5, outputPerMillion: 30 };
  const call = (step: ScriptedTurn): ScriptedTurn => ({
    ...step,
    usage: { inputTokens: 1_000, outputTokens: 100 },
  });

  it('puts the cost on the result and in details()', async () => {
    const model = new ScriptedModel([
      call(pings(1)),
      { text: 'done', usage: { inputTokens: 1_000, outputTokens: 100, cachedInputTokens: 800 } },
    ]);
    const run = await createChain({ model, tools: [pingTool().tool], prices }).invoke('go');
    // The second call: 200 input at $10, 800 cached at $5, 100 output at $30 = $0.009.
    expect(run.cost).toBeCloseTo(0.013 + 0.009, 12);
    const details = run.details();
    expect(details.modelCalls.map((c) => c.cost)).toEqual([
      expect.closeTo(0.013, 12),
      expect.closeTo(0.009, 12),
    ]);
    expect(details.cost).toBeCloseTo(run.cost ?? Number.NaN, 12);
    // Without prices there is no cost anywhere.
    const free = await createChain({ model: new ScriptedModel([{ text: 'hi' }]) }).invoke('go');
    expect(free.cost).toBeUndefined();
    expect(free.details().cost).toBeUndefined();
    expect('cost' in free).toBe(false);
  });

  it('prices by model id from a table', async () => {
    const model = new ScriptedModel([call({ text: 'hi' })], { modelId: 'big' });
    const run = await createChain({
      model,
      prices: { small: { inputPerMillion: 1, outputPerMillion: 1 }, big: prices },
    }).invoke('go');
    expect(run.cost).toBeCloseTo(0.013, 12);
  });

  it('makes no call that would pass maxCost: CostLimitError', async () => {
    const { tool, execute } = pingTool();
    const model = new ScriptedModel([call(pings(1)), call({ text: 'done' })]);
    const error = await rejectionOf(
      CostLimitError,
      createChain({ model, tools: [tool], prices, maxCost: 0.02 }).invoke('go'),
    );
    expect(model.callCount).toBe(1);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(error.code).toBe('COST_LIMIT');
    expect(error.limit).toBe(0.02);
    expect(error.spent).toBeCloseTo(0.013, 12);
    expect(error.estimate).toBeGreaterThan(0.007);
    expect(error.message).toMatch(
      /^The next model call would exceed maxCost \(\$0\.02\): about \$0\.01\d+ with \$0\.013 spent; it was not made$/,
    );
    expect(partialOf(error).cost).toBeCloseTo(0.013, 12);
    expect(partialOf(error).details().cost).toBeCloseTo(0.013, 12);
  });

  it('fails a call that passed maxCost anyway', async () => {
    const model = new ScriptedModel([call({ text: 'expensive' })]);
    const error = await rejectionOf(
      CostLimitError,
      createChain({ model, prices, maxCost: 0.01 }).invoke('go'),
    );
    expect(error).toMatchObject({ limit: 0.01, estimate: undefined });
    expect(error.spent).toBeCloseTo(0.013, 12);
    expect(error.message).toBe('Cost limit exceeded: spent $0.013 of $0.01');
  });

  it("'force' applies to it as to maxTokens", async () => {
    const forced = await createChain({
      model: new ScriptedModel([call(pings(1))]),
      tools: [pingTool().tool],
      prices,
      maxCost: 0.02,
      earlyStopping: 'force',
    }).invoke('go');
    expect(forced.stopped).toEqual({ reason: 'maxCost', method: 'force' });
    expect(forced.text).toBe(BUDGET_STOP_MESSAGE);
  });
});

describe('maxIterations 0 and Infinity (H3)', () => {
  it("0 makes no model call: 'force' answers with the stop message", async () => {
    const model = new ScriptedModel([]);
    const run = await createChain({ model, maxIterations: 0, earlyStopping: 'force' }).invoke('go');
    expect(run).toMatchObject({
      text: EARLY_STOP_MESSAGE,
      stopped: { reason: 'maxIterations', method: 'force' },
      iterations: 0,
    });
    expect(model.callCount).toBe(0);
  });

  it('0 makes no model call: otherwise a ProtocolError', async () => {
    for (const earlyStopping of [undefined, 'generate'] as const) {
      const model = new ScriptedModel([]);
      const error = await rejectionOf(
        ProtocolError,
        createChain({ model, maxIterations: 0, ...(earlyStopping && { earlyStopping }) }).invoke(
          'go',
        ),
      );
      expect(error.message).toMatch(/^Reached maxIterations \(0\)/);
      expect(model.callCount).toBe(0);
    }
  });

  it('Infinity is no limit, in a durable run too', async () => {
    const { tool, execute } = pingTool();
    const script = () =>
      new ScriptedModel((_request, index) => (index < 15 ? pings(index + 1) : { text: 'at last' }));
    const run = await createChain({
      model: script(),
      tools: [tool],
      maxIterations: Number.POSITIVE_INFINITY,
    }).invoke('go');
    expect(run).toMatchObject({ text: 'at last', iterations: 16 });
    expect(execute).toHaveBeenCalledTimes(15);

    const store = memoryStore();
    const chain = createChain({
      model: script(),
      tools: [tool],
      maxIterations: Number.POSITIVE_INFINITY,
    });
    await expect(chain.invoke('go', { runId: 'endless', store })).resolves.toMatchObject({
      text: 'at last',
    });
    // Its journal's config, Infinity included, is the one the chain resumes with.
    await expect(chain.resume('endless', { store })).resolves.toMatchObject({ text: 'at last' });
  });
});

describe('the iteration limit with earlyStopping (H3)', () => {
  it("runs the last generation's tools before the run stops: the final answer sees their results", async () => {
    const { tool, execute } = pingTool();
    const model = new ScriptedModel([pings(1), pings(2), { text: 'pong 1, pong 2' }]);
    const run = await createChain({
      model,
      tools: [tool],
      maxIterations: 2,
      earlyStopping: 'generate',
    }).invoke('go');
    expect(execute).toHaveBeenCalledTimes(2);
    const final = messagesOf(model.requests[2]);
    expect(toolMessages(final).at(-1)).toMatchObject({
      toolCallId: 'call_2',
      success: true,
      output: 'pong 2',
    });
    expect(run.intermediateSteps.map((s) => s.observation.output)).toEqual(['pong 1', 'pong 2']);
  });

  it('runs none of them without earlyStopping: no generation could read them', async () => {
    const { tool, execute } = pingTool();
    const model = new ScriptedModel([pings(1), pings(2)]);
    await rejectionOf(
      ProtocolError,
      createChain({ model, tools: [tool], maxIterations: 2 }).invoke('go'),
    );
    expect(execute).toHaveBeenCalledTimes(1);
  });
});

describe('budget options are validated (H3)', () => {
  const model = new ScriptedModel([], { modelId: 'm1' });
  const configErrorFor = (overrides: Record<string, unknown>): ConfigError =>
    thrownBy(ConfigError, () =>
      createChain({ model, ...overrides } as unknown as ChainOptions<string>),
    );

  it('names the option and what it takes', () => {
    expect(configErrorFor({ maxToolCalls: -1 }).message).toBe(
      'Invalid option `maxToolCalls`: must be an integer >= 0, or Infinity for no limit; got -1',
    );
    expect(configErrorFor({ maxIterations: 2.5 }).message).toBe(
      'Invalid option `maxIterations`: must be an integer >= 0, or Infinity for no limit; got 2.5',
    );
    expect(configErrorFor({ maxCost: 0 }).option).toBe('maxCost');
  });

  it('requires prices with maxCost', () => {
    expect(configErrorFor({ maxCost: 1 }).message).toBe(
      'Invalid option `maxCost`: needs `prices` to price what the run spends',
    );
  });

  it('checks each price', () => {
    expect(configErrorFor({ prices: { inputPerMillion: -1, outputPerMillion: 1 } }).option).toBe(
      'prices.inputPerMillion',
    );
    expect(configErrorFor({ prices: { inputPerMillion: 1 } }).option).toBe(
      'prices.outputPerMillion',
    );
    expect(
      configErrorFor({ prices: { inputPerMillion: 1, outputPerMillion: 1, perCall: 2 } }).message,
    ).toMatch(/^Invalid option `prices`: has unknown key\(s\) `perCall`/);
    expect(
      configErrorFor({ prices: { m1: { inputPerMillion: 1, outputPerMillion: Number.NaN } } })
        .option,
    ).toBe('prices.m1.outputPerMillion');
  });

  it("needs the chain's model in a table of prices", () => {
    expect(
      configErrorFor({ prices: { m2: { inputPerMillion: 1, outputPerMillion: 1 } } }).message,
    ).toBe("Invalid option `prices`: has no price for the model 'm1'; it prices 'm2'");
  });

  it('reports every budget problem at once', () => {
    const error = configErrorFor({ maxToolCalls: 'many', maxCost: -2, maxIterations: -1 });
    expect(error.problems.map((p) => p.option).sort()).toEqual([
      'maxCost',
      'maxIterations',
      'maxToolCalls',
    ]);
  });
});
