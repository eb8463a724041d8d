import type {
  CallToolResult,
  CompatibilityCallToolResult,
  ContentBlock,
  Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ToolCall, ToolResult } from '../../../src/messages.js';
import type { ToolSpec } from '../../../src/model/language-model.js';

// Pure mappings between MCP's tool shapes and ours, kept apart from the client so they can be
// tested on plain objects.

/**
 * An MCP tool as the model should see it. The input schema is passed on as the server wrote
 * it: it is already JSON Schema, and rewriting it would make the model and the server
 * disagree about what the arguments are.
 */
export function toToolSpec(tool: Tool, serverName: string): ToolSpec {
  const description =
    tool.description?.trim() ||
    tool.title?.trim() ||
    tool.annotations?.title?.trim() ||
    `Tool '${tool.name}' of the MCP server '${serverName}'.`;
  return Object.freeze({ name: tool.name, description, inputSchema: tool.inputSchema });
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
 * when the server sent it (it is the machine-readable form), else the content as text.
 * Servers on the 2024-10-07 protocol answer with a bare `toolResult`, kept as the output.
 */
export function toToolResult(
  call: ToolCall,
  result: CallToolResult | CompatibilityCallToolResult,
): ToolResult {
  if (!('content' in result) && 'toolResult' in result) {
    return { toolCallId: call.id, name: call.name, output: result.toolResult, success: true };
  }
  const text = contentText((result.content as ContentBlock[] | undefined) ?? []);
  if (result.isError) {
    return {
      toolCallId: call.id,
      name: call.name,
      output: null,
      success: false,
      error: text || `Tool '${call.name}' reported an error without a message.`,
    };
  }
  const output = result.structuredContent ?? text;
  return { toolCallId: call.id, name: call.name, output, success: true };
}

/**
 * The content blocks as one text. Text is kept as it is; other blocks cannot reach a model
 * through a text tool result, so they are described (kind, type, size, where to find them)
 * rather than dropped silently or dumped as base64.
 */
export function contentText(content: readonly ContentBlock[]): string {
  return content.map(blockText).join('\n');
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
