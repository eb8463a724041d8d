import type OpenAI from 'openai';
import { type Usage, usage } from '../../../src/usage.js';

// Token counts as the two APIs report them. The detail objects are optional (and null from
// some OpenAI-compatible servers): a counter is only set when the server reported it.

/** Chat Completions `usage`; absent (a server that ignores `include_usage`) counts as zero. */
export function chatUsage(wire: OpenAI.CompletionUsage | null | undefined): Usage {
  if (!wire) return usage();
  return usage({
    inputTokens: wire.prompt_tokens ?? 0,
    outputTokens: wire.completion_tokens ?? 0,
    ...(typeof wire.total_tokens === 'number' && { totalTokens: wire.total_tokens }),
    ...counter('cachedInputTokens', wire.prompt_tokens_details?.cached_tokens),
    ...counter('reasoningTokens', wire.completion_tokens_details?.reasoning_tokens),
  });
}

/** Responses API `usage`. */
export function responsesUsage(wire: OpenAI.Responses.ResponseUsage | null | undefined): Usage {
  if (!wire) return usage();
  return usage({
    inputTokens: wire.input_tokens ?? 0,
    outputTokens: wire.output_tokens ?? 0,
    ...(typeof wire.total_tokens === 'number' && { totalTokens: wire.total_tokens }),
    ...counter('cachedInputTokens', wire.input_tokens_details?.cached_tokens),
    ...counter('reasoningTokens', wire.output_tokens_details?.reasoning_tokens),
  });
}

function counter(
  key: 'cachedInputTokens' | 'reasoningTokens',
  value: number | null | undefined,
): Partial<Usage> {
  return typeof value === 'number' ? { [key]: value } : {};
}
