import type { GoogleGenAI, HttpRetryOptions } from '@google/genai';
import { ConfigError } from '../../../src/errors.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../../../src/model/idle-watch.js';
import {
  checkEach,
  type Describes,
  describeOptions,
  type OptionContext,
  type OptionSpec,
} from '../../../src/options/describe.js';
import { delay, satisfies } from '../../../src/options/kinds.js';
import { absoluteUrl, record, text } from '../../../src/options/more-kinds.js';

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

/** The SDK's retry options (HttpRetryOptions) this adapter knows to check. */
const RETRY_OPTIONS = {
  attempts: satisfies<number>(
    (value) => Number.isInteger(value) && (value as number) >= 1,
    (value) => `must be an integer >= 1 (the first call included); got ${value}`,
  ),
  initialDelay: notNegative(),
  maxDelay: notNegative(),
  expBase: notNegative(),
  jitter: notNegative(),
  httpStatusCodes: satisfies<number[]>(
    (value) => Array.isArray(value) && value.every((code) => Number.isInteger(code)),
    'must be an array of HTTP status codes',
  ),
} as const;
const RETRY_OPTION_KEYS = Object.keys(RETRY_OPTIONS) as (keyof typeof RETRY_OPTIONS)[];

// tsc fails here when the SDK's retry options gain or lose one this adapter checks.
const _retriesDescribed: Describes<GeminiRetryOptions, { specs: typeof RETRY_OPTIONS }> = true;

function notNegative(): OptionSpec<number> {
  return satisfies<number>(
    (value) => typeof value === 'number' && Number.isFinite(value) && value >= 0,
    (value) => `must be a number >= 0 (seconds for delays); got ${String(value)}`,
  );
}

/** `retries`: a number of retries, or the SDK's retry options checked key by key. */
const retriesSpec: OptionSpec<number | GeminiRetryOptions> = {
  defaultText: "2 retries (with `client`, the client's own)",
  check: (retries, at) => {
    if (typeof retries === 'number') {
      if (Number.isInteger(retries) && retries >= 0) return retries;
      at.problem(`must be an integer >= 0 or the SDK's retry options; got ${retries}`);
      return undefined;
    }
    if (typeof retries !== 'object' || retries === null) {
      at.problem('must be an integer >= 0 or { attempts, initialDelay, maxDelay, … }');
      return undefined;
    }
    at.problems.unknownKeys(retries, RETRY_OPTION_KEYS, `${at.name}.`);
    const before = at.problems.size;
    checkEach(RETRY_OPTIONS, RETRY_OPTION_KEYS, retries as never, at.problems, `${at.name}.`);
    return at.problems.size === before ? (retries as GeminiRetryOptions) : undefined;
  },
};

/**
 * GeminiModel's options described once (see src/options/describe.ts): each option's check,
 * in the order problems are reported, and its default.
 */
export const GEMINI_MODEL_OPTIONS = describeOptions('new GeminiModel', {
  model: satisfies<string>(
    (value) => typeof value === 'string' && value.trim() !== '',
    (value) => `must be a Gemini model name, e.g. 'gemini-2.5-flash'; got ${String(value)}`,
    { required: true, defaultText: 'required' },
  ),
  apiKey: text(undefined, {
    defaultText: 'GEMINI_API_KEY or GOOGLE_API_KEY',
    also: (_, at) => {
      if (
        at.options.client === undefined &&
        at.options.apiKey === undefined &&
        !process.env.GEMINI_API_KEY &&
        !process.env.GOOGLE_API_KEY
      ) {
        at.problem(
          'is required: pass apiKey, set GEMINI_API_KEY (or GOOGLE_API_KEY), or pass a configured client (e.g. for Vertex AI)',
        );
      }
    },
  }),
  client: {
    check: (client: unknown, at: OptionContext): GoogleGenAI | undefined => {
      const before = at.problems.size;
      if (typeof (client as GoogleGenAI | null)?.models?.generateContent !== 'function') {
        at.problem('must be a GoogleGenAI instance from @google/genai');
      }
      const own = ['apiKey', 'baseUrl', 'apiVersion'].filter(
        (key) => at.options[key] !== undefined,
      );
      if (own.length) {
        at.problem(
          `is configured already: set ${own.join(', ')} on the GoogleGenAI client you pass, or pass no client`,
        );
      }
      return at.problems.size === before ? (client as GoogleGenAI) : undefined;
    },
  },
  baseUrl: absoluteUrl(
    (value) => `must be an absolute URL, e.g. 'http://127.0.0.1:8080'; got ${String(value)}`,
    { defaultText: "the SDK's" },
  ),
  apiVersion: text("must be a non-empty string, e.g. 'v1beta' or 'v1'", { defaultText: 'v1beta' }),
  retries: retriesSpec,
  providerOptions: record('must be an object of GenerateContentConfig fields'),
  idleTimeoutMs: delay({ default: DEFAULT_IDLE_TIMEOUT_MS }),
});

// tsc fails here, naming the option, when the interface and its description drift apart.
const _described: Describes<GeminiModelOptions, typeof GEMINI_MODEL_OPTIONS> = true;

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
 * name), and returns the idle timeout.
 */
export function validateOptions(options: GeminiModelOptions): number {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', "must be an object, e.g. { model: 'gemini-2.5-flash' }");
  }
  return GEMINI_MODEL_OPTIONS.parse(options).idleTimeoutMs;
}
