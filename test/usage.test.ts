import { addUsage, usage, ZERO_USAGE } from 'statecraft/model';
import { describe, expect, it } from 'vitest';

describe('usage', () => {
  it('derives totalTokens unless the provider gives it', () => {
    expect(usage({ inputTokens: 7, outputTokens: 5 })).toEqual({
      inputTokens: 7,
      outputTokens: 5,
      totalTokens: 12,
    });
    expect(usage({ inputTokens: 7, outputTokens: 5, totalTokens: 20 }).totalTokens).toBe(20);
    expect(usage()).toEqual(ZERO_USAGE);
  });

  it('keeps optional counters only when reported', () => {
    expect(usage({ inputTokens: 1, cachedInputTokens: 1 })).toEqual({
      inputTokens: 1,
      outputTokens: 0,
      totalTokens: 1,
      cachedInputTokens: 1,
    });
    expect('reasoningTokens' in usage({ outputTokens: 3 })).toBe(false);
  });

  it('sums two usages, counting a missing optional counter as zero', () => {
    const a = usage({ inputTokens: 10, outputTokens: 2, reasoningTokens: 1 });
    const b = usage({ inputTokens: 5, outputTokens: 3, cachedInputTokens: 4 });
    expect(addUsage(a, b)).toEqual({
      inputTokens: 15,
      outputTokens: 5,
      totalTokens: 20,
      cachedInputTokens: 4,
      reasoningTokens: 1,
    });
    expect(addUsage(ZERO_USAGE, ZERO_USAGE)).toEqual(ZERO_USAGE);
  });
});
