/** Tokens spent by one model call or summed over a run. */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  /** Input tokens served from the provider's prompt cache, where it reports them. */
  readonly cachedInputTokens?: number;
  /** Output tokens spent on hidden reasoning, where the provider reports them. */
  readonly reasoningTokens?: number;
}

export const ZERO_USAGE: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

/** Builds a Usage, deriving `totalTokens` when the provider leaves it out. */
export function usage(input: Partial<Usage> = {}): Usage {
  const inputTokens = input.inputTokens ?? 0;
  const outputTokens = input.outputTokens ?? 0;
  const result: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens,
    outputTokens,
    totalTokens: input.totalTokens ?? inputTokens + outputTokens,
  };
  if (input.cachedInputTokens !== undefined) result.cachedInputTokens = input.cachedInputTokens;
  if (input.reasoningTokens !== undefined) result.reasoningTokens = input.reasoningTokens;
  return result;
}

/** Sums two usages; optional counters stay absent unless either side reports them. */
export function addUsage(a: Usage, b: Usage): Usage {
  const sum: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  if (a.cachedInputTokens !== undefined || b.cachedInputTokens !== undefined) {
    sum.cachedInputTokens = (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0);
  }
  if (a.reasoningTokens !== undefined || b.reasoningTokens !== undefined) {
    sum.reasoningTokens = (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0);
  }
  return sum;
}
