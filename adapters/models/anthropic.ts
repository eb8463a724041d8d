import Anthropic from '@anthropic-ai/sdk';
import type { Message as AnthropicMessage } from '@anthropic-ai/sdk/resources/messages';
import { AbortError, ConfigError } from '../../src/errors.js';
import { linkedController } from '../../src/linked-controller.js';
import { ResponseCollector } from '../../src/model/collect-stream.js';
import { DEFAULT_IDLE_TIMEOUT_MS, IdleWatch } from '../../src/model/idle-watch.js';
import {
  type CallOptions,
  LANGUAGE_MODEL_VERSION,
  type LanguageModel,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
} from '../../src/model/language-model.js';
import { readJsonBody, watchEvents } from '../../src/model/watched-io.js';
import {
  type CheckedValues,
  type Describes,
  describeOptions,
  type OptionSpec,
} from '../../src/options/describe.js';
import { delay, integer, oneOf, positive, satisfies } from '../../src/options/kinds.js';
import { absoluteUrl, headers, nullIsDefault, record, text } from '../../src/options/more-kinds.js';
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
  /**
   * Milliseconds an answer that has started may go without sending anything (no byte of a
   * body, no stream event; the API's pings are not events) before the call is aborted with a
   * retryable ModelError ("idle for N ms"). Default 60,000 (DEFAULT_IDLE_TIMEOUT_MS): a
   * stalled connection fails in a minute instead of hanging forever. Applies with `client`.
   */
  readonly idleTimeoutMs?: number;
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
 * A setting the SDK client is made with: checked when the model makes its own client, and
 * refused beside a client passed in, which it would silently not apply to.
 */
function clientSetting<T>(spec: OptionSpec<T>): OptionSpec<T> {
  return {
    ...spec,
    check: (value, at) => {
      if (at.options.client === undefined) return spec.check(value, at);
      at.problem('cannot be combined with `client`; configure the client itself');
      return undefined;
    },
  };
}

/**
 * AnthropicModel's options described once (see src/options/describe.ts): each option's
 * check, in the order problems are reported, and its default.
 */
export const ANTHROPIC_MODEL_OPTIONS = describeOptions('new AnthropicModel', {
  model: satisfies<string>(
    (value) => typeof value === 'string' && value.trim() !== '',
    (value) => `must be a non-empty model id; got ${JSON.stringify(value)}`,
    { required: true, defaultText: 'required' },
  ),
  maxTokens: integer(1, { default: DEFAULT_ANTHROPIC_MAX_TOKENS }),
  idleTimeoutMs: delay({ default: DEFAULT_IDLE_TIMEOUT_MS }),
  midConversationSystem: nullIsDefault(
    oneOf<MidConversationSystem, 'user-note'>(['user-note', 'system-message'], {
      default: 'user-note',
    }),
  ),
  providerOptions: record('must be an object of Messages API parameters'),
  client: satisfies<Anthropic>(
    (value) => typeof (value as Anthropic | null)?.messages?.create === 'function',
    'must be an Anthropic client: new Anthropic({ ... })',
  ),
  apiKey: clientSetting(text(undefined, { defaultText: "the SDK's lookup (ANTHROPIC_API_KEY)" })),
  baseURL: clientSetting(
    absoluteUrl((value) => `must be an absolute URL; got ${JSON.stringify(value)}`, {
      defaultText: 'https://api.anthropic.com (or ANTHROPIC_BASE_URL)',
    }),
  ),
  maxRetries: clientSetting(integer(0, { defaultText: "the SDK's (2)" })),
  timeout: clientSetting(positive(false, { defaultText: "the SDK's (10 minutes)" })),
  defaultHeaders: clientSetting(headers<Readonly<Record<string, string>>>()),
});

// tsc fails here, naming the option, when the interface and its description drift apart.
const _described: Describes<AnthropicModelOptions, typeof ANTHROPIC_MODEL_OPTIONS> = true;

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
  readonly #idleTimeoutMs: number;

  constructor(options: AnthropicModelOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new ConfigError('options', 'must be an object such as { model: "claude-sonnet-5-5" }');
    }
    const checked = ANTHROPIC_MODEL_OPTIONS.parse(options);
    const { model, client } = options;
    this.modelId = model;
    this.#idleTimeoutMs = checked.idleTimeoutMs;
    this.#settings = {
      modelId: model,
      maxTokens: checked.maxTokens,
      midConversationSystem: checked.midConversationSystem,
      ...(checked.providerOptions && { providerOptions: checked.providerOptions }),
    };
    this.client = client ?? new Anthropic(clientSettingsOf(checked));
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
    const call = this.#call(signal);
    try {
      const pending = this.client.messages.create(
        { ...params, stream: false },
        {
          signal: call.controller.signal,
        },
      ) as Promise<unknown> & { asResponse?: () => Promise<Response> };
      // The body is read here, under the idle watch, from the Response whose status the SDK
      // has checked: the SDK would wait on a body stalled after its headers without end.
      const message =
        typeof pending.asResponse === 'function'
          ? await readJsonBody(await pending.asResponse(), call.watch, 'Anthropic')
          : await pending;
      return fromAnthropicMessage(message as AnthropicMessage);
    } catch (error) {
      throw call.watch.error ?? anthropicModelError(error, signal, this.#url);
    } finally {
      call.end();
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
    const call = this.#call(signal);
    try {
      const events = await this.client.messages.create(
        { ...params, stream: true },
        { signal: call.controller.signal },
      );
      // Stopping early (break, return) ends this loop's iterator, which aborts the request.
      for await (const event of watchEvents(events, call.watch, 'Anthropic')) {
        // Events already read off the socket still arrive after an abort: stop at once.
        throwIfAborted(signal);
        yield* mapper.push(event);
      }
    } catch (error) {
      throw call.watch.error ?? anthropicModelError(error, signal, this.#url);
    } finally {
      call.end();
    }
    // The SDK ends an aborted stream quietly, as if it were complete: check before trusting it.
    throwIfAborted(signal);
    mapper.end();
  }

  /**
   * A call's own signal, following the caller's (so the SDK's per-request listeners do not
   * pile up on a long-lived one), and the idle watch that aborts it; `end` releases both.
   */
  /** Where the client sends its requests, named when they cannot get there. */
  get #url(): string | undefined {
    const url = (this.client as { baseURL?: unknown }).baseURL;
    return typeof url === 'string' ? url : undefined;
  }

  #call(signal: AbortSignal | undefined) {
    const { controller, unlink } = linkedController(signal);
    const watch = new IdleWatch('Anthropic', this.#idleTimeoutMs, controller);
    const end = () => {
      watch.stop();
      unlink();
    };
    return { controller, watch, end };
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new AbortError('The Anthropic request was aborted', { cause: signal.reason });
  }
}

/** The settings of a client built here, each checked into `problems`. */
/** The settings the model makes its own client with, as checked. */
function clientSettingsOf(
  checked: CheckedValues<(typeof ANTHROPIC_MODEL_OPTIONS)['specs']>,
): ConstructorParameters<typeof Anthropic>[0] {
  const { apiKey, baseURL, maxRetries, timeout, defaultHeaders } = checked;
  return {
    ...(apiKey !== undefined && { apiKey }),
    ...(baseURL !== undefined && { baseURL }),
    ...(maxRetries !== undefined && { maxRetries }),
    ...(timeout !== undefined && { timeout }),
    ...(defaultHeaders !== undefined && { defaultHeaders: { ...defaultHeaders } }),
  };
}
