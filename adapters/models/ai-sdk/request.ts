import { type Attachment, isImage } from '../../../src/attachments.js';
import { assistantRequestText } from '../../../src/compile/truncation-marker.js';
import { type Message, type ToolResult, toolResultText } from '../../../src/messages.js';
import type {
  ModelRequest,
  ResponseFormat,
  ToolChoice,
} from '../../../src/model/language-model.js';
import type {
  AiSdkSpecVersion,
  SpecCallOptions,
  SpecFileData,
  SpecFilePart,
  SpecMessage,
  SpecResponseFormat,
  SpecTextPart,
  SpecToolChoice,
  SpecToolContent,
  SpecToolResultPart,
} from './spec.js';
import { type Downloads, isUrlSupported, type SupportedUrls } from './urls.js';

// A ModelRequest as an AI SDK model's call options. The prompt is written in the version the
// model speaks: files as v4's tagged data or v3's bare value, files in tool results as v4's
// `file` or v3's `image-data`/`file-data`. A URL the model lists in `supportedUrls` is passed
// as a URL; any other is downloaded first (./urls.ts), as `generateText` would.

/** Where a tool result's files go: in the result, or in a user message right after. */
export type ToolResultFiles = 'tool-result' | 'user-message';

export interface PromptContext {
  readonly version: AiSdkSpecVersion;
  readonly toolResultFiles: ToolResultFiles;
  readonly supportedUrls: SupportedUrls;
  readonly downloads: Downloads;
}

export interface CallSettings {
  /** The adapter's own provider options, under a request's (which win, key by key). */
  readonly providerOptions?: SpecCallOptions['providerOptions'];
  readonly headers?: { readonly [name: string]: string };
  readonly signal: AbortSignal;
}

/** The call options for `request`; async only for the URLs the model does not take. */
export async function callOptions(
  request: ModelRequest,
  context: PromptContext,
  settings: CallSettings,
): Promise<SpecCallOptions> {
  const tools = request.tools?.length
    ? request.tools.map((tool) => ({
        type: 'function' as const,
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
      }))
    : undefined;
  const providerOptions = mergeProviderOptions(settings.providerOptions, request.providerOptions);
  return {
    prompt: await prompt(request.messages, context),
    ...(tools && { tools }),
    ...(tools &&
      request.toolChoice !== undefined && { toolChoice: toolChoice(request.toolChoice) }),
    ...(request.responseFormat && { responseFormat: responseFormat(request.responseFormat) }),
    ...(request.temperature !== undefined && { temperature: request.temperature }),
    ...(request.topP !== undefined && { topP: request.topP }),
    ...(request.maxOutputTokens !== undefined && { maxOutputTokens: request.maxOutputTokens }),
    ...(request.stopSequences?.length && { stopSequences: [...request.stopSequences] }),
    ...(request.seed !== undefined && { seed: request.seed }),
    ...(settings.headers && { headers: { ...settings.headers } }),
    ...(providerOptions && { providerOptions }),
    abortSignal: settings.signal,
  };
}

/** Our messages as the AI SDK's prompt; consecutive tool results share one `tool` message. */
export async function prompt(
  messages: Iterable<Message>,
  context: PromptContext,
): Promise<SpecMessage[]> {
  const out: SpecMessage[] = [];
  let results: SpecToolResultPart[] | undefined;
  // Files of the current run of tool results, when they go in a user message after it.
  let moved: (SpecTextPart | SpecFilePart)[] = [];
  const flushMoved = () => {
    if (moved.length > 0) out.push({ role: 'user', content: moved });
    moved = [];
  };
  for (const message of messages) {
    if (message.role !== 'tool') {
      results = undefined;
      flushMoved();
    }
    switch (message.role) {
      case 'system':
        out.push({ role: 'system', content: message.content });
        break;
      case 'user': {
        const files = await Promise.all(
          (message.attachments ?? []).map((a) => filePart(a, context)),
        );
        // Only the files when there is no text: some providers refuse an empty text part.
        const text = message.content === '' && files.length > 0 ? [] : [message.content];
        out.push({
          role: 'user',
          content: [...text.map((t) => ({ type: 'text' as const, text: t })), ...files],
        });
        break;
      }
      case 'assistant': {
        // A truncated answer ends with the marker, so the model knows it was cut off.
        const text = assistantRequestText(message);
        out.push({
          role: 'assistant',
          content: [
            ...(text !== '' ? [{ type: 'text' as const, text }] : []),
            ...message.toolCalls.map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.id,
              toolName: call.name,
              input: call.arguments ?? {},
            })),
          ],
        });
        break;
      }
      case 'tool': {
        const files = message.attachments ?? [];
        // A failed result's files go after the results in either mode: the specification's
        // `error-text` output has no room for them, and `content` would drop the error flag.
        const move =
          (context.toolResultFiles === 'user-message' || !message.success) && files.length > 0;
        if (move) {
          moved.push(
            { type: 'text', text: `Files returned by ${message.name} (${message.toolCallId}):` },
            ...(await Promise.all(files.map((a) => filePart(a, context)))),
          );
        }
        const { attachments: _files, ...withoutFiles } = message;
        const part = await toolResultPart(move ? withoutFiles : message, context);
        if (results) results.push(part);
        else {
          results = [part];
          out.push({ role: 'tool', content: results });
        }
        break;
      }
    }
  }
  flushMoved();
  return out;
}

/**
 * A tool result: its text, or its error as `error-text` (a failed result's attachments were
 * moved out by the caller); with attachments, the spec's `content` output (the text, then
 * each file), which providers map into their tool results.
 */
async function toolResultPart(result: ToolResult, context: PromptContext) {
  const text = toolResultText(result);
  const base = {
    type: 'tool-result' as const,
    toolCallId: result.toolCallId,
    toolName: result.name,
  };
  if (!result.success) return { ...base, output: { type: 'error-text' as const, value: text } };
  if (!result.attachments?.length)
    return { ...base, output: { type: 'text' as const, value: text } };
  const files = await Promise.all(result.attachments.map((a) => toolContent(a, context)));
  return {
    ...base,
    output: {
      type: 'content' as const,
      value: [...(text !== '' ? [{ type: 'text' as const, text }] : []), ...files],
    },
  };
}

/** Where an attachment's bytes come from: inline base64, a URL the model takes, or a download. */
async function source(
  attachment: Attachment,
  context: PromptContext,
): Promise<{ readonly base64: string } | { readonly url: string }> {
  if (attachment.data !== undefined) return { base64: attachment.data };
  const url = attachment.url ?? '';
  if (isUrlSupported(context.supportedUrls, attachment.mediaType, url)) return { url };
  return { base64: await context.downloads.fetch(url, attachment.mediaType) };
}

async function filePart(attachment: Attachment, context: PromptContext): Promise<SpecFilePart> {
  const from = await source(attachment, context);
  let data: SpecFileData;
  if (context.version === 'v4') {
    data =
      'url' in from ? { type: 'url', url: new URL(from.url) } : { type: 'data', data: from.base64 };
  } else data = 'url' in from ? new URL(from.url) : from.base64;
  return {
    type: 'file',
    mediaType: attachment.mediaType,
    data,
    ...(attachment.name !== undefined && { filename: attachment.name }),
  };
}

async function toolContent(
  attachment: Attachment,
  context: PromptContext,
): Promise<SpecToolContent> {
  if (context.version === 'v4') {
    const { type: _file, ...file } = await filePart(attachment, context);
    return { type: 'file', ...file };
  }
  const from = await source(attachment, context);
  const image = isImage(attachment);
  if ('url' in from) return { type: image ? 'image-url' : 'file-url', url: from.url };
  if (image) return { type: 'image-data', data: from.base64, mediaType: attachment.mediaType };
  return {
    type: 'file-data',
    data: from.base64,
    mediaType: attachment.mediaType,
    ...(attachment.name !== undefined && { filename: attachment.name }),
  };
}

function toolChoice(choice: ToolChoice): SpecToolChoice {
  return typeof choice === 'string' ? { type: choice } : { type: 'tool', toolName: choice.name };
}

function responseFormat(format: ResponseFormat): SpecResponseFormat {
  switch (format.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json' };
    case 'json_schema':
      return {
        type: 'json',
        schema: format.schema,
        name: format.name,
        ...(format.description !== undefined && { description: format.description }),
      };
  }
}

/** Per provider key, the request's options over the adapter's. */
function mergeProviderOptions(
  base: SpecCallOptions['providerOptions'],
  perCall: ModelRequest['providerOptions'],
): SpecCallOptions['providerOptions'] {
  if (!base) return perCall;
  if (!perCall) return base;
  const merged: Record<string, { readonly [key: string]: unknown }> = { ...base };
  for (const [provider, options] of Object.entries(perCall)) {
    merged[provider] = { ...base[provider], ...options };
  }
  return merged;
}
