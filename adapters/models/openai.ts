import type OpenAI from 'openai';
import { ConfigError } from '../../src/errors.js';
import { linkedController } from '../../src/linked-controller.js';
import { IdleWatch } from '../../src/model/idle-watch.js';
import {
  type CallOptions,
  LANGUAGE_MODEL_VERSION,
  type LanguageModel,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
} from '../../src/model/language-model.js';
import { readJsonBody, watchEvents } from '../../src/model/watched-io.js';
import { type Describes, describeOptions, withDefaultText } from '../../src/options/describe.js';
import { satisfies } from '../../src/options/kinds.js';
import { nullIsDefault, text } from '../../src/options/more-kinds.js';
import { OptionProblems } from '../../src/options/problems.js';
import { chatRequestParams, type MaxTokensField } from './openai/chat-request.js';
import { chatResponse } from './openai/chat-response.js';
import { ChatStreamMapper } from './openai/chat-stream.js';
import {
  OPENAI_RESPONSES_OPTIONS,
  type OpenAIModelOptions,
  openAIModelSpecs,
  type ResolvedClient,
  resolveClient,
} from './openai/client-options.js';
import { abortError, toStatecraftError } from './openai/errors.js';
import { responsesRequestParams } from './openai/responses-request.js';
import { responsesResponse } from './openai/responses-response.js';
import { ResponsesStreamMapper } from './openai/responses-stream.js';

// The OpenAI adapters (SPEC A3): thin classes over the official SDK. What goes on the wire
// and what comes back is decided by the pure mapping functions in ./openai/; these classes
// only call the SDK, pass the abort signal (through one of the call's own), and turn its
// errors into ours. Retries are the SDK's (`maxRetries`, with backoff and `retry-after`),
// never a loop of ours.

export type { OpenAIModelOptions };

export interface OpenAIChatModelOptions extends OpenAIModelOptions {
  /** Default `openai`; an OpenAI-compatible server's name, also read from `providerOptions`. */
  readonly provider?: string;
  /**
   * The field `maxOutputTokens` is sent in. Default `max_completion_tokens`, OpenAI's (its
   * reasoning models refuse `max_tokens`). OpenAI-compatible servers (Ollama, vLLM, LM Studio,
   * llama.cpp, most hosted ones) read `max_tokens` and ignore the newer field, so the limit
   * would silently not apply: `openAICompatible(...)` sets `max_tokens` for its presets, and
   * for another compatible server set it yourself:
   *
   * ```ts
   * new OpenAIChatModel({ model, baseURL, apiKey, maxTokensField: 'max_tokens' })
   * ```
   */
  readonly maxTokensField?: MaxTokensField;
}

/** OpenAIChatModel's options described once (see src/options/describe.ts). */
export const OPENAI_CHAT_OPTIONS = describeOptions('new OpenAIChatModel', {
  provider: nullIsDefault(text('must be a non-empty name, e.g. "ollama"', { default: 'openai' })),
  maxTokensField: nullIsDefault(
    satisfies<MaxTokensField, 'max_completion_tokens'>(
      (value) => value === 'max_completion_tokens' || value === 'max_tokens',
      (value) => `must be 'max_completion_tokens' or 'max_tokens'; got ${String(value)}`,
      { default: 'max_completion_tokens' },
    ),
  ),
  ...openAIModelSpecs('chat'),
});

// tsc fails here, naming the option, when the interface and its description drift apart.
const _described: Describes<OpenAIChatModelOptions, typeof OPENAI_CHAT_OPTIONS> = true;

/**
 * One SDK call's options; the idle watch over its answer (it aborts the call's own signal);
 * and `end`, which stops the watch and detaches the signal from the caller's.
 */
interface SdkCall {
  readonly options: {
    readonly maxRetries?: number;
    readonly timeout?: number;
    readonly signal: AbortSignal;
  };
  readonly watch: IdleWatch;
  readonly end: () => void;
}

/** The SDK's promise of a call: `asResponse` gives the raw Response once headers arrived. */
type SdkPromise<T> = Promise<T> & { asResponse?: () => Promise<Response> };

/** Shared by both classes: the client, its per-request options and the provider options. */
abstract class OpenAIModelBase {
  readonly specificationVersion = LANGUAGE_MODEL_VERSION;
  readonly provider: string;
  readonly modelId: string;
  protected readonly client: OpenAI;
  readonly #requestOptions: { readonly maxRetries?: number; readonly timeout?: number };
  readonly #idleTimeoutMs: number;
  readonly #providerOptions: { readonly [key: string]: unknown } | undefined;

  /** Where the client sends its requests, named when they cannot get there. */
  protected get url(): string | undefined {
    const url = (this.client as { baseURL?: unknown }).baseURL;
    return typeof url === 'string' ? url : undefined;
  }

  protected constructor(options: OpenAIModelOptions, resolved: ResolvedClient, provider: string) {
    const { client, requestOptions, idleTimeoutMs } = resolved;
    this.client = client;
    this.#requestOptions = requestOptions;
    this.#idleTimeoutMs = idleTimeoutMs;
    this.#providerOptions = options.providerOptions;
    this.modelId = options.model;
    this.provider = provider;
  }

  /**
   * The provider options of one call: the model's own, then the request's `openai` ones,
   * then (for an OpenAI-compatible server) the request's options under the server's name.
   */
  protected extra(request: ModelRequest): { readonly [key: string]: unknown } {
    const perCall = request.providerOptions;
    return {
      ...this.#providerOptions,
      ...perCall?.openai,
      ...(this.provider !== 'openai' && perCall?.[this.provider]),
    };
  }

  /**
   * The SDK options of one call, with a signal of the call's own that follows `signal`: the
   * SDK adds an abort listener to a request's signal on every attempt and never removes it,
   * so a caller's long-lived signal would collect one per call (and Node's
   * MaxListenersExceededWarning). `end` once the call, or its stream, is over.
   */
  protected callOptions(signal: AbortSignal | undefined): SdkCall {
    if (signal?.aborted) throw abortError(signal);
    const { controller, unlink } = linkedController(signal);
    const watch = new IdleWatch('OpenAI', this.#idleTimeoutMs, controller);
    const end = () => {
      watch.stop();
      unlink();
    };
    return { options: { ...this.#requestOptions, signal: controller.signal }, watch, end };
  }

  /**
   * The JSON body of a non-streamed call. The SDK would read it with no bound on a body that
   * stalls after the headers, and hand back a proxy's HTML page as a string: it is read here,
   * under the call's idle watch, from the raw Response the SDK has checked the status of.
   * An SDK promise without `asResponse` (a stand-in client) is awaited as it is.
   */
  protected async body<T>(promise: SdkPromise<T>, call: SdkCall): Promise<unknown> {
    if (typeof promise.asResponse !== 'function') return promise;
    const response = await promise.asResponse();
    return readJsonBody(response, call.watch, 'OpenAI');
  }
}

/**
 * A LanguageModel on OpenAI's Chat Completions API (`POST /chat/completions`), which every
 * OpenAI-compatible server also speaks: set `baseURL`, or use `openAICompatible(...)`.
 */
export class OpenAIChatModel extends OpenAIModelBase implements LanguageModel {
  readonly #maxTokensField: MaxTokensField;

  constructor(options: OpenAIChatModelOptions) {
    const resolved = resolveClient(options, OPENAI_CHAT_OPTIONS);
    super(options, resolved, resolved.checked.provider);
    this.#maxTokensField = resolved.checked.maxTokensField;
  }

  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const { signal } = options;
    const call = this.callOptions(signal);
    try {
      const completion = await this.body(
        this.client.chat.completions.create(this.#params(request), call.options),
        call,
      );
      return chatResponse(completion as OpenAI.Chat.ChatCompletion);
    } catch (error) {
      throw call.watch.error ?? toStatecraftError(error, signal, this.url);
    } finally {
      call.end();
    }
  }

  async *stream(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamPart> {
    const { signal } = options;
    const call = this.callOptions(signal);
    // `finally` also runs when the reader stops early (the generator's `return`).
    try {
      let chunks: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>;
      try {
        chunks = await this.client.chat.completions.create(
          { ...this.#params(request), stream: true, stream_options: { include_usage: true } },
          call.options,
        );
      } catch (error) {
        throw toStatecraftError(error, signal, this.url);
      }
      yield* streamParts(chunks, new ChatStreamMapper(), signal, call.watch, this.url);
    } finally {
      call.end();
    }
  }

  #params(request: ModelRequest) {
    return chatRequestParams(request, {
      model: this.modelId,
      maxTokensField: this.#maxTokensField,
      extra: this.extra(request),
    });
  }
}

/**
 * A LanguageModel on OpenAI's Responses API (`POST /responses`). Stateless: every call sends
 * the whole conversation (see responsesRequestParams).
 */
export class OpenAIResponsesModel extends OpenAIModelBase implements LanguageModel {
  constructor(options: OpenAIModelOptions) {
    super(options, resolveClient(options, OPENAI_RESPONSES_OPTIONS), 'openai');
  }

  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const { signal } = options;
    const call = this.callOptions(signal);
    try {
      const response = await this.body(
        this.client.responses.create(this.#params(request), call.options),
        call,
      );
      return responsesResponse(response as OpenAI.Responses.Response);
    } catch (error) {
      throw call.watch.error ?? toStatecraftError(error, signal, this.url);
    } finally {
      call.end();
    }
  }

  async *stream(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamPart> {
    const { signal } = options;
    const call = this.callOptions(signal);
    // `finally` also runs when the reader stops early (the generator's `return`).
    try {
      let events: AsyncIterable<OpenAI.Responses.ResponseStreamEvent>;
      try {
        events = await this.client.responses.create(
          { ...this.#params(request), stream: true },
          call.options,
        );
      } catch (error) {
        throw toStatecraftError(error, signal, this.url);
      }
      yield* streamParts(events, new ResponsesStreamMapper(), signal, call.watch, this.url);
    } finally {
      call.end();
    }
  }

  #params(request: ModelRequest) {
    return responsesRequestParams(request, { model: this.modelId, extra: this.extra(request) });
  }
}

/**
 * Maps an SDK stream through a mapper, each wait for an event bounded by `watch`. The SDK
 * ends its stream quietly when the request is aborted, so an abort is detected here and
 * reported as one. Leaving the loop early (an abort, a consumer that stops reading) returns
 * the SDK's iterator, which cancels the request.
 */
async function* streamParts<E>(
  events: AsyncIterable<E>,
  mapper: { push(event: E): StreamPart[]; end(): StreamPart[] },
  signal: AbortSignal | undefined,
  watch: IdleWatch,
  url: string | undefined,
): AsyncGenerator<StreamPart> {
  try {
    for await (const event of watchEvents(events, watch, 'OpenAI')) {
      // Events the SDK had already buffered must not outlive the abort.
      if (signal?.aborted) break;
      yield* mapper.push(event);
    }
    if (signal?.aborted) throw abortError(signal);
    yield* mapper.end();
  } catch (error) {
    throw watch.error ?? toStatecraftError(error, signal, url);
  }
}

export type OpenAICompatiblePreset = 'ollama' | 'vllm' | 'lmstudio' | 'llamacpp';

export interface OpenAICompatibleOptions
  extends Omit<OpenAIModelOptions, 'client' | 'organization'> {
  /** Default: the server's documented local address (see `openAICompatible`). */
  readonly baseURL?: string;
  /** Default: a placeholder, for servers started without a key. */
  readonly apiKey?: string;
}

/**
 * openAICompatible's options: the model's, less those its preset decides (client, provider,
 * token field) or a local server has no use for (organization). Only their keys are checked
 * here; their values are checked by OpenAIChatModel, so each problem is reported once. The
 * preset's address and placeholder key are what `baseURL` and `apiKey` default to.
 */
const { client: _client, organization: _organization, ...compatible } = openAIModelSpecs('chat');
export const OPENAI_COMPATIBLE_OPTIONS = describeOptions('openAICompatible', {
  ...compatible,
  // What the docs table says: the preset's, not OpenAI's.
  apiKey: withDefaultText(compatible.apiKey, "the server's placeholder"),
  baseURL: withDefaultText(compatible.baseURL, "the server's local address"),
});
const _compatibleDescribed: Describes<OpenAICompatibleOptions, typeof OPENAI_COMPATIBLE_OPTIONS> =
  true;

/** Where each server listens by default, and the placeholder key its docs use. */
export const OPENAI_COMPATIBLE_PRESETS: Readonly<
  Record<OpenAICompatiblePreset, { readonly baseURL: string; readonly apiKey: string }>
> = Object.freeze({
  ollama: { baseURL: 'http://localhost:11434/v1', apiKey: 'ollama' },
  vllm: { baseURL: 'http://localhost:8000/v1', apiKey: 'EMPTY' },
  lmstudio: { baseURL: 'http://localhost:1234/v1', apiKey: 'lm-studio' },
  llamacpp: { baseURL: 'http://localhost:8080/v1', apiKey: 'sk-no-key-required' },
});

/**
 * An OpenAIChatModel for a local OpenAI-compatible server, at its documented default address.
 * The server ignores the API key unless it was started with one; pass `apiKey` then.
 *
 * - `ollama` — Ollama (`ollama serve`), http://localhost:11434/v1; `model` is a pulled model,
 *   e.g. `llama3.2`.
 * - `vllm` — vLLM (`vllm serve <model>`), http://localhost:8000/v1; `model` is the served
 *   model name; pass `apiKey` when started with `--api-key`.
 * - `lmstudio` — LM Studio's local server, http://localhost:1234/v1; `model` is the loaded
 *   model's identifier.
 * - `llamacpp` — llama.cpp's `llama-server`, http://localhost:8080/v1; it serves the model it
 *   was started with, whatever `model` says; pass `apiKey` when started with `--api-key`.
 *
 * `maxOutputTokens` is sent as `max_tokens`, the field these servers read. `provider` is the
 * preset's name, and `providerOptions[preset]` (after `providerOptions.openai`) reaches the
 * request, e.g. `{ ollama: { keep_alive: '5m' } }`.
 */
export function openAICompatible(
  preset: OpenAICompatiblePreset,
  options: OpenAICompatibleOptions,
): OpenAIChatModel {
  const defaults = Object.hasOwn(OPENAI_COMPATIBLE_PRESETS, preset)
    ? OPENAI_COMPATIBLE_PRESETS[preset]
    : undefined;
  if (!defaults) {
    throw new ConfigError(
      'preset',
      `must be one of ${Object.keys(OPENAI_COMPATIBLE_PRESETS).join(', ')}; got ${String(preset)}`,
    );
  }
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'needs an options object with at least a model');
  }
  // The preset decides the client, provider and token field: those keys are refused here,
  // and the rest are checked whole by OpenAIChatModel.
  const problems = new OptionProblems('openAICompatible');
  const keys: readonly string[] = OPENAI_COMPATIBLE_OPTIONS.keys;
  problems.unknownKeys(options, keys);
  // The known keys only, so an unknown one is reported once; the model's own problems join
  // these in one error (SPEC Q4).
  const known = Object.fromEntries(
    Object.entries(options).filter(([key]) => keys.includes(key)),
  ) as OpenAICompatibleOptions;
  const model = problems.check(
    () =>
      new OpenAIChatModel({
        ...known,
        baseURL: known.baseURL ?? defaults.baseURL,
        apiKey: known.apiKey ?? defaults.apiKey,
        provider: preset,
        maxTokensField: 'max_tokens',
      }),
  );
  problems.throwIfAny();
  return model as OpenAIChatModel;
}
