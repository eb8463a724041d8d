// SPEC C3: maxIterations (default 10) → ProtocolError; maxTokens cumulative over the run
// (default 128,000) → TokenLimitError. Both keep the partial transcript and usage.

import {
  createChain,
  defineTool,
  ProtocolError,
  StatecraftError,
  TokenLimitError,
} from 'statecraft';
import { addUsage, ZERO_USAGE } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { partialOf, rejectionOf, rolesOf } from './helpers.js';

function pingTool() {
  const execute = vi.fn(() => 'pong');
  const tool = defineTool({
    name: 'ping',
    description: 'Answers pong.',
    input: z.object({ n: z.number() }),
    execute,
  });
  return { tool, execute };
}

/** A model that never stops calling `ping`, spending `tokens` per call. */
function loopingModel(tokens = 10) {
  return new ScriptedModel((_request, callIndex) => ({
    text: `step ${callIndex + 1}`,
    toolCalls: [{ id: `call_${callIndex + 1}`, name: 'ping', arguments: { n: callIndex + 1 } }],
    usage: { inputTokens: tokens - 1, outputTokens: 1 },
  }));
}

describe('maxIterations (C3)', () => {
  it('fails with a ProtocolError after exactly maxIterations generations, keeping the partial run', async () => {
    const { tool, execute } = pingTool();
    const model = loopingModel(10);
    const chain = createChain({ model, tools: [tool], maxIterations: 3 });

    const error = await rejectionOf(ProtocolError, chain.invoke('loop'));
    expect(error.code).toBe('PROTOCOL_ERROR');
    expect(StatecraftError.isInstance(error)).toBe(true);
    expect(TokenLimitError.isInstance(error)).toBe(false);
    expect(error.message).toContain('maxIterations (3)');
    expect(model.callCount).toBe(3);
    // The calls of the last allowed generation are not run: no generation could read them.
    expect(execute).toHaveBeenCalledTimes(2);

    const partial = partialOf(error);
    expect(rolesOf(partial.transcript)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
      'tool',
    ]);
    expect(partial.transcript.at(-2)).toMatchObject({
      role: 'assistant',
      content: 'step 3',
      toolCalls: [{ id: 'call_3', name: 'ping', arguments: { n: 3 } }],
    });
    // Its calls are answered as not run (issue 13, defect 8): the transcript is valid input.
    expect(partial.transcript.at(-1)).toMatchObject({
      role: 'tool',
      toolCallId: 'call_3',
      success: false,
      error: expect.stringMatching(/not run, the iteration limit was reached/),
    });
    expect(partial.usage).toEqual({ inputTokens: 27, outputTokens: 3, totalTokens: 30 });
    expect(partial.output.status).toBe('failed');
    expect(partial.output.iterations).toBe(3);
  });

  // Regression: a bug this test found at HEAD 29a55e2 (fixed since, in the working tree).
  // The generation that hit the limit was missing from `steps`: with maxIterations 3 the model
  // is called 3 times and the partial transcript and usage include the third call, but
  // `partial.steps` had only 2 entries, so the steps disagreed with the usage they sum to.
  // Cause at HEAD: machines/chain.ts, `thinking` → `callModel.done`, the `hasToolCalls →
  // failed` branch ran no step-recording action.
  it('records a step for every generation, including the one that hit the limit', async () => {
    const { tool } = pingTool();
    const chain = createChain({ model: loopingModel(10), tools: [tool], maxIterations: 3 });
    const partial = partialOf(await rejectionOf(ProtocolError, chain.invoke('loop')));
    expect(partial.steps.map((s) => s.iteration)).toEqual([1, 2, 3]);
    expect(partial.steps.map((s) => s.usage).reduce(addUsage, ZERO_USAGE)).toEqual(partial.usage);
  });

  it('defaults to 10: a model that always calls a tool fails at exactly 10 calls', async () => {
    const { tool, execute } = pingTool();
    const model = loopingModel(10);
    const chain = createChain({ model, tools: [tool] });
    const error = await rejectionOf(ProtocolError, chain.invoke('loop'));
    expect(model.callCount).toBe(10);
    expect(execute).toHaveBeenCalledTimes(9);
    expect(error.message).toContain('maxIterations (10)');
    expect(partialOf(error).usage.totalTokens).toBe(100);
  });

  it('lets a run answer on its last allowed generation', async () => {
    const { tool } = pingTool();
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'ping', arguments: { n: 1 } }] },
      { toolCalls: [{ name: 'ping', arguments: { n: 2 } }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [tool], maxIterations: 3 }).invoke('go');
    expect(run.result).toBe('done');
    expect(run.iterations).toBe(3);
  });
});

describe('maxTokens (C3)', () => {
  it('sums usage over every model call and makes no call that would pass maxTokens (H3)', async () => {
    const { tool, execute } = pingTool();
    const model = loopingModel(40);
    const chain = createChain({ model, tools: [tool], maxTokens: 100 });

    const error = await rejectionOf(TokenLimitError, chain.invoke('loop'));
    // 40 + 40 = 80 is within the budget; a third call would take about 39 + 8 tokens of
    // input and 1 of output: it is not made (it would have brought the run to 120).
    expect(model.callCount).toBe(2);
    expect(error.code).toBe('TOKEN_LIMIT');
    expect(error.limit).toBe(100);
    expect(error.used).toBe(80);
    expect(error.estimate).toBeGreaterThan(20);
    expect(error.message).toMatch(/next model call would exceed maxTokens \(100\).*not made/);
    expect(ProtocolError.isInstance(error)).toBe(false);
    expect(execute).toHaveBeenCalledTimes(2);

    const partial = partialOf(error);
    expect(partial.usage.totalTokens).toBe(80);
    expect(partial.transcript.at(-2)).toMatchObject({ role: 'assistant', content: 'step 2' });
    expect(partial.transcript.at(-1)).toMatchObject({ role: 'tool', success: true });
  });

  /** Two calls as expected, then one that spends far more than the run has seen. */
  function surgingModel() {
    return new ScriptedModel((_request, callIndex) => ({
      text: `step ${callIndex + 1}`,
      toolCalls: [{ id: `call_${callIndex + 1}`, name: 'ping', arguments: { n: callIndex + 1 } }],
      usage: { inputTokens: 20, outputTokens: callIndex < 2 ? 5 : 60 },
    }));
  }

  it('fails once a call that was expected to fit passes maxTokens', async () => {
    const { tool, execute } = pingTool();
    const model = surgingModel();
    const chain = createChain({ model, tools: [tool], maxTokens: 100 });

    const error = await rejectionOf(TokenLimitError, chain.invoke('loop'));
    // 25 + 25 = 50; the third call was expected to take about 32, and took 80.
    expect(model.callCount).toBe(3);
    expect(error).toMatchObject({ limit: 100, used: 130, estimate: undefined });
    expect(execute).toHaveBeenCalledTimes(2);

    const partial = partialOf(error);
    expect(partial.usage.totalTokens).toBe(130);
    expect(partial.transcript.at(-2)).toMatchObject({ role: 'assistant', content: 'step 3' });
    expect(partial.transcript.at(-1)).toMatchObject({
      role: 'tool',
      success: false,
      error: expect.stringMatching(/not run, the run failed: Token limit exceeded/),
    });
  });

  // Regression: the generation that passed the token budget is missing from `steps`. Input: maxTokens
  // 100, a model that always calls a tool and spends 40 tokens per call (today one whose third
  // call spends more than expected: a call expected to pass the budget is not made). Expected: partial.steps
  // has one entry per generation (iterations 1, 2, 3) and their usage sums to partial.usage
  // (120 tokens), as it does for the maxIterations failure. Actual: steps has iterations [1, 2]
  // summing to 80 tokens. Cause: machines/chain.ts, `thinking` → `callModel.done`, the
  // `isOverTokenLimit → failed` branch runs ['recordResponse', 'failOnTokenLimit'] without
  // 'recordStep' (the `hasToolCalls → failed` branch below it got 'recordStep').
  it('records a step for the generation that passed the budget', async () => {
    const { tool } = pingTool();
    const chain = createChain({ model: surgingModel(), tools: [tool], maxTokens: 100 });
    const partial = partialOf(await rejectionOf(TokenLimitError, chain.invoke('loop')));
    expect(partial.steps.map((s) => s.iteration)).toEqual([1, 2, 3]);
    expect(partial.steps.map((s) => s.usage).reduce(addUsage, ZERO_USAGE)).toEqual(partial.usage);
  });

  it('allows spending exactly maxTokens', async () => {
    const model = new ScriptedModel([{ text: 'ok', usage: { inputTokens: 60, outputTokens: 40 } }]);
    const run = await createChain({ model, maxTokens: 100 }).invoke('go');
    expect(run.usage.totalTokens).toBe(100);
  });

  it('fails a final answer that passes the budget, keeping the answer in the transcript', async () => {
    const model = new ScriptedModel([
      { text: 'too long', usage: { inputTokens: 60, outputTokens: 41 } },
    ]);
    const error = await rejectionOf(
      TokenLimitError,
      createChain({ model, maxTokens: 100 }).invoke('go'),
    );
    expect(error).toMatchObject({ limit: 100, used: 101 });
    expect(partialOf(error).transcript.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'too long',
    });
  });

  it('defaults to 128,000 tokens per run', async () => {
    const over = new ScriptedModel([
      { text: 'x', usage: { inputTokens: 128_000, outputTokens: 1 } },
    ]);
    const error = await rejectionOf(TokenLimitError, createChain({ model: over }).invoke('go'));
    expect(error).toMatchObject({ limit: 128_000, used: 128_001 });

    const at = new ScriptedModel([{ text: 'x', usage: { inputTokens: 127_999, outputTokens: 1 } }]);
    await expect(createChain({ model: at }).invoke('go')).resolves.toMatchObject({
      status: 'succeeded',
    });
  });

  it('counts each run from zero: the budget is per run, not per chain', async () => {
    const model = new ScriptedModel([
      { text: 'a', usage: { inputTokens: 50, outputTokens: 20 } },
      { text: 'b', usage: { inputTokens: 50, outputTokens: 20 } },
    ]);
    const chain = createChain({ model, maxTokens: 100 });
    await chain.invoke('one');
    const second = await chain.invoke('two');
    expect(second.usage.totalTokens).toBe(70);
  });
});
