import type {
  Content,
  FunctionCallingConfigMode,
  GenerateContentConfig,
  GenerateContentParameters,
  Part,
  Tool,
  ToolConfig,
} from '@google/genai';
import { type Attachment, toolAttachmentsLabel } from '../../../src/attachments.js';
import { assistantRequestText } from '../../../src/compile/truncation-marker.js';
import { type Message, toolResultText } from '../../../src/messages.js';
import type { ModelRequest, ToolChoice, ToolSpec } from '../../../src/model/language-model.js';
import type { CallMemo } from './call-memory.js';

/**
 * The placeholder Gemini documents for a replayed function call whose thought signature is
 * unknown (a transcript from another process, another model, or one we forgot): Gemini 3
 * models reject a current-turn call without a signature, and accept this one instead.
 */
export const SKIP_THOUGHT_SIGNATURE = 'skip_thought_signature_validator';

export interface GeminiRequestSettings {
  readonly model: string;
  /** What the adapter remembers of the calls Gemini made (ids it issued, thought signatures). */
  readonly recall?: (toolCallId: string) => CallMemo | undefined;
  /**
   * Config sent with every request (the adapter's `providerOptions`). The mapped request
   * overrides it, and the request's own `providerOptions.gemini` overrides both.
   */
  readonly defaults?: { readonly [key: string]: unknown };
}

/** `generateContent` parameters, with the contents and config in the form this file builds. */
export interface GeminiParams extends GenerateContentParameters {
  contents: Content[];
  config: GenerateContentConfig;
}

/** A ModelRequest as `ai.models.generateContent` parameters (without the abort signal). */
export function geminiRequest(
  request: ModelRequest,
  settings: GeminiRequestSettings,
): GeminiParams {
  const recall = settings.recall ?? (() => undefined);
  const { system, contents } = geminiContents(request.messages, recall, {
    functionResponseParts: takesFunctionResponseParts(settings.model),
  });
  const config: GenerateContentConfig = { ...settings.defaults };
  if (system.length) config.systemInstruction = { parts: system.map((text) => ({ text })) };
  if (request.tools?.length) {
    config.tools = geminiTools(request.tools);
    if (request.toolChoice !== undefined) config.toolConfig = geminiToolConfig(request.toolChoice);
  }
  const format = request.responseFormat;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    // JSON Schema as it is: `responseSchema` takes only Gemini's OpenAPI subset.
    config.responseJsonSchema = format.schema;
  }
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.maxOutputTokens !== undefined) config.maxOutputTokens = request.maxOutputTokens;
  if (request.stopSequences?.length) config.stopSequences = [...request.stopSequences];
  if (request.seed !== undefined) config.seed = request.seed;
  return {
    model: settings.model,
    contents,
    config: { ...config, ...request.providerOptions?.gemini },
  };
}

/**
 * Our transcript as Gemini contents. Leading system messages become `systemInstruction`.
 * A system message later in the conversation (a warning, a correction, a note after tool
 * results) becomes user text wrapped in `<system-note>`: Gemini has a single instruction
 * for the whole request and only `user` and `model` roles, and such a note refers to what
 * came just before it, so it keeps its place in the conversation and the tag tells the
 * model it comes from the system, not from the person. Consecutive contents of one role are
 * merged, so the function responses of one step share a turn as Gemini expects.
 *
 * Attachments are `inlineData` (bytes) or `fileData` (a URL) parts: after the text in a user
 * turn. A tool result's attachments go in its `functionResponse.parts` when
 * `functionResponseParts` is set (Gemini 3 and later: see `takesFunctionResponseParts`);
 * otherwise, after the step's function responses in the same user turn, each result's parts
 * after a text naming its call.
 */
export function geminiContents(
  messages: Iterable<Message>,
  recall: (toolCallId: string) => CallMemo | undefined = () => undefined,
  options: { readonly functionResponseParts?: boolean } = {},
): { system: string[]; contents: Content[] } {
  const system: string[] = [];
  const contents: Content[] = [];
  let leading = true;
  // The step's tool-result attachments waiting to follow its function responses.
  let trailing: Part[] = [];
  const flush = () => {
    append(contents, 'user', trailing);
    trailing = [];
  };
  for (const message of messages) {
    if (message.role === 'system' && leading) {
      if (message.content) system.push(message.content);
      continue;
    }
    leading = false;
    if (message.role !== 'tool') flush();
    switch (message.role) {
      case 'system':
        append(contents, 'user', [{ text: `<system-note>${message.content}</system-note>` }]);
        break;
      case 'user':
        append(contents, 'user', [
          ...(message.content ? [{ text: message.content }] : []),
          ...(message.attachments ?? []).map(mediaPart),
        ]);
        break;
      case 'assistant':
        append(contents, 'model', modelParts(message, recall));
        break;
      case 'tool': {
        const providerId = recall(message.toolCallId)?.providerId;
        const attachments = message.attachments ?? [];
        const inside = options.functionResponseParts === true && attachments.length > 0;
        append(contents, 'user', [
          {
            functionResponse: {
              ...(providerId && { id: message.toolCallId }),
              name: message.name,
              response: message.success
                ? { output: toolResultText(message) }
                : { error: toolResultText(message) },
              ...(inside && { parts: attachments.map(mediaPart) }),
            },
          },
        ]);
        if (attachments.length > 0 && !inside) {
          trailing.push({ text: toolAttachmentsLabel(message, attachments.length) });
          trailing.push(...attachments.map(mediaPart));
        }
        break;
      }
    }
  }
  flush();
  return { system, contents };
}

/**
 * Whether `model` takes images and files inside a function response (`functionResponse.parts`):
 * Gemini 3 and later do; Gemini 1.x and 2.x answer 400 when the field is there. Read from the
 * model id's major version (`gemini-3-pro-preview`, `models/gemini-3.1-flash`); any id without
 * one (an alias, a tuned model, another family) gets the form every model takes.
 */
export function takesFunctionResponseParts(model: string): boolean {
  const id = model.slice(model.lastIndexOf('/') + 1);
  const major = /^gemini-(\d+)/.exec(id)?.[1];
  return major !== undefined && Number(major) >= 3;
}

/** An attachment as a part: its bytes as `inlineData`, a URL as `fileData`. */
function mediaPart(attachment: Attachment): Part {
  return attachment.url !== undefined
    ? { fileData: { mimeType: attachment.mediaType, fileUri: attachment.url } }
    : { inlineData: { mimeType: attachment.mediaType, data: attachment.data ?? '' } };
}

function modelParts(
  message: Extract<Message, { role: 'assistant' }>,
  recall: (toolCallId: string) => CallMemo | undefined,
): Part[] {
  // A truncated answer ends with the seed's marker, so the model knows it was cut off.
  const text = assistantRequestText(message);
  const parts: Part[] = text ? [{ text }] : [];
  const memos = message.toolCalls.map((call) => recall(call.id));
  const signed = memos.some((memo) => memo?.thoughtSignature !== undefined);
  message.toolCalls.forEach((call, i) => {
    const memo = memos[i];
    // Gemini signs the first call of a step; when we know no signature, that call gets the
    // documented placeholder so that Gemini 3 accepts the replay.
    const signature =
      memo?.thoughtSignature ?? (i === 0 && !signed ? SKIP_THOUGHT_SIGNATURE : undefined);
    parts.push({
      functionCall: {
        ...(memo?.providerId && { id: call.id }),
        name: call.name,
        args: functionArgs(call.arguments),
      },
      ...(signature !== undefined && { thoughtSignature: signature }),
    });
  });
  return parts;
}

/**
 * Gemini's `args` is a JSON object. Arguments that were not one (the text of a call Gemini
 * reported as MALFORMED_FUNCTION_CALL, or text that was not JSON, which the tool runner
 * answered with a failed result) are replayed under a key, so the model still sees what it
 * sent.
 */
function functionArgs(value: unknown): Record<string, unknown> {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    return value as Record<string, unknown>;
  }
  return { value };
}

function append(contents: Content[], role: 'user' | 'model', parts: Part[]): void {
  if (parts.length === 0) return;
  const last = contents.at(-1);
  if (last?.role === role) last.parts?.push(...parts);
  else contents.push({ role, parts });
}

export function geminiTools(tools: readonly ToolSpec[]): Tool[] {
  return [
    {
      functionDeclarations: tools.map((tool) => ({
        name: tool.name,
        description: tool.description,
        // Full JSON Schema; `parameters` would take only Gemini's OpenAPI subset.
        parametersJsonSchema: tool.inputSchema,
      })),
    },
  ];
}

export function geminiToolConfig(choice: ToolChoice): ToolConfig {
  const mode = (value: string) => value as FunctionCallingConfigMode;
  if (choice === 'auto') return { functionCallingConfig: { mode: mode('AUTO') } };
  if (choice === 'none') return { functionCallingConfig: { mode: mode('NONE') } };
  if (choice === 'required') return { functionCallingConfig: { mode: mode('ANY') } };
  return { functionCallingConfig: { mode: mode('ANY'), allowedFunctionNames: [choice.name] } };
}
