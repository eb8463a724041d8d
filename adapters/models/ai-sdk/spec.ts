import type { JsonSchema } from '../../../src/model/language-model.js';

// The parts of the AI SDK's language model specification (`@ai-sdk/provider`) this adapter
// reads and writes, written out structurally for both versions it accepts: v3 (AI SDK 6,
// `@ai-sdk/provider` 3) and v4 (AI SDK 7, `@ai-sdk/provider` 4). Written out rather than
// imported so that no `@ai-sdk/*` package is needed at run time, and because provider 3 has
// no v4 types: a user's model from either line must fit. Only what differs between the two is
// versioned (file data, tool-result content); everything else is one shape.

/** The specification versions `fromAiSdk` accepts. */
export type AiSdkSpecVersion = 'v3' | 'v4';

/**
 * An AI SDK language model, as far as statecraft needs to know it: a `LanguageModelV3` or
 * `LanguageModelV4` from any provider package (`@ai-sdk/openai`, `@ai-sdk/anthropic`,
 * `createOpenAICompatible(…)(…)`, community providers) fits. The call methods take `never` so
 * that either version's own option types are accepted; the adapter writes what each expects.
 */
export interface AiSdkLanguageModel {
  readonly specificationVersion: AiSdkSpecVersion;
  readonly provider: string;
  readonly modelId: string;
  readonly supportedUrls:
    | PromiseLike<Readonly<Record<string, readonly RegExp[]>>>
    | Readonly<Record<string, readonly RegExp[]>>;
  doGenerate(options: never): PromiseLike<unknown>;
  doStream(options: never): PromiseLike<unknown>;
}

/** A model's methods as this adapter calls them. */
export interface SpecModelCalls {
  doGenerate(options: SpecCallOptions): PromiseLike<SpecGenerateResult>;
  doStream(options: SpecCallOptions): PromiseLike<SpecStreamResult>;
}

type ProviderOptions = { readonly [provider: string]: { readonly [key: string]: unknown } };

/** v4 file data is tagged; v3 file data is the bare value (base64 text or a URL). */
export type SpecFileData =
  | { readonly type: 'data'; readonly data: string }
  | { readonly type: 'url'; readonly url: URL }
  | string
  | URL;

export interface SpecFilePart {
  readonly type: 'file';
  readonly mediaType: string;
  readonly data: SpecFileData;
  readonly filename?: string;
}

export interface SpecTextPart {
  readonly type: 'text';
  readonly text: string;
}

export interface SpecToolCallPart {
  readonly type: 'tool-call';
  readonly toolCallId: string;
  readonly toolName: string;
  readonly input: unknown;
}

/** What a tool result's `content` output holds: text, and files per version. */
export type SpecToolContent =
  | { readonly type: 'text'; readonly text: string }
  // v4
  | {
      readonly type: 'file';
      readonly mediaType: string;
      readonly data: SpecFileData;
      readonly filename?: string;
    }
  // v3
  | { readonly type: 'image-data'; readonly data: string; readonly mediaType: string }
  | { readonly type: 'image-url'; readonly url: string }
  | {
      readonly type: 'file-data';
      readonly data: string;
      readonly mediaType: string;
      readonly filename?: string;
    }
  | { readonly type: 'file-url'; readonly url: string };

export type SpecToolResultOutput =
  | { readonly type: 'text'; readonly value: string }
  | { readonly type: 'error-text'; readonly value: string }
  | { readonly type: 'content'; readonly value: readonly SpecToolContent[] };

export interface SpecToolResultPart {
  readonly type: 'tool-result';
  readonly toolCallId: string;
  readonly toolName: string;
  readonly output: SpecToolResultOutput;
}

export type SpecMessage =
  | { readonly role: 'system'; readonly content: string }
  | { readonly role: 'user'; readonly content: readonly (SpecTextPart | SpecFilePart)[] }
  | {
      readonly role: 'assistant';
      readonly content: readonly (SpecTextPart | SpecToolCallPart)[];
    }
  | { readonly role: 'tool'; readonly content: readonly SpecToolResultPart[] };

export interface SpecFunctionTool {
  readonly type: 'function';
  readonly name: string;
  readonly description?: string;
  readonly inputSchema: JsonSchema;
}

export type SpecToolChoice =
  | { readonly type: 'auto' | 'none' | 'required' }
  | { readonly type: 'tool'; readonly toolName: string };

export type SpecResponseFormat =
  | { readonly type: 'text' }
  | {
      readonly type: 'json';
      readonly schema?: JsonSchema;
      readonly name?: string;
      readonly description?: string;
    };

export interface SpecCallOptions {
  readonly prompt: readonly SpecMessage[];
  readonly tools?: readonly SpecFunctionTool[];
  readonly toolChoice?: SpecToolChoice;
  readonly responseFormat?: SpecResponseFormat;
  readonly temperature?: number;
  readonly topP?: number;
  readonly maxOutputTokens?: number;
  readonly stopSequences?: string[];
  readonly seed?: number;
  readonly headers?: { readonly [name: string]: string | undefined };
  readonly providerOptions?: ProviderOptions;
  readonly abortSignal?: AbortSignal;
}

/** Token counts, nested the same way in v3 and v4; every number may be missing. */
export interface SpecUsage {
  readonly inputTokens?: {
    readonly total?: number;
    readonly noCache?: number;
    readonly cacheRead?: number;
    readonly cacheWrite?: number;
  };
  readonly outputTokens?: {
    readonly total?: number;
    readonly text?: number;
    readonly reasoning?: number;
  };
}

/** `unified` is v3's set plus v4's `interrupted`. */
export interface SpecFinishReason {
  readonly unified: string;
  readonly raw: string | undefined;
}

/** A result content part; only text and tool calls are read, the rest is skipped. */
export type SpecContent =
  | { readonly type: 'text'; readonly text: string }
  | {
      readonly type: 'tool-call';
      readonly toolCallId: string;
      readonly toolName: string;
      /** The arguments as JSON text. */
      readonly input: string;
      readonly providerExecuted?: boolean;
    }
  | { readonly type: string };

export interface SpecResponseMetadata {
  readonly id?: string;
  readonly modelId?: string;
}

export interface SpecGenerateResult {
  readonly content: readonly SpecContent[];
  readonly warnings?: readonly unknown[];
  readonly finishReason: SpecFinishReason;
  readonly usage: SpecUsage;
  readonly response?: SpecResponseMetadata;
}

/** A stream part; only those listed are read, any other type (ping, custom, raw…) is skipped. */
export type SpecStreamPart =
  | { readonly type: 'text-delta'; readonly id: string; readonly delta: string }
  | {
      readonly type: 'tool-input-start';
      readonly id: string;
      readonly toolName: string;
      readonly providerExecuted?: boolean;
    }
  | { readonly type: 'tool-input-delta'; readonly id: string; readonly delta: string }
  | {
      readonly type: 'tool-call';
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: string;
      readonly providerExecuted?: boolean;
    }
  | ({ readonly type: 'response-metadata' } & SpecResponseMetadata)
  | {
      readonly type: 'finish';
      readonly usage: SpecUsage;
      readonly finishReason: SpecFinishReason;
    }
  | { readonly type: 'error'; readonly error: unknown }
  | { readonly type: string };

export interface SpecStreamResult {
  readonly stream: ReadableStream<SpecStreamPart>;
}
