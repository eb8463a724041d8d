import { transformJSONSchema } from '@anthropic-ai/sdk/lib/transform-json-schema';
import type {
  ToolChoice as AnthropicToolChoice,
  ContentBlockParam,
  MessageCreateParamsBase,
  MessageParam,
  TextBlockParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import type { Attachment } from '../../../src/attachments.js';
import { assistantRequestText } from '../../../src/compile/truncation-marker.js';
import { isRecord } from '../../../src/is-record.js';
import { type Message, type ToolCall, toolResultText } from '../../../src/messages.js';
import type {
  ModelRequest,
  ResponseFormat,
  ToolChoice,
  ToolSpec,
} from '../../../src/model/language-model.js';
import { attachmentBlock } from './attachment-blocks.js';

// Request mapping: our provider-neutral ModelRequest → Messages API parameters. Pure: no SDK
// client, no I/O. The few places where the two models of a conversation differ are decided
// here, each with its reason next to it.

/** How system messages after the leading ones (the chain's notes, warnings) are sent. */
export type MidConversationSystem = 'user-note' | 'system-message';

export interface AnthropicRequestSettings {
  readonly modelId: string;
  /** `max_tokens` when the request sets no `maxOutputTokens`: the API requires one. */
  readonly maxTokens: number;
  readonly midConversationSystem: MidConversationSystem;
  /** Parameters merged into every request, before the request's own `providerOptions.anthropic`. */
  readonly providerOptions?: { readonly [key: string]: unknown };
}

/** The request parameters, without `stream` (the adapter sets it per call). */
export type AnthropicParams = Omit<MessageCreateParamsBase, 'stream'>;

/**
 * Maps a request. Decisions worth knowing:
 * - Leading system messages become the top-level `system` field (one text block each).
 * - Later system messages are, by default, a user-role text block `<system-note>…</system-note>`:
 *   the API's own mid-conversation `role: 'system'` messages are accepted by Claude Opus 4.8
 *   only, with placement rules, so the portable default is a note; `'system-message'` opts in.
 * - Attachments are `image` and `document` blocks (see attachment-blocks.ts): before the text
 *   in a user message, and inside a `tool_result`'s content, after its text.
 * - Tool results are `tool_result` blocks in a user message (`is_error` when the tool failed);
 *   consecutive same-role messages merge, because the API wants user and assistant to alternate,
 *   and tool results go first in their user message, as the API requires.
 * - Text that is empty or only whitespace is never sent: the API rejects such a text block
 *   with a 400, and a transcript holding one (a model's lone "\n" before its tool calls, say)
 *   would fail every later request. See `mapMessages` for what stands in for an empty turn.
 * - `temperature`, `topP` and `seed` are not sent: API version 2026-10-21 (what SDK 1.x speaks)
 *   rejects sampling parameters with a 400, even at default values, and never had a seed. Put
 *   them in `providerOptions.anthropic` if you pin an older `anthropic-version` header.
 * - Response formats: see `responseFormatParams`.
 */
export function toAnthropicParams(
  request: ModelRequest,
  settings: AnthropicRequestSettings,
): AnthropicParams {
  const { system, messages } = mapMessages(request.messages, settings.midConversationSystem);
  const format = responseFormatParams(request.responseFormat);
  if (format.instruction) system.push({ type: 'text', text: format.instruction });
  const tools = request.tools ?? [];
  const params: AnthropicParams = {
    model: settings.modelId,
    max_tokens: request.maxOutputTokens ?? settings.maxTokens,
    messages,
    ...(system.length > 0 && { system: system.length === 1 ? system[0]?.text : system }),
    ...(tools.length > 0 && { tools: tools.map(toAnthropicTool) }),
    // A tool choice without tools is meaningless to the API (and `none` is the same as no tools).
    ...(tools.length > 0 &&
      request.toolChoice !== undefined && {
        tool_choice: toAnthropicToolChoice(request.toolChoice),
      }),
    ...(request.stopSequences?.length && { stop_sequences: [...request.stopSequences] }),
    ...(format.outputConfig && { output_config: format.outputConfig }),
  };
  return mergeProviderOptions(
    mergeProviderOptions(params, settings.providerOptions),
    request.providerOptions?.anthropic,
  );
}

/**
 * What an empty (or whitespace-only) user message is sent as, when nothing else is in its turn.
 * Dropping the turn would leave no message at all, or a conversation ending on the assistant's
 * turn, which the API takes as a prefill to continue (and newer models reject outright); a
 * placeholder keeps the turn the user took, and tells the model it said nothing.
 */
export const EMPTY_USER_TEXT = '(empty message)';

/**
 * Messages API messages and the `system` blocks, from our transcript. Blank text is left out
 * everywhere (system messages, notes, text blocks, tool result content); an assistant turn left
 * with nothing is dropped, so the user turns around it merge; a user turn left with nothing is
 * `EMPTY_USER_TEXT`.
 */
export function mapMessages(
  transcript: Iterable<Message>,
  midConversationSystem: MidConversationSystem = 'user-note',
): { system: TextBlockParam[]; messages: MessageParam[] } {
  const system: TextBlockParam[] = [];
  const messages: MessageParam[] = [];
  let leading = true;
  const add = (role: 'user' | 'assistant', blocks: ContentBlockParam[]) => {
    // A user message always opens (or joins) a user turn, even with no blocks: see above.
    if (blocks.length === 0 && role === 'assistant') return;
    const last = messages.at(-1);
    if (last && last.role === role && Array.isArray(last.content)) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  let index = -1;
  for (const message of transcript) {
    index++;
    const blocksOf = (attachments: readonly Attachment[] | undefined) =>
      (attachments ?? []).map((a, i) => attachmentBlock(a, `messages[${index}].attachments[${i}]`));
    if (message.role === 'system') {
      // A blank instruction says nothing, and would be a blank text block (or system message).
      if (isBlank(message.content)) continue;
      if (leading) {
        system.push({ type: 'text', text: message.content });
      } else if (midConversationSystem === 'system-message') {
        messages.push({ role: 'system', content: message.content });
      } else {
        add('user', [{ type: 'text', text: `<system-note>${message.content}</system-note>` }]);
      }
      continue;
    }
    leading = false;
    // Images and documents before the text, as Anthropic advises for the best answers.
    if (message.role === 'user')
      add('user', [...blocksOf(message.attachments), ...textBlocks(message.content)]);
    else if (message.role === 'assistant') {
      // A truncated answer ends with the seed's marker, so the model knows it was cut off.
      const text = assistantRequestText(message);
      add('assistant', [...textBlocks(text), ...message.toolCalls.map(toolUseBlock)]);
    } else {
      const text = toolResultText(message);
      // Attachments go inside the result, after its text, as blocks the API allows there.
      const attached = blocksOf(message.attachments);
      const content = attached.length > 0 ? [...textBlocks(text), ...attached] : text;
      add('user', [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          // A blank content is left out rather than sent as a blank text.
          ...((attached.length > 0 || !isBlank(text)) && { content }),
          ...(!message.success && { is_error: true }),
        },
      ]);
    }
  }
  for (const message of messages) {
    if (message.role === 'user' && Array.isArray(message.content)) {
      message.content =
        message.content.length === 0
          ? [{ type: 'text', text: EMPTY_USER_TEXT }]
          : toolResultsFirst(message.content);
    }
  }
  return { system, messages };
}

// The API rejects text blocks that are empty or only whitespace, so those send no block.
function textBlocks(text: string): TextBlockParam[] {
  return isBlank(text) ? [] : [{ type: 'text', text }];
}

function isBlank(text: string): boolean {
  return text.trim() === '';
}

function toolUseBlock(call: ToolCall): ContentBlockParam {
  // `input` must be a JSON object. A call whose arguments did not parse (argumentsError) or
  // were not an object is replayed with `{}`: its failed tool result tells the model why.
  const input = call.argumentsError === undefined && isRecord(call.arguments) ? call.arguments : {};
  return { type: 'tool_use', id: call.id, name: call.name, input };
}

// A user message answering tool calls must start with its tool_result blocks (then any text).
function toolResultsFirst(blocks: ContentBlockParam[]): ContentBlockParam[] {
  const results = blocks.filter((b) => b.type === 'tool_result');
  if (results.length === 0 || results.length === blocks.length) return blocks;
  return [...results, ...blocks.filter((b) => b.type !== 'tool_result')];
}

export function toAnthropicTool(tool: ToolSpec): Tool {
  return {
    name: tool.name,
    description: tool.description,
    input_schema: { type: 'object', ...tool.inputSchema } as Tool['input_schema'],
  };
}

export function toAnthropicToolChoice(choice: ToolChoice): AnthropicToolChoice {
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'none') return { type: 'none' };
  if (choice === 'required') return { type: 'any' };
  return { type: 'tool', name: choice.name };
}

/**
 * How a response format is asked for. With `strict: true`, a `json_schema` format uses the
 * API's structured outputs (`output_config.format`): decoding is constrained, but only to the
 * subset of JSON Schema the API accepts, so the schema goes through the SDK's own transform
 * (every object closed with `additionalProperties: false`, unsupported keywords moved into
 * descriptions). That would silently close open objects such as `{ type: 'object' }`, so it
 * is opt-in. Otherwise the schema (or, for `json_object`, the JSON requirement) is a system
 * instruction; the chain parses and validates the answer either way.
 */
export function responseFormatParams(format: ResponseFormat | undefined): {
  readonly instruction?: string;
  readonly outputConfig?: NonNullable<MessageCreateParamsBase['output_config']>;
} {
  if (!format || format.type === 'text') return {};
  if (format.type === 'json_object') {
    return {
      instruction:
        'Answer with a single JSON object and nothing else: no prose, no Markdown code fences.',
    };
  }
  if (format.strict) {
    return {
      outputConfig: {
        format: { type: 'json_schema', schema: transformJSONSchema({ ...format.schema }) },
      },
    };
  }
  return {
    instruction:
      `Answer with a single JSON value that matches the JSON Schema "${format.name}" below, and nothing else: no prose, no Markdown code fences.` +
      (format.description ? `\nWhat it is: ${format.description}` : '') +
      `\n${JSON.stringify(format.schema)}`,
  };
}

/**
 * `options` laid over `params`, key by key; `output_config` is merged one level deeper, so an
 * `effort` from the options keeps a structured-output `format` from the request.
 */
export function mergeProviderOptions(
  params: AnthropicParams,
  options: { readonly [key: string]: unknown } | undefined,
): AnthropicParams {
  if (!options) return params;
  const merged = { ...params, ...options } as AnthropicParams;
  if (isRecord(options.output_config) && params.output_config) {
    merged.output_config = { ...params.output_config, ...options.output_config };
  }
  return merged;
}
