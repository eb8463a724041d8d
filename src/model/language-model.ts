import type { ToolCall } from '../messages.js';
import type { Transcript } from '../transcript.js';
import type { Usage } from '../usage.js';

// The provider-neutral model interface, version 1. docs/language-model.md explains it for
// adapter authors; this file is the contract the type checker enforces.

/** The interface version an adapter implements. Bumped only for breaking changes. */
export const LANGUAGE_MODEL_VERSION = 'v1';

/** A JSON Schema object, as providers accept it for tool parameters and structured output. */
export type JsonSchema = { readonly [key: string]: unknown };

/** What the model is told about one tool. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
}

export type ToolChoice =
  | 'auto'
  | 'none'
  | 'required'
  | { readonly type: 'tool'; readonly name: string };

export type ResponseFormat =
  | { readonly type: 'text' }
  | { readonly type: 'json_object' }
  | {
      readonly type: 'json_schema';
      readonly name: string;
      readonly schema: JsonSchema;
      readonly description?: string;
      readonly strict?: boolean;
    };

export interface ModelRequest {
  /**
   * The conversation, system message included. A Transcript, not an array: compiling a turn
   * shares the previous turn's messages instead of copying them (see Transcript).
   */
  readonly messages: Transcript;
  readonly tools?: readonly ToolSpec[];
  readonly toolChoice?: ToolChoice;
  readonly responseFormat?: ResponseFormat;
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxOutputTokens?: number;
  readonly stopSequences?: readonly string[];
  readonly seed?: number;
  /** Settings only one provider understands, keyed by provider name (e.g. `{ openai: {...} }`). */
  readonly providerOptions?: { readonly [provider: string]: { readonly [key: string]: unknown } };
}

export interface CallOptions {
  /** Aborting rejects the call with an AbortError and cancels the provider request. */
  readonly signal?: AbortSignal;
}

export type ContentPart =
  | { readonly type: 'text'; readonly text: string }
  | { readonly type: 'tool-call'; readonly toolCall: ToolCall };

/** Every unified finish reason, for checks of responses and scripts. */
export const UNIFIED_FINISH_REASONS = [
  'stop',
  'length',
  'tool-calls',
  'content-filter',
  'error',
  'other',
] as const;

/**
 * Why the model stopped. `unified` is for policy; `raw` is the provider's own word, kept for
 * logs and for the cases the unified set does not distinguish.
 */
export interface FinishReason {
  readonly unified: (typeof UNIFIED_FINISH_REASONS)[number];
  readonly raw: string | undefined;
}

export interface ModelResponse {
  readonly content: readonly ContentPart[];
  readonly usage: Usage;
  readonly finishReason: FinishReason;
  /** Provider metadata: response id and the model that actually answered. */
  readonly response?: { readonly id?: string; readonly modelId?: string };
}

/**
 * Parts of a streamed response, in order: any number of deltas, each tool call completed by
 * a `tool-call` part (after its deltas), then `usage` (at most once), then `finish` (last).
 */
export type StreamPart =
  | { readonly type: 'text-delta'; readonly delta: string }
  | {
      readonly type: 'tool-call-delta';
      /** Position of the call in this response; deltas of one call share it. */
      readonly index: number;
      readonly id?: string;
      readonly name?: string;
      readonly argumentsDelta: string;
    }
  | { readonly type: 'tool-call'; readonly toolCall: ToolCall }
  | { readonly type: 'usage'; readonly usage: Usage }
  | { readonly type: 'finish'; readonly finishReason: FinishReason };

export interface LanguageModel {
  readonly specificationVersion: typeof LANGUAGE_MODEL_VERSION;
  /** e.g. 'openai', 'anthropic', 'scripted'. */
  readonly provider: string;
  readonly modelId: string;
  generate(request: ModelRequest, options?: CallOptions): Promise<ModelResponse>;
  stream(request: ModelRequest, options?: CallOptions): AsyncIterable<StreamPart>;
}

/** Convenience accessors over a response's content parts. */
export function responseText(response: Pick<ModelResponse, 'content'>): string {
  let text = '';
  for (const part of response.content) if (part.type === 'text') text += part.text;
  return text;
}

export function responseToolCalls(response: Pick<ModelResponse, 'content'>): ToolCall[] {
  const calls: ToolCall[] = [];
  for (const part of response.content) if (part.type === 'tool-call') calls.push(part.toolCall);
  return calls;
}
