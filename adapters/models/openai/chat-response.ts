import type OpenAI from 'openai';
import { isRecord } from '../../../src/is-record.js';
import { generateToolCallId, parseToolArguments, type ToolCall } from '../../../src/messages.js';
import type { ContentPart, ModelResponse } from '../../../src/model/language-model.js';
import { describeValue, malformedResponse } from '../../../src/model/malformed-response.js';
import { responseFailure } from './errors.js';
import { chatFinishReason } from './finish-reason.js';
import { chatUsage } from './usage.js';

type Choice = OpenAI.Chat.ChatCompletion.Choice;

/**
 * A chat completion as our response: the first choice's text (a refusal counts as the
 * answer's text: it is what the model said) and its function tool calls, in that order.
 * Argument text that is not JSON is kept with `argumentsError`, never thrown. A completion
 * without a first choice and its message is malformed (see firstChoice); a missing `usage`
 * counts as zero.
 */
export function chatResponse(completion: OpenAI.Chat.ChatCompletion): ModelResponse {
  const choice = firstChoice(completion);
  const message = choice.message;
  const content: ContentPart[] = [];
  const text = message.content || message.refusal;
  if (text) content.push({ type: 'text', text });
  for (const call of message.tool_calls ?? []) {
    if (call.type !== 'function') continue; // custom tools are never sent, so never called
    content.push({
      type: 'tool-call',
      toolCall: toolCall(call.id, call.function.name, call.function.arguments),
    });
  }
  // The deprecated single-call form, still answered by some OpenAI-compatible servers.
  if (message.function_call) {
    const { name, arguments: args } = message.function_call;
    content.push({ type: 'tool-call', toolCall: toolCall(undefined, name, args) });
  }
  const hasToolCalls = content.some((part) => part.type === 'tool-call');
  return {
    content,
    usage: chatUsage(completion.usage),
    finishReason: chatFinishReason(choice.finish_reason, hasToolCalls),
    response: { id: completion.id, modelId: completion.model },
  };
}

/**
 * The completion's first choice, checked: an object with `choices`, whose first has a
 * `message` with text (or null) and a list of tool calls (or none). A JSON error object in
 * a 200 (some OpenAI-compatible servers answer so) is that error. Anything else is a
 * malformed response; only a body that is not an object at all is retryable (a gateway's
 * answer, not the API's), since the same server answers the same shape again.
 */
function firstChoice(completion: unknown): Choice {
  if (!isRecord(completion)) {
    const problem = `the chat completion is ${describeValue(completion)}, not an object`;
    throw malformedResponse('OpenAI', problem, true);
  }
  if (isRecord(completion.error)) throw responseFailure(completion.error);
  const { choices } = completion;
  if (!Array.isArray(choices) || choices.length === 0) {
    const problem = `the chat completion has no \`choices\` (got ${describeValue(choices)})`;
    throw malformedResponse('OpenAI', problem, false);
  }
  const choice: unknown = choices[0];
  if (!isRecord(choice) || !isRecord(choice.message)) {
    throw malformedResponse('OpenAI', "the chat completion's first choice has no `message`", false);
  }
  const { content, refusal, tool_calls } = choice.message;
  if (content !== null && content !== undefined && typeof content !== 'string') {
    const problem = `the first choice's \`message.content\` is ${describeValue(content)}, not text`;
    throw malformedResponse('OpenAI', problem, false);
  }
  if (refusal !== null && refusal !== undefined && typeof refusal !== 'string') {
    throw malformedResponse('OpenAI', "the first choice's `message.refusal` is not text", false);
  }
  if (tool_calls !== null && tool_calls !== undefined && !Array.isArray(tool_calls)) {
    throw malformedResponse(
      'OpenAI',
      "the first choice's `message.tool_calls` is not a list",
      false,
    );
  }
  return choice as unknown as Choice;
}

/** A complete tool call from the wire: a generated id when the server sent none. */
export function toolCall(
  id: string | null | undefined,
  name: string,
  argumentsText: string | null | undefined,
): ToolCall {
  return { id: id || generateToolCallId(), name, ...parseToolArguments(argumentsText ?? '') };
}
