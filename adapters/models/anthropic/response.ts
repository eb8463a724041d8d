import type {
  Message as AnthropicMessage,
  Usage as AnthropicUsage,
  MessageDeltaUsage,
} from '@anthropic-ai/sdk/resources/messages';
import { isRecord } from '../../../src/is-record.js';
import { ensureToolCallId, parseToolArguments, type ToolCall } from '../../../src/messages.js';
import { tokenCount } from '../../../src/model/check-response.js';
import type {
  ContentPart,
  FinishReason,
  ModelResponse,
} from '../../../src/model/language-model.js';
import { describeValue, malformedResponse } from '../../../src/model/malformed-response.js';
import { usage as makeUsage, type Usage } from '../../../src/usage.js';
import { streamErrorEvent } from './errors.js';

// Response mapping: a Messages API `Message` → our ModelResponse, plus the stop reason and
// usage tables the stream mapping shares. Pure functions.

/**
 * Content blocks → parts, in the model's order. Adjacent text blocks join into one part.
 * A body that is not a message is refused (see checkMessage); a missing `usage` counts as 0.
 */
export function fromAnthropicMessage(message: AnthropicMessage): ModelResponse {
  checkMessage(message);
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
 * Throws unless `message` is a Message: an object with a `content` list of block objects.
 * An error object in a 200 (`{ type: 'error', error }`) is that error, retryable by its
 * type; a body that is not an object is a malformed response worth retrying (a gateway's
 * answer, not the API's); an object of another shape is malformed and not.
 */
function checkMessage(message: unknown): asserts message is AnthropicMessage {
  if (!isRecord(message)) {
    const problem = `the message is ${describeValue(message)}, not an object`;
    throw malformedResponse('Anthropic', problem, true);
  }
  if (message.type === 'error' && isRecord(message.error)) {
    throw streamErrorEvent(message.error as { type?: string; message?: string });
  }
  if (!Array.isArray(message.content)) {
    const problem = `the message has no \`content\` list (got ${describeValue(message.content)})`;
    throw malformedResponse('Anthropic', problem, false);
  }
  if (!message.content.every(isRecord)) {
    throw malformedResponse('Anthropic', 'a `content` block is not an object', false);
  }
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
  // A count that is not a number >= 0 counts as zero rather than poisoning the run's sums.
  const wire = isRecord(usage) ? usage : {};
  const read = wire.cache_read_input_tokens;
  const thinking = isRecord(wire.output_tokens_details)
    ? wire.output_tokens_details.thinking_tokens
    : undefined;
  return makeUsage({
    inputTokens:
      tokenCount(wire.input_tokens) +
      tokenCount(wire.cache_creation_input_tokens) +
      tokenCount(read),
    outputTokens: tokenCount(wire.output_tokens),
    ...(typeof read === 'number' && { cachedInputTokens: tokenCount(read) }),
    ...(typeof thinking === 'number' && { reasoningTokens: tokenCount(thinking) }),
  });
}
