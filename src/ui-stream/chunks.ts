// The chunks of the AI SDK's UI message stream that statecraft writes: the field names of
// `ai`'s own `UIMessageChunk` (ai 7), copied so that the package needs no runtime dependency
// on `ai`. The tests read every one of them back with `ai`'s own schema and reader.

/** Why an assistant message ended, in the AI SDK's words. */
export type UIFinishReason =
  | 'stop'
  | 'length'
  | 'content-filter'
  | 'tool-calls'
  | 'error'
  | 'other';

/** One chunk of the UI message stream, as `createUIMessageStreamResponse` and `readUIMessageStream` take it. */
export type UIMessageChunk =
  | { readonly type: 'start'; readonly messageId?: string; readonly messageMetadata?: unknown }
  | {
      readonly type: 'finish';
      readonly finishReason?: UIFinishReason;
      readonly messageMetadata?: unknown;
    }
  | { readonly type: 'abort'; readonly reason?: string }
  | { readonly type: 'message-metadata'; readonly messageMetadata: unknown }
  | { readonly type: 'start-step' }
  | { readonly type: 'finish-step' }
  | { readonly type: 'text-start'; readonly id: string }
  | { readonly type: 'text-delta'; readonly id: string; readonly delta: string }
  | { readonly type: 'text-end'; readonly id: string }
  | { readonly type: 'error'; readonly errorText: string }
  | {
      readonly type: 'tool-input-start';
      readonly toolCallId: string;
      readonly toolName: string;
      readonly dynamic?: boolean;
    }
  | {
      readonly type: 'tool-input-delta';
      readonly toolCallId: string;
      readonly inputTextDelta: string;
    }
  | {
      readonly type: 'tool-input-available';
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
      readonly dynamic?: boolean;
    }
  | {
      readonly type: 'tool-input-error';
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
      readonly errorText: string;
      readonly dynamic?: boolean;
    }
  | {
      readonly type: 'tool-approval-request';
      readonly approvalId: string;
      readonly toolCallId: string;
    }
  | {
      readonly type: 'tool-approval-response';
      readonly approvalId: string;
      readonly approved: boolean;
      readonly reason?: string;
    }
  | {
      readonly type: 'tool-output-available';
      readonly toolCallId: string;
      readonly output: unknown;
      readonly dynamic?: boolean;
    }
  | {
      readonly type: 'tool-output-error';
      readonly toolCallId: string;
      readonly errorText: string;
      readonly dynamic?: boolean;
    }
  | { readonly type: 'tool-output-denied'; readonly toolCallId: string }
  | { readonly type: 'file'; readonly url: string; readonly mediaType: string }
  | { readonly type: `data-${string}`; readonly id?: string; readonly data: unknown };
