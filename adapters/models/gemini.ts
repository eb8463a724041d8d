import {
  type GenerateContentParameters,
  type GenerateContentResponse,
  GoogleGenAI,
} from '@google/genai';
import { AbortError, throwIfAborted } from '../../src/errors.js';
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
import { watchEvents } from '../../src/model/watched-io.js';
import { ABORTED, raceAbort } from '../../src/race-abort.js';
import { CallMemory } from './gemini/call-memory.js';
import { geminiError } from './gemini/errors.js';
import { idleFetch } from './gemini/idle-fetch.js';
import {
  type GeminiModelOptions,
  type GeminiRetryOptions,
  requestRetryOptions,
  validateOptions,
} from './gemini/options.js';
import { geminiRequest } from './gemini/request.js';
import { geminiResponse } from './gemini/response.js';
import { GeminiStreamMapper } from './gemini/stream.js';

export type { GeminiModelOptions, GeminiRetryOptions } from './gemini/options.js';

/**
 * Gemini through the official `@google/genai` SDK (LanguageModel v1). The work is in the
 * pure mappers under `gemini/`; this class only calls the SDK, maps its errors, and
 * remembers what Gemini needs echoed back about its function calls (see CallMemory).
 */
export class GeminiModel implements LanguageModel {
  readonly specificationVersion = LANGUAGE_MODEL_VERSION;
  readonly provider = 'gemini';
  readonly modelId: string;
  /** The SDK client this model calls. */
  readonly client: GoogleGenAI;
  readonly #retryOptions: GeminiRetryOptions | undefined;
  readonly #defaults: { readonly [key: string]: unknown } | undefined;
  readonly #memory = new CallMemory();
  readonly #idleTimeoutMs: number;
  /** A client built here has no fetch of its own: `generate` may pass one (see idleFetch). */
  readonly #ownClient: boolean;

  constructor(options: GeminiModelOptions) {
    this.#idleTimeoutMs = validateOptions(options);
    this.#ownClient = options.client === undefined;
    this.modelId = options.model;
    this.#defaults = options.providerOptions;
    this.#retryOptions = requestRetryOptions(options);
    this.client =
      options.client ??
      new GoogleGenAI({
        ...(options.apiKey !== undefined && { apiKey: options.apiKey }),
        ...(options.apiVersion !== undefined && { apiVersion: options.apiVersion }),
        ...(options.baseUrl !== undefined && { httpOptions: { baseUrl: options.baseUrl } }),
      });
  }

  /** Where the client sends its requests, named when they cannot get there. */
  get #url(): string | undefined {
    try {
      const api = (this.client as unknown as { apiClient?: { getBaseUrl?: () => unknown } })
        .apiClient;
      const url = api?.getBaseUrl?.();
      return typeof url === 'string' ? url : undefined;
    } catch {
      return undefined;
    }
  }

  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const { signal } = options;
    throwIfAborted(signal);
    // The SDK adds an abort listener to `config.abortSignal` per request and leaves it there
    // once the request succeeds: it gets a signal of this call's own, so that a caller's
    // long-lived signal collects nothing.
    const { controller, unlink } = linkedController(signal);
    const watch = new IdleWatch('Gemini', this.#idleTimeoutMs, controller);
    let raw: GenerateContentResponse;
    try {
      const params = this.#params(request, controller.signal);
      if (this.#ownClient) {
        params.config = {
          ...params.config,
          httpOptions: { ...params.config?.httpOptions, fetch: idleFetch(watch) },
        };
      }
      raw = await settle(this.client.models.generateContent(params), controller.signal);
    } catch (error) {
      throw watch.error ?? geminiError(error, signal, this.#url);
    } finally {
      watch.stop();
      unlink();
    }
    const { response, calls } = geminiResponse(raw);
    this.#memory.remember(calls);
    return response;
  }

  async *stream(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamPart> {
    const { signal } = options;
    throwIfAborted(signal);
    // A signal of our own: the SDK's listeners land on it rather than on the caller's, and a
    // reader who stops early (`break`) cancels the HTTP request too, instead of leaving the
    // response body open.
    const { controller, unlink } = linkedController(signal);
    const watch = new IdleWatch('Gemini', this.#idleTimeoutMs, controller);
    let complete = false;
    try {
      const chunks = await settle(
        this.client.models.generateContentStream(this.#params(request, controller.signal)),
        controller.signal,
      );
      const mapper = new GeminiStreamMapper();
      for await (const chunk of watchEvents(chunks, watch, 'Gemini')) {
        for (const part of mapper.push(chunk)) {
          // The SDK goes on handing out chunks it has already read after an abort: a reader
          // who aborted must get nothing more.
          throwIfStreamAborted(signal);
          yield part;
        }
      }
      throwIfStreamAborted(signal);
      const tail = mapper.end();
      this.#memory.remember(mapper.calls);
      complete = true;
      for (const part of tail) {
        throwIfStreamAborted(signal);
        yield part;
      }
    } catch (error) {
      throw watch.error ?? geminiError(error, signal, this.#url);
    } finally {
      watch.stop();
      unlink();
      if (!complete) controller.abort(new AbortError('The stream was closed by its reader'));
    }
  }

  #params(request: ModelRequest, abortSignal: AbortSignal | undefined): GenerateContentParameters {
    const params = geminiRequest(request, {
      model: this.modelId,
      recall: this.#memory.recall,
      ...(this.#defaults && { defaults: this.#defaults }),
    });
    const config = { ...params.config };
    if (abortSignal) config.abortSignal = abortSignal;
    if (this.#retryOptions) {
      config.httpOptions = { retryOptions: this.#retryOptions, ...config.httpOptions };
    }
    return { ...params, config };
  }
}

function throwIfStreamAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw new AbortError('The Gemini stream was aborted', { cause: signal.reason });
  }
}

/**
 * `work`, or an AbortError as soon as `signal` aborts. The SDK cancels its request on abort,
 * but between retries it sleeps out its backoff (up to a minute) before it notices: the
 * caller must not wait for that.
 */
async function settle<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  const result = await raceAbort(work, signal);
  if (result === ABORTED)
    throw new AbortError('The Gemini call was aborted', { cause: signal.reason });
  return result;
}
