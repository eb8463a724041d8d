import type OpenAI from 'openai';
import { toolAttachmentsLabel } from '../../../src/attachments.js';
import { assistantRequestText } from '../../../src/compile/truncation-marker.js';
import {
  type Message,
  type ToolCall,
  type ToolResultMessage,
  toolResultText,
} from '../../../src/messages.js';
import type {
  ModelRequest,
  ResponseFormat,
  ToolChoice,
  ToolSpec,
} from '../../../src/model/language-model.js';
import { chatAttachmentPart } from './attachment-parts.js';

type ChatParams = OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
type ChatMessageParam = OpenAI.Chat.ChatCompletionMessageParam;

/** Which field carries `maxOutputTokens`. */
export type MaxTokensField = 'max_completion_tokens' | 'max_tokens';

export interface ChatRequestSettings {
  readonly model: string;
  /**
   * OpenAI deprecated `max_tokens` for `max_completion_tokens` (reasoning models refuse the
   * old one), while several OpenAI-compatible servers only read `max_tokens`. Default:
   * `max_completion_tokens`.
   */
  readonly maxTokensField?: MaxTokensField;
  /** Provider options, merged over the mapped parameters: they win, as an escape hatch should. */
  readonly extra?: { readonly [key: string]: unknown };
}

/** A ModelRequest as Chat Completions parameters (without `stream`, which the caller adds). */
export function chatRequestParams(
  request: ModelRequest,
  settings: ChatRequestSettings,
): ChatParams {
  const params: ChatParams = {
    model: settings.model,
    messages: chatMessages(request.messages),
  };
  if (request.tools?.length) {
    params.tools = request.tools.map(chatTool);
    // OpenAI rejects tool_choice without tools, so it is only sent alongside them.
    if (request.toolChoice !== undefined) params.tool_choice = chatToolChoice(request.toolChoice);
  }
  if (request.responseFormat) params.response_format = chatResponseFormat(request.responseFormat);
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.topP !== undefined) params.top_p = request.topP;
  if (request.maxOutputTokens !== undefined) {
    params[settings.maxTokensField ?? 'max_completion_tokens'] = request.maxOutputTokens;
  }
  if (request.stopSequences?.length) params.stop = [...request.stopSequences];
  if (request.seed !== undefined) params.seed = request.seed;
  return { ...params, ...settings.extra } as ChatParams;
}

/**
 * Our messages as Chat Completions messages; tool results become `role: 'tool'` messages. A
 * user message with attachments has a content array (its text, then one part per attachment).
 * A tool message takes text only, so the attachments of a step's tool results go in ONE user
 * message right after that step's tool messages, each result's parts after a line naming its
 * call. Messages without attachments are sent exactly as before attachments existed.
 */
export function chatMessages(messages: Iterable<Message>): ChatMessageParam[] {
  const out: ChatMessageParam[] = [];
  // The step's tool results that carry attachments, and where they are in the transcript.
  let attached: { result: ToolResultMessage; index: number }[] = [];
  const flush = () => {
    if (attached.length > 0) out.push(toolAttachmentsMessage(attached));
    attached = [];
  };
  let index = -1;
  for (const message of messages) {
    index++;
    if (message.role !== 'tool') flush();
    switch (message.role) {
      case 'system':
        out.push({ role: message.role, content: message.content });
        break;
      case 'user':
        if (!message.attachments?.length) {
          out.push({ role: 'user', content: message.content });
          break;
        }
        out.push({
          role: 'user',
          content: [
            ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
            ...message.attachments.map((a, i) =>
              chatAttachmentPart(a, `messages[${index}].attachments[${i}]`),
            ),
          ],
        });
        break;
      case 'assistant': {
        // A truncated answer ends with the seed's marker, so the model knows it was cut off.
        const content = assistantRequestText(message);
        if (message.toolCalls.length === 0) {
          out.push({ role: 'assistant', content });
          break;
        }
        out.push({
          role: 'assistant',
          // `null`, not '', is how the API writes a turn that only called tools.
          content: content || null,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: toolArgumentsText(call) },
          })),
        });
        break;
      }
      case 'tool':
        out.push({
          role: 'tool',
          tool_call_id: message.toolCallId,
          content: toolResultText(message),
        });
        if (message.attachments?.length) attached.push({ result: message, index });
        break;
    }
  }
  flush();
  return out;
}

/** The user message that carries a step's tool-result attachments, each after its call's label. */
function toolAttachmentsMessage(
  attached: readonly { result: ToolResultMessage; index: number }[],
): ChatMessageParam {
  const content: OpenAI.Chat.ChatCompletionContentPart[] = [];
  for (const { result, index } of attached) {
    const attachments = result.attachments ?? [];
    content.push({ type: 'text', text: toolAttachmentsLabel(result, attachments.length) });
    for (const [i, a] of attachments.entries())
      content.push(chatAttachmentPart(a, `messages[${index}].attachments[${i}]`));
  }
  return { role: 'user', content };
}

/**
 * The JSON text of a call's arguments, as the provider sent it. Arguments that did not parse
 * are sent back verbatim, so the model sees the text its correction refers to.
 */
export function toolArgumentsText(call: ToolCall): string {
  if (call.argumentsError !== undefined && typeof call.arguments === 'string')
    return call.arguments;
  return JSON.stringify(call.arguments ?? {});
}

function chatTool(tool: ToolSpec): OpenAI.Chat.ChatCompletionFunctionTool {
  return {
    type: 'function',
    function: {
      name: tool.name,
      description: tool.description,
      parameters: { ...tool.inputSchema },
    },
  };
}

function chatToolChoice(choice: ToolChoice): OpenAI.Chat.ChatCompletionToolChoiceOption {
  if (typeof choice === 'string') return choice;
  return { type: 'function', function: { name: choice.name } };
}

function chatResponseFormat(format: ResponseFormat): NonNullable<ChatParams['response_format']> {
  switch (format.type) {
    case 'text':
    case 'json_object':
      return { type: format.type };
    case 'json_schema':
      return {
        type: 'json_schema',
        json_schema: {
          name: format.name,
          schema: { ...format.schema },
          ...(format.description !== undefined && { description: format.description }),
          ...(format.strict !== undefined && { strict: format.strict }),
        },
      };
  }
}
