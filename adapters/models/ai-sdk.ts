import { ConfigError, ModelError } from '../../src/errors.js';
import { linkedController } from '../../src/linked-controller.js';
import { DEFAULT_IDLE_TIMEOUT_MS, IdleWatch } from '../../src/model/idle-watch.js';
import {
  type CallOptions,
  LANGUAGE_MODEL_VERSION,
  type LanguageModel,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
} from '../../src/model/language-model.js';
import { type Describes, describeOptions } from '../../src/options/describe.js';
import { delay, func, oneOf, positive } from '../../src/options/kinds.js';
import { headers, record } from '../../src/options/more-kinds.js';
import { abortError, toStatecraftError } from './ai-sdk/errors.js';
import { callOptions, type ToolResultFiles } from './ai-sdk/request.js';
import { generateResponse } from './ai-sdk/response.js';
import type {
  AiSdkLanguageModel,
  SpecCallOptions,
  SpecModelCalls,
  SpecStreamPart,
} from './ai-sdk/spec.js';
import { AiSdkStreamMapper } from './ai-sdk/stream.js';
import { type DownloadLimits, downloads, type SupportedUrls } from './ai-sdk/urls.js';

// Any AI SDK language model as a statecraft LanguageModel: `fromAiSdk(anthropic('claude-…'))`.
// The model is called directly (`doGenerate`, `doStream`), the way `generateText` calls it,
// without `generateText` itself: statecraft's chain is the loop, so nothing of `ai` is
// needed, only the provider package the user already has. What goes to the model and what
// comes back is decided by the pure mapping in ./ai-sdk/; this class bounds each wait, passes
// the abort signal (one of the call's own), and turns failures into ours.

export type { ToolResultFiles } from './ai-sdk/request.js';
export type { AiSdkLanguageModel, AiSdkSpecVersion } from './ai-sdk/spec.js';

/** The default of `timeoutMs`: as long as the provider SDKs give an attempt. */
export const DEFAULT_AI_SDK_TIMEOUT_MS = 600_000;
/** The default of `downloadTimeoutMs`. */
export const DEFAULT_DOWNLOAD_TIMEOUT_MS = 30_000;
/** The default of `maxDownloadBytes`: 20 MiB, above what providers take for one file. */
export const DEFAULT_MAX_DOWNLOAD_BYTES = 20 * 1024 * 1024;

export interface FromAiSdkOptions {
  /**
   * Milliseconds a streamed answer may go without a part once it has started before the
   * call is aborted with a retryable ModelError ("idle for N ms"). Default 60,000.
   */
  readonly idleTimeoutMs?: number;
  /**
   * Milliseconds a `generate` call may take, and a `stream` call may wait for its stream to
   * start, before it is aborted with a retryable ModelError. A non-streamed answer shows
   * nothing until it is whole, so this bounds it whole. It counts from the call's start, so
   * it also bounds the model's `supportedUrls` (a promise that never settles fails the call,
   * saying so) and the downloads. Default 600,000 (10 minutes).
   */
  readonly timeoutMs?: number;
  /**
   * Milliseconds to download an attachment URL the model does not take as a URL (it is not
   * in the model's `supportedUrls`), before the call fails with a retryable ModelError.
   * Default 30,000.
   */
  readonly downloadTimeoutMs?: number;
  /**
   * The most bytes such a download may have: a larger one (by its content-length, or counted
   * while it is read) is stopped and the call fails with a ModelError naming the URL and the
   * limit, not retried. Default 20 MiB.
   */
  readonly maxDownloadBytes?: number;
  /**
   * AI SDK provider options sent with every call, keyed by provider (e.g.
   * `{ anthropic: { disableParallelToolUse: true } }`); a request's
   * `providerOptions` win, key by key.
   */
  readonly providerOptions?: { readonly [provider: string]: { readonly [key: string]: unknown } };
  /** HTTP headers sent with every call, besides the provider's own. */
  readonly headers?: { readonly [name: string]: string };
  /**
   * Where the images and files a tool returned go: `'tool-result'` (default), inside the
   * result as the specification's content, which most providers map into their own tool
   * results (Anthropic, Google); or `'user-message'`, in a user message right after the
   * results, for a provider that would send them as JSON text (`@ai-sdk/openai-compatible`
   * without `supportsMultiPartToolContent`). A failed result's files go in that user
   * message either way: an error result carries text only.
   */
  readonly toolResultFiles?: ToolResultFiles;
  /**
   * Called with the warnings a provider reports for a call (a setting it ignored, a feature
   * it does not support), once per call that has any. Default: none; they are dropped.
   */
  readonly onWarnings?: (warnings: readonly AiSdkWarning[], model: AiSdkModelName) => void;
}

/** A provider's warning about a call, as the AI SDK reports it (`type` says which kind). */
export interface AiSdkWarning {
  /** `unsupported`, `compatibility`, `other`, and in v4 `deprecated`. */
  readonly type: string;
  /** What was not supported, e.g. `temperature`. */
  readonly feature?: string;
  readonly setting?: string;
  readonly details?: string;
  readonly message?: string;
}

/** Which model a warning is about. */
export interface AiSdkModelName {
  readonly provider: string;
  readonly modelId: string;
}

/** fromAiSdk's options described once (see src/options/describe.ts). */
export const FROM_AI_SDK_OPTIONS = describeOptions('fromAiSdk', {
  idleTimeoutMs: delay({ default: DEFAULT_IDLE_TIMEOUT_MS }),
  timeoutMs: delay({ default: DEFAULT_AI_SDK_TIMEOUT_MS }),
  downloadTimeoutMs: delay({ default: DEFAULT_DOWNLOAD_TIMEOUT_MS }),
  maxDownloadBytes: positive(true, { default: DEFAULT_MAX_DOWNLOAD_BYTES, defaultText: '20 MiB' }),
  providerOptions: record<NonNullable<FromAiSdkOptions['providerOptions']>>(
    'must be an object of provider names to option objects, e.g. { anthropic: { … } }',
  ),
  headers: headers(),
  toolResultFiles: oneOf<ToolResultFiles, 'tool-result'>(['tool-result', 'user-message'], {
    default: 'tool-result',
  }),
  onWarnings: func<NonNullable<FromAiSdkOptions['onWarnings']>>('(warnings, model) => void'),
});

// tsc fails here, naming the option, when the interface and its description drift apart.
const _described: Describes<FromAiSdkOptions, typeof FROM_AI_SDK_OPTIONS> = true;

/**
 * An AI SDK language model (specification v3, AI SDK 6's providers; or v4, AI SDK 7's) as a
 * statecraft LanguageModel. `provider` and `modelId` are the model's own (e.g.
 * `anthropic.messages`, `claude-sonnet-4-5`).
 */
export function fromAiSdk(
  model: AiSdkLanguageModel,
  options: FromAiSdkOptions = {},
): LanguageModel {
  checkModel(model);
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'must be an options object, or left out');
  }
  return new AiSdkModel(model, options);
}

function checkModel(model: unknown): asserts model is AiSdkLanguageModel {
  const candidate = model as Partial<AiSdkLanguageModel> | null | undefined;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.doGenerate !== 'function' ||
    typeof candidate.doStream !== 'function'
  ) {
    throw new ConfigError(
      'model',
      `must be an AI SDK language model (e.g. anthropic('claude-sonnet-4-5') from @ai-sdk/anthropic), with doGenerate and doStream; got ${describeValue(model)}`,
    );
  }
  const version = candidate.specificationVersion;
  if (version !== 'v3' && version !== 'v4') {
    throw new ConfigError(
      'model',
      `is an AI SDK language model of specification ${String(version)}; fromAiSdk takes v3 (AI SDK 6 providers, @ai-sdk/provider 3) and v4 (AI SDK 7, @ai-sdk/provider 4): update the provider package`,
    );
  }
}

class AiSdkModel implements LanguageModel {
  readonly specificationVersion = LANGUAGE_MODEL_VERSION;
  readonly provider: string;
  readonly modelId: string;
  readonly #model: AiSdkLanguageModel;
  readonly #calls: SpecModelCalls;
  readonly #label: string;
  readonly #idleTimeoutMs: number;
  readonly #timeoutMs: number;
  readonly #downloads: DownloadLimits;
  readonly #providerOptions: FromAiSdkOptions['providerOptions'];
  readonly #headers: FromAiSdkOptions['headers'];
  readonly #onWarnings: FromAiSdkOptions['onWarnings'];
  readonly #toolResultFiles: ToolResultFiles;

  constructor(model: AiSdkLanguageModel, options: FromAiSdkOptions) {
    const checked = FROM_AI_SDK_OPTIONS.parse(options);
    this.#model = model;
    this.#calls = model as unknown as SpecModelCalls;
    this.provider = String(model.provider);
    this.modelId = String(model.modelId);
    this.#label = `AI SDK (${this.provider})`;
    this.#idleTimeoutMs = checked.idleTimeoutMs;
    this.#timeoutMs = checked.timeoutMs;
    this.#downloads = {
      timeoutMs: checked.downloadTimeoutMs,
      maxBytes: checked.maxDownloadBytes,
    };
    this.#providerOptions = checked.providerOptions;
    this.#headers = checked.headers;
    this.#onWarnings = checked.onWarnings;
    this.#toolResultFiles = checked.toolResultFiles;
  }

  async generate(request: ModelRequest, options: CallOptions = {}): Promise<ModelResponse> {
    const { signal } = options;
    if (signal?.aborted) throw abortError(signal);
    const { controller, unlink } = linkedController(signal);
    try {
      const result = await this.#bounded(
        (stage) =>
          this.#callOptions(request, controller.signal, stage).then((call) =>
            this.#calls.doGenerate(call),
          ),
        controller,
      );
      this.#warn(result.warnings);
      return generateResponse(result);
    } catch (error) {
      throw toStatecraftError(error, signal, this.#label);
    } finally {
      unlink();
    }
  }

  async *stream(request: ModelRequest, options: CallOptions = {}): AsyncGenerator<StreamPart> {
    const { signal } = options;
    if (signal?.aborted) throw abortError(signal);
    const { controller, unlink } = linkedController(signal);
    const watch = new IdleWatch(this.#label, this.#idleTimeoutMs, controller);
    // `finally` also runs when the reader stops early (the generator's `return`).
    try {
      let stream: ReadableStream<SpecStreamPart>;
      try {
        ({ stream } = await this.#bounded(
          (stage) =>
            this.#callOptions(request, controller.signal, stage).then((call) =>
              this.#calls.doStream(call),
            ),
          controller,
        ));
      } catch (error) {
        throw toStatecraftError(error, signal, this.#label);
      }
      yield* this.#parts(stream, watch, controller.signal, signal);
    } finally {
      watch.stop();
      unlink();
    }
  }

  /**
   * The parts of a started stream, each wait for the next bounded by `watch` and by the
   * call's signal (`callSignal`, which a provider that misses the abort would leave waiting).
   * Leaving early (an abort, an error part, a consumer that stops reading) cancels the
   * stream, which cancels the provider's request.
   */
  async *#parts(
    stream: ReadableStream<SpecStreamPart>,
    watch: IdleWatch,
    callSignal: AbortSignal,
    signal: AbortSignal | undefined,
  ): AsyncGenerator<StreamPart> {
    const reader = stream.getReader();
    const mapper = new AiSdkStreamMapper(this.#label);
    const aborted = whenAborted(callSignal);
    let ended = false;
    try {
      for (;;) {
        watch.touch();
        const next = await watch.race(Promise.race([reader.read(), aborted.promise]));
        watch.stop();
        // Parts the provider had already queued must not outlive the abort.
        if (signal?.aborted) throw abortError(signal);
        if (next.done) {
          ended = true;
          break;
        }
        if (mapper.finished) continue;
        if (next.value.type === 'stream-start') {
          this.#warn((next.value as { warnings?: unknown }).warnings);
        }
        const mapped = mapper.push(next.value);
        if (mapped.kind === 'error') throw mapped.error;
        yield* mapped.parts;
      }
      if (!mapper.finished) throw mapper.endedEarly();
    } catch (error) {
      throw watch.error ?? toStatecraftError(error, signal, this.#label);
    } finally {
      watch.stop();
      aborted.dispose();
      if (!ended) {
        // After the watch fired a stalled provider may never answer the cancel: not awaited.
        reader.cancel().catch(() => {});
      }
    }
  }

  /**
   * Hands a call's warnings to `onWarnings`. A callback that throws is the caller's
   * problem, not the call's: it does not fail an answer that arrived.
   */
  #warn(warnings: unknown): void {
    if (!this.#onWarnings || !Array.isArray(warnings) || warnings.length === 0) return;
    try {
      this.#onWarnings(warnings, { provider: this.provider, modelId: this.modelId });
    } catch {
      // Ignored: see above.
    }
  }

  /** The call options of one request: its prompt in the model's version, URLs resolved. */
  async #callOptions(
    request: ModelRequest,
    signal: AbortSignal,
    stage: Stage,
  ): Promise<SpecCallOptions> {
    stage.waitingFor = 'supportedUrls';
    const supportedUrls = await this.#supportedUrls(signal);
    stage.waitingFor = 'answer';
    return callOptions(
      request,
      {
        version: this.#model.specificationVersion,
        toolResultFiles: this.#toolResultFiles,
        supportedUrls,
        downloads: downloads(this.#label, this.#downloads, signal),
      },
      { providerOptions: this.#providerOptions, headers: this.#headers, signal },
    );
  }

  /**
   * The URLs the model takes as they are; none when it cannot say. The specification lets a
   * model give them as a promise (a provider may fetch them), so the wait follows the call's
   * signal, which `#bounded`'s timeout aborts: one that never settles fails the call.
   */
  async #supportedUrls(signal: AbortSignal): Promise<SupportedUrls> {
    const aborted = whenAborted(signal);
    try {
      const supported = await Promise.race([
        Promise.resolve(this.#model.supportedUrls),
        aborted.promise,
      ]);
      return typeof supported === 'object' && supported !== null ? supported : {};
    } catch (error) {
      if (signal.aborted) throw error;
      return {};
    } finally {
      aborted.dispose();
    }
  }

  /**
   * `work`, bounded by `timeoutMs` and by the call's signal: a provider that neither answers
   * nor notices the abort still lets the call settle. On timeout the call's signal is aborted,
   * which cancels the provider's request. `work` says in its `stage` what it waits for, so
   * the timeout names it.
   */
  #bounded<T>(work: (stage: Stage) => PromiseLike<T>, controller: AbortController): Promise<T> {
    const signal = controller.signal;
    const stage: Stage = { waitingFor: 'answer' };
    let timer: ReturnType<typeof setTimeout> | undefined;
    let onAbort: (() => void) | undefined;
    const stop = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const within = `within ${this.#timeoutMs} ms (timeoutMs), so the call was aborted`;
        const error = new ModelError(
          stage.waitingFor === 'supportedUrls'
            ? `${this.#label}: the model’s supportedUrls did not settle ${within}`
            : `${this.#label} gave no answer ${within}`,
          { retryable: true },
        );
        controller.abort(error);
        reject(error);
      }, this.#timeoutMs);
      onAbort = () => reject(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([Promise.resolve(work(stage)), stop]).finally(() => {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    });
  }
}

/** What a bounded call is waiting for when its time runs out. */
interface Stage {
  waitingFor: 'supportedUrls' | 'answer';
}

/** A promise that rejects with the signal's reason once it aborts; `dispose` when done. */
function whenAborted(signal: AbortSignal): {
  readonly promise: Promise<never>;
  readonly dispose: () => void;
} {
  let onAbort = () => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  promise.catch(() => {});
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  return typeof value === 'object' ? 'an object without them' : `a ${typeof value}`;
}
