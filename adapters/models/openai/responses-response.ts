import type OpenAI from 'openai';
import { isRecord } from '../../../src/is-record.js';
import type { ContentPart, ModelResponse } from '../../../src/model/language-model.js';
import { describeValue, malformedResponse } from '../../../src/model/malformed-response.js';
import { toolCall } from './chat-response.js';
import { responseFailure } from './errors.js';
import { responsesFinishReason } from './finish-reason.js';
import { responsesUsage } from './usage.js';

type OutputItem = OpenAI.Responses.ResponseOutputItem;

/**
 * A Responses API response as ours: message text (refusals included) and function calls, in
 * output order; reasoning and built-in tool items are not part of the provider-neutral
 * answer. A failed response throws its error as a ModelError; one that is not an object
 * with an `output` list is malformed (retryable only when not an object at all: a gateway's
 * answer, not the API's); a missing `usage` counts as zero.
 */
export function responsesResponse(response: OpenAI.Responses.Response): ModelResponse {
  if (!isRecord(response)) {
    const problem = `the response is ${describeValue(response)}, not an object`;
    throw malformedResponse('OpenAI', problem, true);
  }
  if (response.status === 'failed') throw responseFailure(response.error);
  if (isRecord((response as { error?: unknown }).error) && !Array.isArray(response.output)) {
    throw responseFailure(response.error);
  }
  if (!Array.isArray(response.output)) {
    const problem = `the response has no \`output\` list (got ${describeValue(response.output)})`;
    throw malformedResponse('OpenAI', problem, false);
  }
  const content: ContentPart[] = [];
  for (const item of response.output) {
    if (!isRecord(item))
      throw malformedResponse('OpenAI', 'an `output` item is not an object', false);
    content.push(...outputItemParts(item));
  }
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
