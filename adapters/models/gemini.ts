import {
  type GenerateContentParameters,
  type GenerateContentResponse,
  GoogleGenAI,
} from '@google/genai';
import { AbortError, throwIfAborted } from '../../src/errors.js';
import {
  type CallOptions,
  LANGUAGE_MODEL_VERSION,
  type LanguageModel,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
} from '../../src/model/language-model.js';
import { ABORTED, raceAbort } from '../../src/tools/race-abort.js';
import { CallMemory } from './gemini/call-memory.js';
import { geminiError } from './gemini/errors.js';
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

  constructor(options: GeminiModelOptions) {
    validateOptions(options);
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

  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const { signal } = options;
    throwIfAborted(signal);
    let raw: GenerateContentResponse;
    try {
      raw = await settle(this.client.models.generateContent(this.#params(request, signal)), signal);
    } catch (error) {
      throw geminiError(error, signal);
    }
    const { response, calls } = geminiResponse(raw);
    this.#memory.remember(calls);
    return response;
  }

  async *stream(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamPart> {
    const { signal } = options;
    throwIfAborted(signal);
    // A signal of our own, so that a reader who stops early (`break`) cancels the HTTP
    // request too, instead of leaving the response body open.
    const cancel = new AbortController();
    const forward = () => cancel.abort(signal?.reason);
    signal?.addEventListener('abort', forward, { once: true });
    let complete = false;
    try {
      const chunks = await settle(
        this.client.models.generateContentStream(this.#params(request, cancel.signal)),
        cancel.signal,
      );
      const mapper = new GeminiStreamMapper();
      for await (const chunk of chunks) yield* mapper.push(chunk);
      const tail = mapper.end();
      this.#memory.remember(mapper.calls);
      complete = true;
      yield* tail;
    } catch (error) {
      throw geminiError(error, signal);
    } finally {
      signal?.removeEventListener('abort', forward);
      if (!complete) cancel.abort(new AbortError('The stream was closed by its reader'));
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
