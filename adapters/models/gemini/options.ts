import type { GoogleGenAI, HttpRetryOptions } from '@google/genai';
import { ConfigError } from '../../../src/errors.js';
import { optionalDelay } from '../../../src/options/checks.js';
import { OptionProblems } from '../../../src/options/problems.js';

/** The SDK's own retry settings (`httpOptions.retryOptions`); `attempts` counts the first call. */
export type GeminiRetryOptions = HttpRetryOptions;

export interface GeminiModelOptions {
  /** The model to call, e.g. `'gemini-2.5-flash'`. */
  readonly model: string;
  /** Default: `GEMINI_API_KEY` or `GOOGLE_API_KEY` from the environment, as the SDK reads them. */
  readonly apiKey?: string;
  /** A client you configured (Vertex AI, custom fetch, …). Then it owns key, URL and version. */
  readonly client?: GoogleGenAI;
  /** Where the API lives (the SDK's `httpOptions.baseUrl`), e.g. a proxy or a test server. */
  readonly baseUrl?: string;
  /** The API version in the path (the SDK's default is `v1beta`). */
  readonly apiVersion?: string;
  /**
   * Retries done by the SDK, with exponential backoff, for 408, 429 and 5xx: a number of
   * retries after the first attempt, or the SDK's retry options. Default: 2 retries with the
   * SDK's backoff, or, with `client`, whatever that client was configured with. The SDK's
   * backoff is exponential from `initialDelay` and does not read `retry-after`; it does not
   * retry connection failures either (Node's `fetch failed`): those reject at once with a
   * ModelError marked `retryable`.
   */
  readonly retries?: number | GeminiRetryOptions;
  /**
   * `GenerateContentConfig` fields sent with every request (`thinkingConfig`,
   * `safetySettings`, …). A request's `providerOptions.gemini` overrides them.
   */
  readonly providerOptions?: { readonly [key: string]: unknown };
  /**
   * Milliseconds an answer that has started may go without sending anything (no byte of a
   * body, no stream chunk) before the call is aborted with a retryable ModelError ("idle for
   * N ms"). Default 60,000 (DEFAULT_IDLE_TIMEOUT_MS): a stalled connection fails in a minute
   * instead of hanging forever. With a `client` of your own, streams are covered but a
   * non-streamed `generate` is not (the SDK reads that body itself, through the client's own
   * fetch): bound it with the client's `httpOptions.timeout`.
   */
  readonly idleTimeoutMs?: number;
}

const OPTION_KEYS: readonly (keyof GeminiModelOptions)[] = [
  'model',
  'apiKey',
  'client',
  'baseUrl',
  'apiVersion',
  'retries',
  'providerOptions',
  'idleTimeoutMs',
];

/** The SDK's retry options (HttpRetryOptions) this adapter knows to check. */
const RETRY_OPTION_KEYS: readonly (keyof GeminiRetryOptions)[] = [
  'attempts',
  'initialDelay',
  'maxDelay',
  'expBase',
  'jitter',
  'httpStatusCodes',
];

const DEFAULT_RETRIES = 2;

/**
 * The SDK retry options a model sends with each request: `retries` as given, else the
 * default, except that a client passed in keeps its own configuration.
 */
export function requestRetryOptions(options: GeminiModelOptions): GeminiRetryOptions | undefined {
  if (options.retries !== undefined) return retryOptions(options.retries);
  return options.client ? undefined : retryOptions(DEFAULT_RETRIES);
}

export function retryOptions(retries: number | GeminiRetryOptions): GeminiRetryOptions {
  return typeof retries === 'number' ? { attempts: retries + 1 } : { ...retries };
}

/**
 * Checks every option, reporting every problem at once (unknown keys with the nearest known
 * name), and returns the idle timeout, or undefined for the default.
 */
export function validateOptions(options: GeminiModelOptions): number | undefined {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', "must be an object, e.g. { model: 'gemini-2.5-flash' }");
  }
  const problems = new OptionProblems('new GeminiModel');
  problems.unknownKeys(options, OPTION_KEYS);
  const { model, apiKey, client, baseUrl, apiVersion, retries, providerOptions } = options;
  if (typeof model !== 'string' || model.trim() === '') {
    problems.add(
      'model',
      `must be a Gemini model name, e.g. 'gemini-2.5-flash'; got ${String(model)}`,
    );
  }
  if (apiKey !== undefined && (typeof apiKey !== 'string' || apiKey === '')) {
    problems.add('apiKey', 'must be a non-empty string');
  }
  if (client !== undefined) {
    if (typeof client?.models?.generateContent !== 'function') {
      problems.add('client', 'must be a GoogleGenAI instance from @google/genai');
    }
    const own = ['apiKey', 'baseUrl', 'apiVersion'].filter(
      (key) => options[key as keyof GeminiModelOptions] !== undefined,
    );
    if (own.length) {
      problems.add(
        'client',
        `is configured already: set ${own.join(', ')} on the GoogleGenAI client you pass, or pass no client`,
      );
    }
  }
  if (baseUrl !== undefined && (typeof baseUrl !== 'string' || !URL.canParse(baseUrl))) {
    problems.add(
      'baseUrl',
      `must be an absolute URL, e.g. 'http://127.0.0.1:8080'; got ${String(baseUrl)}`,
    );
  }
  if (apiVersion !== undefined && (typeof apiVersion !== 'string' || apiVersion === '')) {
    problems.add('apiVersion', "must be a non-empty string, e.g. 'v1beta' or 'v1'");
  }
  validateRetries(retries, problems);
  if (
    providerOptions !== undefined &&
    (typeof providerOptions !== 'object' ||
      providerOptions === null ||
      Array.isArray(providerOptions))
  ) {
    problems.add('providerOptions', 'must be an object of GenerateContentConfig fields');
  }
  const idleTimeoutMs = problems.check(() => optionalDelay('idleTimeoutMs', options.idleTimeoutMs));
  if (
    client === undefined &&
    apiKey === undefined &&
    !process.env.GEMINI_API_KEY &&
    !process.env.GOOGLE_API_KEY
  ) {
    problems.add(
      'apiKey',
      'is required: pass apiKey, set GEMINI_API_KEY (or GOOGLE_API_KEY), or pass a configured client (e.g. for Vertex AI)',
    );
  }
  problems.throwIfAny();
  return idleTimeoutMs;
}

function validateRetries(retries: GeminiModelOptions['retries'], problems: OptionProblems): void {
  if (retries === undefined) return;
  if (typeof retries === 'number') {
    if (Number.isInteger(retries) && retries >= 0) return;
    problems.add('retries', `must be an integer >= 0 or the SDK's retry options; got ${retries}`);
    return;
  }
  if (typeof retries !== 'object' || retries === null) {
    problems.add('retries', 'must be an integer >= 0 or { attempts, initialDelay, maxDelay, … }');
    return;
  }
  problems.unknownKeys(retries, RETRY_OPTION_KEYS, 'retries.');
  const { attempts, httpStatusCodes, ...delays } = retries;
  if (attempts !== undefined && !(Number.isInteger(attempts) && attempts >= 1)) {
    problems.add(
      'retries.attempts',
      `must be an integer >= 1 (the first call included); got ${attempts}`,
    );
  }
  for (const [key, value] of Object.entries(delays)) {
    if (!RETRY_OPTION_KEYS.includes(key as keyof GeminiRetryOptions)) continue;
    if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      problems.add(
        `retries.${key}`,
        `must be a number >= 0 (seconds for delays); got ${String(value)}`,
      );
    }
  }
  if (
    httpStatusCodes !== undefined &&
    !(Array.isArray(httpStatusCodes) && httpStatusCodes.every((code) => Number.isInteger(code)))
  ) {
    problems.add('retries.httpStatusCodes', 'must be an array of HTTP status codes');
  }
}
