import type {
  CallToolResult,
  CompatibilityCallToolResult,
  ContentBlock,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { type Attachment, attachmentProblem, attachmentSize } from '../../../src/attachments.js';
import type { ToolCall, ToolResult } from '../../../src/messages.js';
import type { ToolSpec } from '../../../src/model/language-model.js';
import { TOOL_NAME } from '../../../src/tools/define-tool.js';

// Pure mappings between MCP's tool shapes and ours, kept apart from the client so they can be
// tested on plain objects.

/**
 * An MCP tool as the model should see it, under `name` (see providerSafeNames). The input
 * schema is passed on as the server wrote it: it is already JSON Schema, and rewriting it
 * would make the model and the server disagree about what the arguments are.
 */
export function toToolSpec(tool: Tool, serverName: string, name: string = tool.name): ToolSpec {
  const description =
    tool.description?.trim() ||
    tool.title?.trim() ||
    tool.annotations?.title?.trim() ||
    `Tool '${tool.name}' of the MCP server '${serverName}'.`;
  return Object.freeze({ name, description, inputSchema: tool.inputSchema });
}

// What OpenAI and Anthropic accept as a function name (Gemini is stricter on the first
// character only); a request offering any other name is rejected with a 400, all of it.
// MCP allows more (dots, up to 128 characters), so a server's names cannot go out unchecked.
const PROVIDER_SAFE_NAME = TOOL_NAME;
const MAX_NAME_LENGTH = 64;

/** Whether every model provider accepts `name` as a tool name. */
export function isProviderSafeName(name: string): boolean {
  return PROVIDER_SAFE_NAME.test(name);
}

/**
 * Provider-safe names for a server's tool names, in the same order. A name that is already
 * safe is kept, so the usual server sees no renaming at all. Any other name has each
 * disallowed character replaced by `_` and is cut to 64 characters; if that is taken (by a
 * kept name, which always wins, or by an earlier renamed one) a suffix `_2`, `_3`, … is
 * appended, shortening the name to fit. The result is deterministic for a given listing, so
 * a name the model saw stays valid when the same tools are listed again.
 */
export function providerSafeNames(names: readonly string[]): string[] {
  const taken = new Set(names.filter(isProviderSafeName));
  return names.map((name) => {
    if (isProviderSafeName(name)) return name;
    // `u`: a character outside the BMP becomes one `_`, not two.
    const base = (name.replace(/[^A-Za-z0-9_-]/gu, '_') || '_').slice(0, MAX_NAME_LENGTH);
    let safe = base;
    for (let n = 2; taken.has(safe); n++) {
      const suffix = `_${n}`;
      safe = base.slice(0, MAX_NAME_LENGTH - suffix.length) + suffix;
    }
    taken.add(safe);
    return safe;
  });
}

/**
 * Whether a listed tool can be offered to the model. Tools that require MCP's task-based
 * execution cannot be run through `tools/call` (the SDK refuses), so offering them would
 * only produce failures.
 */
export function isCallable(tool: Tool): boolean {
  return tool.execution?.taskSupport !== 'required';
}

/**
 * A `tools/call` result as a ToolResult. `isError` is the server saying the tool failed: that
 * is data the model sees, not an exception. On success the output is the structured content
 * when the server sent it (it is the machine-readable form), else the content as text; the
 * images, audio and embedded binary resources in the content become the result's
 * `attachments`, which reach the model with it. Servers on the 2024-10-07 protocol answer with
 * a bare `toolResult`, kept as the output.
 */
export function toToolResult(
  call: ToolCall,
  result: CallToolResult | CompatibilityCallToolResult,
): ToolResult {
  if (!('content' in result) && 'toolResult' in result) {
    return { toolCallId: call.id, name: call.name, output: result.toolResult, success: true };
  }
  const content = (result.content as ContentBlock[] | undefined) ?? [];
  if (result.isError) {
    const text = contentText(content);
    return {
      toolCallId: call.id,
      name: call.name,
      output: null,
      success: false,
      error: text || `Tool '${call.name}' reported an error without a message.`,
    };
  }
  const attachments = content.map(blockAttachment);
  const text = contentText(content, attachments);
  const output = result.structuredContent ?? text;
  const attached = attachments.filter((a): a is Attachment => a !== undefined);
  return {
    toolCallId: call.id,
    name: call.name,
    output,
    success: true,
    ...(attached.length > 0 && { attachments: attached }),
  };
}

/**
 * The content blocks as one text. Text is kept as it is; other blocks cannot reach a model
 * through a text tool result, so they are described (kind, type, size, where to find them)
 * rather than dropped silently or dumped as base64. A block sent as an attachment (`attached`,
 * by position) is described as such, so the text says where it stood.
 */
export function contentText(
  content: readonly ContentBlock[],
  attached: readonly (Attachment | undefined)[] = [],
): string {
  return content
    .map((block, i) =>
      attached[i] !== undefined ? attachedText(block, attached[i]) : blockText(block),
    )
    .join('\n');
}

/** The media types every adapter sends (OpenAI Chat and Responses, Anthropic, Gemini). */
const EVERY_PROVIDER_READS: ReadonlySet<string> = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'application/pdf',
]);

/**
 * An image or binary resource block as an attachment, when every provider can read its type
 * (PNG, JPEG, GIF, WebP, PDF); undefined for other blocks, which the text describes.
 */
export function blockAttachment(block: ContentBlock): Attachment | undefined {
  let candidate: Record<string, unknown> | undefined;
  if (block.type === 'image' || block.type === 'audio') {
    candidate = { mediaType: block.mimeType?.toLowerCase(), data: block.data };
  } else if (block.type === 'resource' && 'blob' in block.resource) {
    const { resource } = block;
    const name = resourceName(resource.uri);
    candidate = {
      mediaType: (resource.mimeType ?? 'application/octet-stream').toLowerCase(),
      data: resource.blob,
      ...(name !== undefined && { name }),
    };
  }
  // A block whose type or data is not usable stays a description in the text, and so does a
  // type some provider cannot read: the server chose it, the app cannot change it, and one
  // unreadable attachment in the transcript would fail every later model call of the run.
  if (!candidate || attachmentProblem(candidate) !== undefined) return undefined;
  if (!EVERY_PROVIDER_READS.has(candidate.mediaType as string)) return undefined;
  return Object.freeze(candidate) as unknown as Attachment;
}

function attachedText(block: ContentBlock, attachment: Attachment): string {
  const size = `${attachmentSize(attachment)} bytes`;
  if (block.type === 'resource')
    return `[resource ${block.resource.uri} (${attachment.mediaType}), ${size}, attached]`;
  return `[${block.type} ${attachment.mediaType}, ${size}, attached]`;
}

/** The last segment of a resource URI, as the attachment's file name. */
function resourceName(uri: string): string | undefined {
  const last = uri.split(/[/?#]/).filter(Boolean).at(-1);
  return last && last !== uri ? last : undefined;
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type} ${block.mimeType}, ${base64Bytes(block.data)} bytes, not shown]`;
    case 'resource_link':
      return `[resource link ${block.name}: ${block.uri}${block.mimeType ? ` (${block.mimeType})` : ''}]`;
    case 'resource': {
      const { resource } = block;
      const type = resource.mimeType ? ` (${resource.mimeType})` : '';
      if ('text' in resource && typeof resource.text === 'string') {
        return `[resource ${resource.uri}${type}]\n${resource.text}`;
      }
      const size = 'blob' in resource ? `, ${base64Bytes(String(resource.blob))} bytes` : '';
      return `[resource ${resource.uri}${type}${size}, binary, not shown]`;
    }
    default:
      return `[${String((block as { type?: unknown }).type)} content, not shown]`;
  }
}

/** The decoded size of base64 data, without decoding it. */
function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}
