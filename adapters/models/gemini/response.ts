import type { FunctionCall, GenerateContentResponse, Part } from '@google/genai';
import { generateToolCallId, parseToolArguments, type ToolCall } from '../../../src/messages.js';
import type { ContentPart, ModelResponse } from '../../../src/model/language-model.js';
import type { CallMemo } from './call-memory.js';
import { geminiBlockedPrompt, geminiFinishReason } from './finish-reason.js';
import { geminiUsage } from './usage.js';

/** The fields of a `GenerateContentResponse` (SDK object or REST JSON) that we read. */
export type GeminiResponseData = Pick<
  GenerateContentResponse,
  'candidates' | 'usageMetadata' | 'promptFeedback' | 'responseId' | 'modelVersion'
>;

export interface GeminiMappedResponse {
  readonly response: ModelResponse;
  /** What to remember of each call, by its id (see CallMemory). */
  readonly calls: ReadonlyMap<string, CallMemo>;
}

/**
 * A `generateContent` response as ours: the first candidate's text and function calls, in
 * the order Gemini produced them. Thought summaries (`thought: true`) are not the answer and
 * are left out; other part kinds (inline data, code execution) are not ours to carry.
 */
export function geminiResponse(raw: GeminiResponseData): GeminiMappedResponse {
  const candidate = raw.candidates?.[0];
  const content: ContentPart[] = [];
  const calls = new Map<string, CallMemo>();
  for (const part of candidate?.content?.parts ?? []) {
    if (part.thought) continue;
    if (part.functionCall) {
      const { toolCall, memo } = geminiToolCall(part.functionCall, part.thoughtSignature);
      content.push({ type: 'tool-call', toolCall });
      calls.set(toolCall.id, memo);
      continue;
    }
    const text = partText(part);
    if (!text) continue;
    const last = content.at(-1);
    if (last?.type === 'text')
      content[content.length - 1] = { type: 'text', text: last.text + text };
    else content.push({ type: 'text', text });
  }
  const blockReason = raw.promptFeedback?.blockReason;
  const finishReason =
    !candidate && blockReason
      ? geminiBlockedPrompt(blockReason)
      : geminiFinishReason(candidate?.finishReason, calls.size > 0);
  return {
    response: {
      content,
      usage: geminiUsage(raw.usageMetadata),
      finishReason,
      ...responseMeta(raw),
    },
    calls,
  };
}

/** The text of a part that is answer text (not a thought summary), else ''. */
export function partText(part: Part): string {
  return !part.thought && typeof part.text === 'string' ? part.text : '';
}

/**
 * One Gemini function call as ours. Gemini often sends no id: one is generated. `args` is a
 * JSON object on the wire and is kept as it is; should it arrive as text, it is parsed, and
 * text that is not JSON is kept with `argumentsError` for the tool runner to answer.
 */
export function geminiToolCall(
  call: FunctionCall,
  thoughtSignature?: string,
): { toolCall: ToolCall; argumentsText: string; memo: CallMemo } {
  const args: unknown = call.args;
  const argumentsText = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  const parsed = typeof args === 'string' ? parseToolArguments(args) : { arguments: args ?? {} };
  const toolCall: ToolCall = {
    id: call.id || generateToolCallId(),
    name: call.name ?? '',
    ...parsed,
  };
  const memo: CallMemo = {
    providerId: Boolean(call.id),
    ...(thoughtSignature !== undefined && { thoughtSignature }),
  };
  return { toolCall, argumentsText, memo };
}

export function responseMeta(raw: GeminiResponseData): Pick<ModelResponse, 'response'> {
  const meta = {
    ...(raw.responseId && { id: raw.responseId }),
    ...(raw.modelVersion && { modelId: raw.modelVersion }),
  };
  return Object.keys(meta).length ? { response: meta } : {};
}
