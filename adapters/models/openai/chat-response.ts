import type OpenAI from 'openai';
import { generateToolCallId, parseToolArguments, type ToolCall } from '../../../src/messages.js';
import type { ContentPart, ModelResponse } from '../../../src/model/language-model.js';
import { chatFinishReason } from './finish-reason.js';
import { chatUsage } from './usage.js';

/**
 * A chat completion as our response: the first choice's text (a refusal counts as the
 * answer's text: it is what the model said) and its function tool calls, in that order.
 * Argument text that is not JSON is kept with `argumentsError`, never thrown.
 */
export function chatResponse(completion: OpenAI.Chat.ChatCompletion): ModelResponse {
  const choice = completion.choices?.[0];
  const message = choice?.message;
  const content: ContentPart[] = [];
  const text = message?.content || message?.refusal;
  if (text) content.push({ type: 'text', text });
  for (const call of message?.tool_calls ?? []) {
    if (call.type !== 'function') continue; // custom tools are never sent, so never called
    content.push({
      type: 'tool-call',
      toolCall: toolCall(call.id, call.function.name, call.function.arguments),
    });
  }
  // The deprecated single-call form, still answered by some OpenAI-compatible servers.
  if (message?.function_call) {
    const { name, arguments: args } = message.function_call;
    content.push({ type: 'tool-call', toolCall: toolCall(undefined, name, args) });
  }
  const hasToolCalls = content.some((part) => part.type === 'tool-call');
  return {
    content,
    usage: chatUsage(completion.usage),
    finishReason: chatFinishReason(choice?.finish_reason, hasToolCalls),
    response: { id: completion.id, modelId: completion.model },
  };
}

/** A complete tool call from the wire: a generated id when the server sent none. */
export function toolCall(
  id: string | null | undefined,
  name: string,
  argumentsText: string | null | undefined,
): ToolCall {
  return { id: id || generateToolCallId(), name, ...parseToolArguments(argumentsText ?? '') };
}
