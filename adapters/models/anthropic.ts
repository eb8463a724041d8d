import Anthropic from '@anthropic-ai/sdk';
import { AbortError, ConfigError } from '../../src/errors.js';
import { isRecord } from '../../src/is-record.js';
import { ResponseCollector } from '../../src/model/collect-stream.js';
import {
  type CallOptions,
  LANGUAGE_MODEL_VERSION,
  type LanguageModel,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
} from '../../src/model/language-model.js';
import { integerAtLeast, optionalPositive } from '../../src/runtime/option-checks.js';
import { anthropicModelError } from './anthropic/errors.js';
import {
  type AnthropicParams,
  type AnthropicRequestSettings,
  type MidConversationSystem,
  toAnthropicParams,
} from './anthropic/request.js';
import { fromAnthropicMessage } from './anthropic/response.js';
import { AnthropicStreamMapper } from './anthropic/stream.js';

export interface AnthropicModelOptions {
  /** The model id, e.g. `claude-sonnet-5-5`. */
  readonly model: string;
  /** Default: the SDK's own lookup (`ANTHROPIC_API_KEY`, then its other credential sources). */
  readonly apiKey?: string;
  /** Default: `https://api.anthropic.com` (or `ANTHROPIC_BASE_URL`). */
  readonly baseURL?: string;
  /** A client you configured yourself; then leave apiKey, baseURL, maxRetries, timeout and defaultHeaders out. */
  readonly client?: Anthropic;
  /** Retries of 408, 409, 429, 5xx and connection errors, done by the SDK (its default: 2). */
  readonly maxRetries?: number;
  /**
   * Milliseconds per attempt (the SDK's default: 10 minutes). For a stream, and a `generate`
   * that streams (see `ANTHROPIC_NON_STREAMING_MAX_TOKENS`), the wait for the answer to start.
   */
  readonly timeout?: number;
  /** `max_tokens` when a request sets no `maxOutputTokens`; the API requires one. Default 4096. */
  readonly maxTokens?: number;
  readonly defaultHeaders?: Readonly<Record<string, string>>;
  /** Messages API parameters added to every request (a request's `providerOptions.anthropic` wins). */
  readonly providerOptions?: { readonly [key: string]: unknown };
  /**
   * How system messages after the first user or assistant message are sent. `'user-note'`
   * (default, every model): a user text block `<system-note>…</system-note>`. `'system-message'`:
   * the API's own mid-conversation `role: 'system'` message, which only some models accept.
   */
  readonly midConversationSystem?: MidConversationSystem;
}

export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/**
 * The largest `max_tokens` that `generate` sends as a non-streaming request; above it, it
 * streams the request and adds the events up to the same response. SDK 1.x refuses, before
 * sending anything, a non-streaming request it expects to take over 10 minutes (max_tokens
 * above 21,333 at its 60 minutes per 128,000 tokens, and above 8,192 for some models) unless a
 * timeout is set. Setting one would only make the call possible: a non-streamed answer arrives
 * all at once at the end, so a long one is cut off by that same per-attempt timeout (and
 * retried from scratch), or by a proxy dropping the silent connection. Streamed, bytes flow
 * from the start and the timeout covers only the wait for the first ones, which is why the SDK
 * and the API docs ask for streaming here. One limit for every model, at the SDK's lowest, so
 * no list of model ids has to be kept in step with the SDK's.
 */
export const ANTHROPIC_NON_STREAMING_MAX_TOKENS = 8192;

/**
 * LanguageModel v1 on Anthropic's Messages API through the official `@anthropic-ai/sdk`.
 * Thin on purpose: requests, responses, stream events and errors are mapped by the pure
 * functions in `./anthropic/`; retries and backoff are the SDK's; aborting `signal` cancels
 * the HTTP request. `generate` streams requests with a large `max_tokens` (see
 * `ANTHROPIC_NON_STREAMING_MAX_TOKENS`).
 *
 * Not carried over: thinking blocks (LanguageModel v1 has no part for them, so they are not
 * sent back, which the API expects in tool-use turns with extended thinking on), and
 * `temperature` / `topP` / `seed`, which the API version SDK 1.x speaks rejects (see
 * `./anthropic/request.ts`).
 */
export class AnthropicModel implements LanguageModel {
  readonly specificationVersion = LANGUAGE_MODEL_VERSION;
  readonly provider = 'anthropic';
  readonly modelId: string;
  /** The SDK client requests go through. */
  readonly client: Anthropic;
  readonly #settings: AnthropicRequestSettings;

  constructor(options: AnthropicModelOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ConfigError('options', 'must be an object such as { model: "claude-sonnet-5-5" }');
    }
    const { model, client } = options;
    if (typeof model !== 'string' || model.trim() === '') {
      throw new ConfigError('model', `must be a non-empty model id; got ${JSON.stringify(model)}`);
    }
    const maxTokens = integerAtLeast(
      'maxTokens',
      options.maxTokens,
      1,
      DEFAULT_ANTHROPIC_MAX_TOKENS,
    );
    const mid = options.midConversationSystem ?? 'user-note';
    if (mid !== 'user-note' && mid !== 'system-message') {
      throw new ConfigError(
        'midConversationSystem',
        `must be 'user-note' or 'system-message'; got ${JSON.stringify(mid)}`,
      );
    }
    const providerOptions = options.providerOptions;
    if (providerOptions !== undefined && !isRecord(providerOptions)) {
      throw new ConfigError('providerOptions', 'must be an object of Messages API parameters');
    }
    this.modelId = model;
    this.#settings = {
      modelId: model,
      maxTokens,
      midConversationSystem: mid,
      ...(providerOptions && { providerOptions }),
    };
    this.client = client === undefined ? newClient(options) : checkedClient(options);
  }

  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const { signal } = options;
    throwIfAborted(signal);
    const params = toAnthropicParams(request, this.#settings);
    if (params.max_tokens > ANTHROPIC_NON_STREAMING_MAX_TOKENS) {
      const mapper = new AnthropicStreamMapper();
      const collector = new ResponseCollector();
      for await (const part of this.#streamParts(params, mapper, signal)) collector.add(part);
      return { ...collector.response(), response: mapper.response };
    }
    try {
      const message = await this.client.messages.create(
        { ...params, stream: false },
        signal ? { signal } : undefined,
      );
      return fromAnthropicMessage(message);
    } catch (error) {
      throw anthropicModelError(error, signal);
    }
  }

  async *stream(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamPart> {
    const { signal } = options;
    throwIfAborted(signal);
    const params = toAnthropicParams(request, this.#settings);
    yield* this.#streamParts(params, new AnthropicStreamMapper(), signal);
  }

  /** One streamed request's parts, mapped by `mapper` (which then knows the response id). */
  async *#streamParts(
    params: AnthropicParams,
    mapper: AnthropicStreamMapper,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<StreamPart> {
    try {
      const events = await this.client.messages.create(
        { ...params, stream: true },
        signal ? { signal } : undefined,
      );
      // Stopping early (break, return) ends this loop's iterator, which aborts the request.
      for await (const event of events) {
        // Events already read off the socket still arrive after an abort: stop at once.
        throwIfAborted(signal);
        yield* mapper.push(event);
      }
    } catch (error) {
      throw anthropicModelError(error, signal);
    }
    // The SDK ends an aborted stream quietly, as if it were complete: check before trusting it.
    throwIfAborted(signal);
    mapper.end();
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new AbortError('The Anthropic request was aborted', { cause: signal.reason });
  }
}

function newClient(options: AnthropicModelOptions): Anthropic {
  const { apiKey, baseURL, defaultHeaders } = options;
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey === '')) {
    throw new ConfigError('apiKey', 'must be a non-empty string');
  }
  if (baseURL !== undefined && (typeof baseURL !== 'string' || !URL.canParse(baseURL))) {
    throw new ConfigError('baseURL', `must be an absolute URL; got ${JSON.stringify(baseURL)}`);
  }
  const maxRetries = integerAtLeast('maxRetries', options.maxRetries, 0, -1);
  const timeout = optionalPositive('timeout', options.timeout, false);
  if (
    defaultHeaders !== undefined &&
    (!isRecord(defaultHeaders) || Object.values(defaultHeaders).some((v) => typeof v !== 'string'))
  ) {
    throw new ConfigError('defaultHeaders', 'must be an object of header names to string values');
  }
  return new Anthropic({
    ...(apiKey !== undefined && { apiKey }),
    ...(baseURL !== undefined && { baseURL }),
    ...(maxRetries >= 0 && { maxRetries }),
    ...(timeout !== undefined && { timeout }),
    ...(defaultHeaders !== undefined && { defaultHeaders: { ...defaultHeaders } }),
  });
}

const CLIENT_SETTINGS = ['apiKey', 'baseURL', 'maxRetries', 'timeout', 'defaultHeaders'] as const;

function checkedClient(options: AnthropicModelOptions): Anthropic {
  const { client } = options;
  if (typeof (client as Anthropic | null)?.messages?.create !== 'function') {
    throw new ConfigError('client', 'must be an Anthropic client: new Anthropic({ ... })');
  }
  // Settings next to a client would be silently ignored: say so instead.
  for (const key of CLIENT_SETTINGS) {
    if (options[key] !== undefined) {
      throw new ConfigError(key, 'cannot be combined with `client`; configure the client itself');
    }
  }
  return client as Anthropic;
}
