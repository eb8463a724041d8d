import { randomUUID } from './lazy-crypto.js';

/**
 * An image or a file that goes to the model with a user message or a tool result: its bytes
 * (base64 text, so a transcript stays JSON and a durable journal can hold it) or a URL, its
 * media type, and an optional name. Images are the attachments whose media type is `image/…`;
 * every other type is a file (a PDF, a CSV, audio…). Adapters map them to each provider's
 * parts; a provider that cannot take a type says so with a clear error rather than dropping it.
 */
export interface Attachment {
  /** `image/png`, `application/pdf`, `text/csv`… */
  readonly mediaType: string;
  /** The bytes, base64-encoded (no `data:` prefix). Exactly one of `data` and `url` is set. */
  readonly data?: string;
  /**
   * An `https:` URL the provider fetches. An adapter whose API cannot take this type by URL
   * refuses it with an InputError before any request; `fromAiSdk` downloads it instead.
   */
  readonly url?: string;
  /** A file name, for providers and viewers that show one (`report.pdf`). */
  readonly name?: string;
}

/**
 * A call the model asked for. `arguments` is the parsed JSON value the provider sent.
 * When the provider sent text that is not JSON, `arguments` holds that raw text and
 * `argumentsError` says why it did not parse: the tool runner turns that into a failed
 * ToolResult the model can correct, instead of throwing.
 */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly arguments: unknown;
  readonly argumentsError?: string;
}

/** The answer to one ToolCall. A failed tool is data (`success: false`), never an exception. */
export interface ToolResult {
  readonly toolCallId: string;
  readonly name: string;
  readonly output: unknown;
  readonly success: boolean;
  readonly error?: string;
  /**
   * Images and files the tool returned with its output (a tool's `execute` returns
   * `toolOutput(output, attachments)`): they reach the model with the result, mapped per
   * provider. Absent when there are none.
   */
  readonly attachments?: readonly Attachment[];
}

export interface SystemMessage {
  readonly role: 'system';
  readonly content: string;
}

export interface UserMessage {
  readonly role: 'user';
  readonly content: string;
  /** Images and files sent with the text (`userMessage(text, [attachment(…)])`); absent when none. */
  readonly attachments?: readonly Attachment[];
}

export interface AssistantMessage {
  readonly role: 'assistant';
  readonly content: string;
  readonly toolCalls: readonly ToolCall[];
  /**
   * Set when the output was cut off (a cancel, an interrupted stream); its calls were dropped.
   * Providers are sent the text followed by the seed's truncation marker (truncation-marker.ts),
   * so the model knows it stopped mid-answer; `content` itself stays the partial text.
   */
  readonly truncated?: boolean;
  /** Why it was cut off, when that was said: it goes into the marker the model reads. */
  readonly truncatedReason?: string;
}

export interface ToolResultMessage extends ToolResult {
  readonly role: 'tool';
}

export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultMessage;

/** A fresh provider-neutral tool call id, for providers that omit one (e.g. Gemini). */
export function generateToolCallId(): string {
  return `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

/** The call as given, with an id generated when the provider left it empty. */
export function ensureToolCallId<T extends { readonly id?: string | undefined }>(
  call: T,
): T & { readonly id: string } {
  return call.id ? (call as T & { id: string }) : { ...call, id: generateToolCallId() };
}

/**
 * Parses a provider's JSON argument text. Empty text means "no arguments" (`{}`), as OpenAI
 * sends for parameterless tools; unparseable text is kept raw with the parse error.
 */
export function parseToolArguments(text: string): Pick<ToolCall, 'arguments' | 'argumentsError'> {
  if (text.trim() === '') return { arguments: {} };
  try {
    return { arguments: JSON.parse(text) };
  } catch (error) {
    return { arguments: text, argumentsError: (error as Error).message };
  }
}

// Messages are frozen when they are built, so transcripts can share them instead of cloning
// them: sharing is what keeps appending a turn O(1). Payloads (arguments, outputs) belong to
// the caller and are left as they are.

export function systemMessage(content: string): SystemMessage {
  return Object.freeze({ role: 'system', content });
}

export function userMessage(content: string, attachments?: readonly Attachment[]): UserMessage {
  if (!attachments || attachments.length === 0) return Object.freeze({ role: 'user', content });
  return Object.freeze({ role: 'user', content, attachments: Object.freeze([...attachments]) });
}

export function assistantMessage(
  content: string,
  toolCalls: readonly (Omit<ToolCall, 'id'> & { readonly id?: string })[] = [],
  options: { readonly truncated?: boolean; readonly truncatedReason?: string } = {},
): AssistantMessage {
  const calls = Object.freeze(toolCalls.map((call) => Object.freeze(ensureToolCallId(call))));
  if (!options.truncated) return Object.freeze({ role: 'assistant', content, toolCalls: calls });
  // A reason without the flag means nothing, so it is kept only on a truncated message.
  return Object.freeze(
    options.truncatedReason === undefined
      ? { role: 'assistant', content, toolCalls: calls, truncated: true }
      : {
          role: 'assistant',
          content,
          toolCalls: calls,
          truncated: true,
          truncatedReason: options.truncatedReason,
        },
  );
}

/** The failed result of `call`: what the model reads when a tool could not answer it. */
export function failedToolResult(call: Pick<ToolCall, 'id' | 'name'>, error: string): ToolResult {
  return { toolCallId: call.id, name: call.name, output: null, success: false, error };
}

export function toolResultMessage(result: ToolResult): ToolResultMessage {
  return Object.freeze({ role: 'tool', ...result });
}

/**
 * The text a provider is sent for a tool result: strings as they are, other values as JSON.
 * Never throws: BigInts become decimal strings, and a value JSON cannot hold (a cycle, a
 * function) is described instead, because a tool that succeeded must not crash the run.
 */
export function toolResultText(result: ToolResult): string {
  if (!result.success) return result.error || 'The tool failed without an error message.';
  const { output } = result;
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  try {
    const json = JSON.stringify(output, (_key, value) =>
      typeof value === 'bigint' ? value.toString() : value,
    );
    if (json !== undefined) return json;
  } catch {
    // Cyclic structures: fall through to a description.
  }
  return `[unserializable ${typeof output} output: ${String(output).slice(0, 200)}]`;
}
