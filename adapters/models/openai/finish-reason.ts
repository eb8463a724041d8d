import type { FinishReason } from '../../../src/model/language-model.js';

// OpenAI's finish reasons mapped to the unified set. `raw` keeps OpenAI's own word.

const CHAT_REASONS: Readonly<Record<string, FinishReason['unified']>> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool-calls',
  // The legacy single-function form of a tool call.
  function_call: 'tool-calls',
  content_filter: 'content-filter',
};

/**
 * A Chat Completions `finish_reason`. Some OpenAI-compatible servers answer `stop` to a turn
 * that called tools; `hasToolCalls` lets the unified reason say what the turn actually did.
 */
export function chatFinishReason(
  raw: string | null | undefined,
  hasToolCalls = false,
): FinishReason {
  const unified = raw ? (CHAT_REASONS[raw] ?? 'other') : 'other';
  return {
    unified: unified === 'stop' && hasToolCalls ? 'tool-calls' : unified,
    raw: raw ?? undefined,
  };
}

/** The parts of a Responses API `Response` that say why it ended. */
export interface ResponseEnding {
  readonly status?: string | null;
  readonly incomplete_details?: { readonly reason?: string | null } | null;
}

/**
 * A Responses API ending: `status` (`completed`, `incomplete`, `failed`, …), refined by
 * `incomplete_details.reason` when the response was cut short. The Responses API has no
 * "tool calls" status, so a completed response that called tools says so through
 * `hasToolCalls`.
 */
export function responsesFinishReason(ending: ResponseEnding, hasToolCalls: boolean): FinishReason {
  const status = ending.status ?? undefined;
  switch (status) {
    case 'completed':
      return { unified: hasToolCalls ? 'tool-calls' : 'stop', raw: status };
    case 'incomplete': {
      const reason = ending.incomplete_details?.reason ?? undefined;
      const unified =
        reason === 'max_output_tokens'
          ? 'length'
          : reason === 'content_filter'
            ? 'content-filter'
            : 'other';
      return { unified, raw: reason ?? status };
    }
    case 'failed':
      return { unified: 'error', raw: status };
    default:
      return { unified: 'other', raw: status };
  }
}
