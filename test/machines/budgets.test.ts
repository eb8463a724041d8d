// SPEC H3: the pure functions the chain's budget guards are made of: the estimate of the next
// call (checked before it is made), the budget it would cross, tool calls made, and cost.
import {
  assistantMessage,
  costOf,
  systemMessage,
  Transcript,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { mutate } from 'statecraft/compile';
import { usage } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import {
  budgetCrossed,
  estimateTokens,
  isOverCostLimit,
  isOverToolCallBudget,
  nextCallEstimate,
  toolCallsMade,
} from '../../machines/budgets.js';

const chars = (n: number, c = 'x') => c.repeat(n);
const step = (inputTokens: number, outputTokens: number) => ({
  usage: usage({ inputTokens, outputTokens }),
});

describe('estimateTokens', () => {
  it('counts four characters a token, rounding up', () => {
    expect([0, 1, 4, 5, 8, 9].map(estimateTokens)).toEqual([0, 1, 1, 2, 2, 3]);
  });
});

describe('nextCallEstimate', () => {
  const none = { steps: [], pending: [], contract: {} };

  it('estimates the first call from the whole conversation and the prompt, reserving no output', () => {
    const transcript = Transcript.from([userMessage(chars(40))]);
    expect(nextCallEstimate({ ...none, transcript })).toEqual({ inputTokens: 10, outputTokens: 0 });
    const contract = {
      baseInstruction: chars(8),
      mustPrinciples: [chars(4)],
      tools: [{ name: 'ping', description: chars(4), bestPractices: [chars(4)] }],
    };
    // 40 + 8 + 4 + (4 + 4 + 4) characters, and a pending note of 8.
    expect(
      nextCallEstimate({
        ...none,
        transcript,
        contract,
        pending: [mutate.systemNote(chars(8))],
        maxOutputTokens: 50,
      }),
    ).toEqual({ inputTokens: 18, outputTokens: 50 });
  });

  it('adds what came since the previous call to its input tokens, and reserves its largest output', () => {
    const transcript = Transcript.from([userMessage(chars(400))]);
    const call = { id: 'c1', name: 'ping', arguments: { n: 1 } }; // 4 + 7 characters
    const pending = [
      mutate.assistantMessage(chars(9), [call]),
      mutate.toolResult({ toolCallId: 'c1', name: 'ping', output: chars(8), success: true }),
      mutate.systemNote(chars(4)),
    ];
    // 9 + 11 + (4 + 8) + 4 = 36 characters: 9 tokens on top of the previous call's 100.
    expect(
      nextCallEstimate({ ...none, transcript, pending, steps: [step(80, 30), step(100, 20)] }),
    ).toEqual({ inputTokens: 109, outputTokens: 30 });
    // maxOutputTokens wins over what the run has seen.
    expect(
      nextCallEstimate({ ...none, transcript, pending, steps: [step(100, 20)], maxOutputTokens: 7 })
        .outputTokens,
    ).toBe(7);
    // Texts not pending yet count too.
    expect(
      nextCallEstimate({ ...none, transcript, pending, steps: [step(100, 20)], extra: [chars(4)] })
        .inputTokens,
    ).toBe(110);
  });

  it('reads the transcript back to the last answer when nothing is pending', () => {
    const transcript = Transcript.from([
      systemMessage(chars(400)),
      userMessage(chars(400)),
      assistantMessage(chars(8)),
      userMessage(chars(8)),
    ]);
    expect(nextCallEstimate({ ...none, transcript, steps: [step(50, 5)] }).inputTokens).toBe(54);
    const tool = Transcript.from([
      userMessage(chars(400)),
      assistantMessage('', [{ id: 'c1', name: 'ping', arguments: {} }]),
      toolResultMessage({
        toolCallId: 'c1',
        name: 'ping',
        output: null,
        success: false,
        error: chars(4),
      }),
    ]);
    // The call (4 + 2) and the failed result (4 + 4).
    expect(nextCallEstimate({ ...none, transcript: tool, steps: [step(50, 5)] }).inputTokens).toBe(
      54,
    );
  });

  it('estimates from the whole conversation when the previous call reported no input, or a summary replaced it', () => {
    const transcript = Transcript.from([userMessage(chars(400)), assistantMessage(chars(4))]);
    expect(nextCallEstimate({ ...none, transcript, steps: [step(0, 5)] }).inputTokens).toBe(101);
    const pending = [mutate.contextSummary(chars(40))];
    // The summary is not counted as such: everything there is, is.
    expect(
      nextCallEstimate({ ...none, transcript, pending, steps: [step(50, 5)] }).inputTokens,
    ).toBe(101);
  });

  it('never throws on arguments or outputs JSON cannot hold', () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const pending = [
      mutate.assistantMessage('', [{ id: 'c1', name: 'ping', arguments: circular }]),
      mutate.toolResult({ toolCallId: 'c1', name: 'ping', output: 10n, success: true }),
    ];
    expect(() =>
      nextCallEstimate({ ...none, transcript: Transcript.empty, pending, steps: [step(1, 1)] }),
    ).not.toThrow();
  });
});

describe('budgetCrossed', () => {
  const spent = usage({ inputTokens: 100, outputTokens: 50 });
  const price = { inputPerMillion: 1_000_000, outputPerMillion: 2_000_000 }; // $1 a token in, $2 out

  it('crosses maxTokens when spent and expected pass it, or nothing is left', () => {
    const next = { inputTokens: 30, outputTokens: 20 };
    expect(budgetCrossed(spent, next, { maxTokens: 200 })).toBeUndefined();
    expect(budgetCrossed(spent, next, { maxTokens: 199 })).toBe('maxTokens');
    expect(budgetCrossed(spent, { inputTokens: 0, outputTokens: 0 }, { maxTokens: 150 })).toBe(
      'maxTokens',
    );
  });

  it('crosses maxCost only with prices, after the tokens', () => {
    const next = { inputTokens: 10, outputTokens: 5 }; // $20
    expect(budgetCrossed(spent, next, { maxTokens: 1_000, maxCost: 219 })).toBeUndefined();
    expect(budgetCrossed(spent, next, { maxTokens: 1_000, maxCost: 220, prices: price })).toBe(
      undefined,
    );
    expect(budgetCrossed(spent, next, { maxTokens: 1_000, maxCost: 219, prices: price })).toBe(
      'maxCost',
    );
    expect(budgetCrossed(spent, next, { maxTokens: 100, maxCost: 219, prices: price })).toBe(
      'maxTokens',
    );
    expect(isOverCostLimit(spent, { maxTokens: 1_000, maxCost: 200, prices: price })).toBe(false);
    expect(isOverCostLimit(spent, { maxTokens: 1_000, maxCost: 199, prices: price })).toBe(true);
  });
});

describe('tool calls (maxToolCalls)', () => {
  it('counts every call a step answered, and is over only past the budget', () => {
    const made = toolCallsMade([
      { toolResults: [1, 2] },
      { toolResults: [] },
      { toolResults: [3] },
    ]);
    expect(made).toBe(3);
    expect(isOverToolCallBudget(made, 2, 5)).toBe(false);
    expect(isOverToolCallBudget(made, 3, 5)).toBe(true);
    expect(isOverToolCallBudget(made, 100, undefined)).toBe(false);
    expect(isOverToolCallBudget(0, 1, 0)).toBe(true);
  });
});

describe('costOf', () => {
  it('prices cached input at its own price, or the input price', () => {
    const price = { inputPerMillion: 2, cachedInputPerMillion: 1, outputPerMillion: 8 };
    const used = usage({
      inputTokens: 1_000_000,
      outputTokens: 500_000,
      cachedInputTokens: 400_000,
    });
    expect(costOf(used, price)).toBeCloseTo(1.2 + 0.4 + 4, 12);
    expect(costOf(used, { inputPerMillion: 2, outputPerMillion: 8 })).toBeCloseTo(6, 12);
    // A provider reporting more cached tokens than input is capped at the input.
    expect(costOf(usage({ inputTokens: 10, cachedInputTokens: 20 }), price)).toBeCloseTo(1e-5, 15);
  });
});
