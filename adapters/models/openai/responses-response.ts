import type OpenAI from 'openai';
import type { ContentPart, ModelResponse } from '../../../src/model/language-model.js';
import { toolCall } from './chat-response.js';
import { responseFailure } from './errors.js';
import { responsesFinishReason } from './finish-reason.js';
import { responsesUsage } from './usage.js';

type OutputItem = OpenAI.Responses.ResponseOutputItem;

/**
 * A Responses API response as ours: message text (refusals included) and function calls, in
 * output order; reasoning and built-in tool items are not part of the provider-neutral
 * answer. A failed response throws its error as a ModelError.
 */
export function responsesResponse(response: OpenAI.Responses.Response): ModelResponse {
  if (response.status === 'failed') throw responseFailure(response.error);
  const content: ContentPart[] = [];
  for (const item of response.output ?? []) content.push(...outputItemParts(item));
  return {
    content,
    usage: responsesUsage(response.usage),
    finishReason: responsesFinishReason(
      response,
      content.some((part) => part.type === 'tool-call'),
    ),
    response: { id: response.id, modelId: response.model },
  };
}

/** The parts one output item contributes. */
export function outputItemParts(item: OutputItem): ContentPart[] {
  if (item.type === 'function_call') {
    return [{ type: 'tool-call', toolCall: toolCall(item.call_id, item.name, item.arguments) }];
  }
  if (item.type !== 'message') return [];
  const parts: ContentPart[] = [];
  for (const piece of item.content ?? []) {
    const text = piece.type === 'output_text' ? piece.text : piece.refusal;
    if (text) parts.push({ type: 'text', text });
  }
  return parts;
}
