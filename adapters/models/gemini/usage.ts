import type { GenerateContentResponseUsageMetadata } from '@google/genai';
import { tokenCount } from '../../../src/model/check-response.js';
import { type Usage, usage } from '../../../src/usage.js';

/**
 * Gemini's `usageMetadata` as our Usage. Gemini counts hidden thinking apart from the answer
 * (`thoughtsTokenCount` is not in `candidatesTokenCount`) but bills it as output, so output
 * is their sum, and the thinking share is reported again as `reasoningTokens`. Tool-use prompt
 * tokens (results of Gemini's server-side tools) are input. Absent metadata counts as zero,
 * and so does a count that is not a number >= 0.
 */
export function geminiUsage(wire: GenerateContentResponseUsageMetadata | null | undefined): Usage {
  if (!wire || typeof wire !== 'object') return usage();
  const thoughts = wire.thoughtsTokenCount;
  return usage({
    inputTokens: tokenCount(wire.promptTokenCount) + tokenCount(wire.toolUsePromptTokenCount),
    outputTokens: tokenCount(wire.candidatesTokenCount) + tokenCount(thoughts),
    ...(typeof wire.totalTokenCount === 'number' && {
      totalTokens: tokenCount(wire.totalTokenCount),
    }),
    ...(typeof wire.cachedContentTokenCount === 'number' && {
      cachedInputTokens: tokenCount(wire.cachedContentTokenCount),
    }),
    ...(typeof thoughts === 'number' && { reasoningTokens: tokenCount(thoughts) }),
  });
}
