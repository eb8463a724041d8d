import type {
  Message as AnthropicMessage,
  Usage as AnthropicUsage,
  MessageDeltaUsage,
} from '@anthropic-ai/sdk/resources/messages';
import { ensureToolCallId, parseToolArguments, type ToolCall } from '../../../src/messages.js';
import type {
  ContentPart,
  FinishReason,
  ModelResponse,
} from '../../../src/model/language-model.js';
import { usage as makeUsage, type Usage } from '../../../src/usage.js';

// Response mapping: a Messages API `Message` → our ModelResponse, plus the stop reason and
// usage tables the stream mapping shares. Pure functions.

/** Content blocks → parts, in the model's order. Adjacent text blocks join into one part. */
export function fromAnthropicMessage(message: AnthropicMessage): ModelResponse {
  const content: ContentPart[] = [];
  for (const block of message.content) {
    if (block.type === 'text') {
      const last = content.at(-1);
      if (last?.type === 'text')
        content[content.length - 1] = { ...last, text: last.text + block.text };
      else content.push({ type: 'text', text: block.text });
    } else if (block.type === 'tool_use') {
      content.push({
        type: 'tool-call',
        toolCall: toolCallFromInput(block.id, block.name, block.input),
      });
    }
    // Thinking, server-tool and citation blocks have no part of their own in LanguageModel v1.
  }
  return {
    content,
    usage: mapUsage(message.usage),
    finishReason: mapStopReason(message.stop_reason),
    response: { id: message.id, modelId: message.model },
  };
}

/**
 * A tool call from a `tool_use` block's `input`. The API sends an object; anything else is
 * handled without throwing: JSON text (as some compatible servers send) is parsed, unparseable
 * text keeps its `argumentsError` for the model to correct, and a missing input means `{}`.
 */
export function toolCallFromInput(id: string, name: string, input: unknown): ToolCall {
  const parsed =
    typeof input === 'string'
      ? parseToolArguments(input)
      : { arguments: input === undefined || input === null ? {} : input };
  return ensureToolCallId({ id, name, ...parsed });
}

const STOP_REASONS: Readonly<Record<string, FinishReason['unified']>> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  // The conversation no longer fits the context window: cut off, like max_tokens.
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
  // A server tool's long turn was paused; the caller may continue it. Not a normal end.
  pause_turn: 'other',
};

/** The API's `stop_reason` → our unified finish reason (unknown and null ones are `other`). */
export function mapStopReason(raw: string | null | undefined): FinishReason {
  return { unified: (raw && STOP_REASONS[raw]) || 'other', raw: raw ?? undefined };
}

/** The usage fields read, as `Message.usage` and `message_delta`'s usage carry them. */
export type UsageFields = Partial<
  Pick<
    AnthropicUsage | MessageDeltaUsage,
    | 'input_tokens'
    | 'output_tokens'
    | 'cache_creation_input_tokens'
    | 'cache_read_input_tokens'
    | 'output_tokens_details'
  >
>;

/**
 * The API's usage → ours. Anthropic's `input_tokens` counts only the uncached part of the
 * input; the whole input is that plus the tokens written to and read from the prompt cache,
 * so `inputTokens` is the sum and `cachedInputTokens` the cache reads.
 */
export function mapUsage(usage: UsageFields | null | undefined): Usage {
  const read = usage?.cache_read_input_tokens;
  const thinking = usage?.output_tokens_details?.thinking_tokens;
  return makeUsage({
    inputTokens:
      (usage?.input_tokens ?? 0) + (usage?.cache_creation_input_tokens ?? 0) + (read ?? 0),
    outputTokens: usage?.output_tokens ?? 0,
    ...(typeof read === 'number' && { cachedInputTokens: read }),
    ...(typeof thinking === 'number' && { reasoningTokens: thinking }),
  });
}
