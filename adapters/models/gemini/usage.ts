import type { GenerateContentResponseUsageMetadata } from '@google/genai';
import { type Usage, usage } from '../../../src/usage.js';

/**
 * Gemini's `usageMetadata` as our Usage. Gemini counts hidden thinking apart from the answer
 * (`thoughtsTokenCount` is not in `candidatesTokenCount`) but bills it as output, so output
 * is their sum, and the thinking share is reported again as `reasoningTokens`. Tool-use prompt
 * tokens (results of Gemini's server-side tools) are input. Absent metadata counts as zero.
 */
export function geminiUsage(wire: GenerateContentResponseUsageMetadata | null | undefined): Usage {
  if (!wire) return usage();
  const thoughts = wire.thoughtsTokenCount;
  return usage({
    inputTokens: (wire.promptTokenCount ?? 0) + (wire.toolUsePromptTokenCount ?? 0),
    outputTokens: (wire.candidatesTokenCount ?? 0) + (thoughts ?? 0),
    ...(typeof wire.totalTokenCount === 'number' && { totalTokens: wire.totalTokenCount }),
    ...(typeof wire.cachedContentTokenCount === 'number' && {
      cachedInputTokens: wire.cachedContentTokenCount,
    }),
    ...(typeof thoughts === 'number' && { reasoningTokens: thoughts }),
  });
}
