import { attachmentsOf } from '../attachment-summary.js';
import { type Attachment, attachmentSize } from '../attachments.js';
import type { Message } from '../messages.js';
import type { ModelResponse } from '../model/language-model.js';
import { finishReason } from './gen-ai-attributes.js';

// Message content in the GenAI conventions' JSON shapes (gen-ai-input-messages.json and
// gen-ai-output-messages.json): `{ role, parts: [...] }`, text parts, `tool_call` parts and
// `tool_call_response` parts. Recorded only with `captureContent` (it is user data), and as
// JSON strings, since span attributes hold no nested objects. An attachment is a `uri` part
// when it is a URL, and otherwise a part that says what it is and its size: the conventions'
// `blob` part would put the base64 in the trace, which can be megabytes per message.

type Part =
  | { readonly type: 'text'; readonly content: string }
  | {
      readonly type: 'tool_call';
      readonly id: string;
      readonly name: string;
      readonly arguments: unknown;
    }
  | { readonly type: 'tool_call_response'; readonly id: string; readonly response: unknown }
  | AttachmentPart;

type AttachmentPart =
  | {
      readonly type: 'uri';
      readonly modality: string;
      readonly mime_type: string;
      readonly uri: string;
    }
  | {
      readonly type: 'attachment';
      readonly modality: string;
      readonly mime_type: string;
      readonly name?: string;
      readonly size: number;
    };

/** The conventions' modalities: image, video, audio; anything else is a file (a document). */
function modality(mediaType: string): string {
  const kind = mediaType.split('/')[0] ?? '';
  return kind === 'image' || kind === 'video' || kind === 'audio' ? kind : 'file';
}

function attachmentPart(attachment: Attachment): AttachmentPart {
  const common = { modality: modality(attachment.mediaType), mime_type: attachment.mediaType };
  if (attachment.url !== undefined) return { type: 'uri', ...common, uri: attachment.url };
  return {
    type: 'attachment',
    ...common,
    ...(attachment.name !== undefined && { name: attachment.name }),
    size: attachmentSize(attachment),
  };
}

interface GenAiMessage {
  readonly role: string;
  readonly parts: readonly Part[];
  readonly finish_reason?: string;
}

export function inputMessages(messages: readonly Message[]): string {
  return JSON.stringify(messages.map(genAiMessage));
}

export function outputMessages(response: ModelResponse): string {
  const parts: Part[] = response.content.map((part) =>
    part.type === 'text'
      ? { type: 'text', content: part.text }
      : {
          type: 'tool_call',
          id: part.toolCall.id,
          name: part.toolCall.name,
          arguments: part.toolCall.arguments,
        },
  );
  return JSON.stringify([
    { role: 'assistant', parts, finish_reason: finishReason(response.finishReason) },
  ]);
}

/** A run's input as messages: a prompt, a chain's messages, or a tool loop's user input. */
export function runInputMessages(input: unknown): string | undefined {
  if (typeof input === 'string') return inputMessages([{ role: 'user', content: input }]);
  if (typeof input !== 'object' || input === null) return undefined;
  const { messages, userInput } = input as { messages?: unknown; userInput?: unknown };
  if (Array.isArray(messages)) return inputMessages(messages as Message[]);
  if (typeof userInput === 'string') return inputMessages([{ role: 'user', content: userInput }]);
  return undefined;
}

/** A chain's or tool loop's answer as the run's output message. */
export function runOutputMessages(output: unknown): string | undefined {
  if (typeof output !== 'object' || output === null) return undefined;
  const { text, answer } = output as { text?: unknown; answer?: unknown };
  const content = typeof text === 'string' ? text : typeof answer === 'string' ? answer : undefined;
  if (content === undefined) return undefined;
  return JSON.stringify([
    { role: 'assistant', parts: [{ type: 'text', content }], finish_reason: 'stop' },
  ]);
}

/** Any value as attribute text: strings as they are, the rest as JSON. */
export function contentText(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function genAiMessage(message: Message): GenAiMessage {
  switch (message.role) {
    case 'system':
      return { role: message.role, parts: [{ type: 'text', content: message.content }] };
    case 'user':
      return {
        role: message.role,
        parts: [
          { type: 'text', content: message.content },
          ...attachmentsOf(message).map(attachmentPart),
        ],
      };
    case 'assistant':
      return {
        role: 'assistant',
        parts: [
          ...(message.content ? [{ type: 'text' as const, content: message.content }] : []),
          ...message.toolCalls.map((call) => ({
            type: 'tool_call' as const,
            id: call.id,
            name: call.name,
            arguments: call.arguments,
          })),
        ],
      };
    case 'tool':
      return {
        role: 'tool',
        parts: [
          {
            type: 'tool_call_response',
            id: message.toolCallId,
            response: message.success ? message.output : { error: message.error ?? 'failed' },
          },
          ...attachmentsOf(message).map(attachmentPart),
        ],
      };
  }
}
