import type OpenAI from 'openai';
import type { Attachment } from '../../../src/attachments.js';
import { assistantRequestText } from '../../../src/compile/truncation-marker.js';
import { type Message, toolResultText } from '../../../src/messages.js';
import type {
  ModelRequest,
  ResponseFormat,
  ToolChoice,
  ToolSpec,
} from '../../../src/model/language-model.js';
import { responsesAttachmentPart } from './attachment-parts.js';
import { toolArgumentsText } from './chat-request.js';

type ResponsesParams = OpenAI.Responses.ResponseCreateParamsNonStreaming;
type InputItem = OpenAI.Responses.ResponseInputItem;

export interface ResponsesRequestSettings {
  readonly model: string;
  /** Provider options, merged over the mapped parameters. */
  readonly extra?: { readonly [key: string]: unknown };
}

/**
 * A ModelRequest as Responses API parameters (without `stream`). Every call sends the whole
 * conversation as `input` items; nothing relies on state stored at OpenAI
 * (`previous_response_id`), so a run can be replayed, resumed or moved to another provider.
 * The Responses API has no stop sequences and no seed: `stopSequences` and `seed` are not sent.
 */
export function responsesRequestParams(
  request: ModelRequest,
  settings: ResponsesRequestSettings,
): ResponsesParams {
  const { instructions, input } = responsesInput(request.messages);
  const params: ResponsesParams = { model: settings.model, input };
  if (instructions !== undefined) params.instructions = instructions;
  if (request.tools?.length) {
    params.tools = request.tools.map(responsesTool);
    if (request.toolChoice !== undefined)
      params.tool_choice = responsesToolChoice(request.toolChoice);
  }
  if (request.responseFormat) params.text = { format: responsesFormat(request.responseFormat) };
  if (request.temperature !== undefined) params.temperature = request.temperature;
  if (request.topP !== undefined) params.top_p = request.topP;
  if (request.maxOutputTokens !== undefined) params.max_output_tokens = request.maxOutputTokens;
  return { ...params, ...settings.extra } as ResponsesParams;
}

/**
 * Our messages as Responses input items. A leading system message becomes `instructions`;
 * later system messages (notes, warnings, corrections) stay where they are, as system
 * messages. An assistant turn becomes its text message followed by one `function_call` item
 * per call; a tool result becomes a `function_call_output` with the call's `call_id`.
 * Attachments: a user message with some has a content array (`input_text`, then `input_image`
 * and `input_file` parts); a tool result with some has its `output` as such an array (the
 * result's text first), so they reach the model inside the result they belong to.
 */
export function responsesInput(messages: Iterable<Message>): {
  instructions?: string;
  input: InputItem[];
} {
  let instructions: string | undefined;
  const input: InputItem[] = [];
  let first = true;
  let index = -1;
  for (const message of messages) {
    index++;
    const leading = first;
    first = false;
    const parts = (attachments: readonly Attachment[] | undefined) =>
      (attachments ?? []).map((a, i) =>
        responsesAttachmentPart(a, `messages[${index}].attachments[${i}]`),
      );
    switch (message.role) {
      case 'system':
        if (leading) instructions = message.content;
        else input.push({ type: 'message', role: 'system', content: message.content });
        break;
      case 'user':
        if (!message.attachments?.length) {
          input.push({ type: 'message', role: 'user', content: message.content });
          break;
        }
        input.push({
          type: 'message',
          role: 'user',
          content: [
            ...(message.content ? [{ type: 'input_text' as const, text: message.content }] : []),
            ...parts(message.attachments),
          ],
        });
        break;
      case 'assistant': {
        // A truncated answer ends with the seed's marker, so the model knows it was cut off.
        const content = assistantRequestText(message);
        if (content) input.push({ type: 'message', role: 'assistant', content });
        for (const call of message.toolCalls) {
          input.push({
            type: 'function_call',
            call_id: call.id,
            name: call.name,
            arguments: toolArgumentsText(call),
          });
        }
        break;
      }
      case 'tool':
        input.push({
          type: 'function_call_output',
          call_id: message.toolCallId,
          output: message.attachments?.length
            ? [{ type: 'input_text', text: toolResultText(message) }, ...parts(message.attachments)]
            : toolResultText(message),
        });
        break;
    }
  }
  return instructions === undefined ? { input } : { instructions, input };
}

function responsesTool(tool: ToolSpec): OpenAI.Responses.FunctionTool {
  return {
    type: 'function',
    name: tool.name,
    description: tool.description,
    parameters: { ...tool.inputSchema },
    // Strict mode requires every property to be required and `additionalProperties: false`,
    // which ordinary tool schemas (optional fields) do not meet; the tool runner validates.
    strict: false,
  };
}

function responsesToolChoice(choice: ToolChoice): NonNullable<ResponsesParams['tool_choice']> {
  if (typeof choice === 'string') return choice;
  return { type: 'function', name: choice.name };
}

function responsesFormat(format: ResponseFormat): OpenAI.Responses.ResponseFormatTextConfig {
  switch (format.type) {
    case 'text':
    case 'json_object':
      return { type: format.type };
    case 'json_schema':
      return {
        type: 'json_schema',
        name: format.name,
        schema: { ...format.schema },
        ...(format.description !== undefined && { description: format.description }),
        ...(format.strict !== undefined && { strict: format.strict }),
      };
  }
}
