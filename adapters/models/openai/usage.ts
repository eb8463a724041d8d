import type OpenAI from 'openai';
import { tokenCount } from '../../../src/model/check-response.js';
import { type Usage, usage } from '../../../src/usage.js';

// Token counts as the two APIs report them. The detail objects are optional (and null from
// some OpenAI-compatible servers): a counter is only set when the server reported it, and a
// count that is not a number >= 0 counts as zero rather than poisoning the run's sums.

/** Chat Completions `usage`; absent (a server that ignores `include_usage`) counts as zero. */
export function chatUsage(wire: OpenAI.CompletionUsage | null | undefined): Usage {
  if (!wire || typeof wire !== 'object') return usage();
  return usage({
    inputTokens: tokenCount(wire.prompt_tokens),
    outputTokens: tokenCount(wire.completion_tokens),
    ...counter('totalTokens', wire.total_tokens),
    ...counter('cachedInputTokens', wire.prompt_tokens_details?.cached_tokens),
    ...counter('reasoningTokens', wire.completion_tokens_details?.reasoning_tokens),
  });
}

/** Responses API `usage`. */
export function responsesUsage(wire: OpenAI.Responses.ResponseUsage | null | undefined): Usage {
  if (!wire || typeof wire !== 'object') return usage();
  return usage({
    inputTokens: tokenCount(wire.input_tokens),
    outputTokens: tokenCount(wire.output_tokens),
    ...counter('totalTokens', wire.total_tokens),
    ...counter('cachedInputTokens', wire.input_tokens_details?.cached_tokens),
    ...counter('reasoningTokens', wire.output_tokens_details?.reasoning_tokens),
  });
}

function counter(
  key: 'totalTokens' | 'cachedInputTokens' | 'reasoningTokens',
  value: number | null | undefined,
): Partial<Usage> {
  return typeof value === 'number' ? { [key]: tokenCount(value) } : {};
}
