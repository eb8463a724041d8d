import type { FinishReason } from '../../../src/model/language-model.js';

// Gemini's `Candidate.finishReason` mapped to the unified set; `raw` keeps Gemini's own word.

const GEMINI_REASONS: Readonly<Record<string, FinishReason['unified']>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content-filter',
  RECITATION: 'content-filter',
  BLOCKLIST: 'content-filter',
  PROHIBITED_CONTENT: 'content-filter',
  SPII: 'content-filter',
  IMAGE_SAFETY: 'content-filter',
  IMAGE_PROHIBITED_CONTENT: 'content-filter',
  IMAGE_RECITATION: 'content-filter',
  // The model tried to call a tool and failed at it: the turn holds no usable answer. The
  // mappers report the failed call as a call (see geminiMalformedCall): then 'tool-calls'.
  MALFORMED_FUNCTION_CALL: 'error',
  UNEXPECTED_TOOL_CALL: 'error',
  TOO_MANY_TOOL_CALLS: 'error',
};

/**
 * Gemini has no "tool calls" finish reason: a turn that called functions ends with `STOP`,
 * so `hasToolCalls` lets the unified reason say what the turn actually did. A malformed call
 * that is reported as a (failed) call is a tool-call turn too: the chain must go on and let
 * the model see the failure. Reasons Gemini adds later (and `LANGUAGE`, `OTHER`, …) are
 * `other`.
 */
export function geminiFinishReason(
  raw: string | null | undefined,
  hasToolCalls = false,
): FinishReason {
  const unified = raw ? (GEMINI_REASONS[raw] ?? 'other') : hasToolCalls ? 'tool-calls' : 'other';
  return {
    unified:
      hasToolCalls && (unified === 'stop' || raw === 'MALFORMED_FUNCTION_CALL')
        ? 'tool-calls'
        : unified,
    raw: raw ?? undefined,
  };
}

/**
 * A prompt Gemini refused to answer comes back with no candidate and a
 * `promptFeedback.blockReason`: whatever the reason's name, the unified reason is a filter.
 */
export function geminiBlockedPrompt(blockReason: string): FinishReason {
  return { unified: 'content-filter', raw: blockReason };
}
