import OpenAI from 'openai';
import { ConfigError } from '../../../src/errors.js';
import { isRecord } from '../../../src/is-record.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../../../src/model/idle-watch.js';
import { integerAtLeast, optionalDelay, optionalPositive } from '../../../src/options/checks.js';
import type { OptionProblems } from '../../../src/options/problems.js';

/** Options of both OpenAI model classes. */
export interface OpenAIModelOptions {
  /** The model name sent with every request, e.g. `gpt-4.1-mini`. */
  readonly model: string;
  /** Default: the `OPENAI_API_KEY` environment variable. */
  readonly apiKey?: string;
  /** Default: `https://api.openai.com/v1` (or `OPENAI_BASE_URL`). Any OpenAI-compatible server. */
  readonly baseURL?: string;
  /** An SDK client you configured yourself; then leave apiKey, baseURL, organization and defaultHeaders out. */
  readonly client?: OpenAI;
  /** Retries of the SDK's own backoff for 408/409/429/5xx and network errors. Default: the SDK's (2). */
  readonly maxRetries?: number;
  /**
   * Milliseconds the SDK waits for an attempt's answer to start (its headers). Default: the
   * SDK's (10 minutes). It does not cover the body or stream after that: `idleTimeoutMs` does.
   */
  readonly timeout?: number;
  /**
   * Milliseconds an answer that has started may go without sending anything (no byte of a
   * body, no stream event) before the call is aborted with a retryable ModelError ("idle for
   * N ms"). Default 60,000 (DEFAULT_IDLE_TIMEOUT_MS): a stalled connection fails in a minute
   * instead of hanging forever. Applies to a `client` passed in as well.
   */
  readonly idleTimeoutMs?: number;
  readonly organization?: string;
  readonly defaultHeaders?: { readonly [name: string]: string };
  /**
   * Request parameters sent with every call, merged over the mapped ones (e.g.
   * `{ reasoning_effort: 'low' }`, `{ store: false }`). Per call, `request.providerOptions`
   * under the provider's name adds to them.
   */
  readonly providerOptions?: { readonly [key: string]: unknown };
}

/** The option names both classes accept; each class adds its own (see OpenAIChatModel). */
export const OPENAI_MODEL_OPTION_KEYS: readonly (keyof OpenAIModelOptions)[] = [
  'model',
  'apiKey',
  'baseURL',
  'client',
  'maxRetries',
  'timeout',
  'idleTimeoutMs',
  'organization',
  'defaultHeaders',
  'providerOptions',
];

/** What a model class keeps of its options: the client, and the per-request SDK options. */
export interface ResolvedClient {
  readonly client: OpenAI;
  readonly requestOptions: { readonly maxRetries?: number; readonly timeout?: number };
  readonly idleTimeoutMs: number;
}

const CONNECTION_OPTIONS = ['apiKey', 'baseURL', 'organization', 'defaultHeaders'] as const;

/**
 * Validates the options shared by both classes into `problems` (with the class's own
 * problems, found before), throws them all at once, and returns the SDK client to call.
 * `knownKeys` are every option the class accepts: any other key is refused. `maxRetries` and
 * `timeout` travel with each request rather than on the client, so they apply to a client
 * passed in as well.
 */
export function resolveClient(
  options: OpenAIModelOptions,
  api: 'chat' | 'responses',
  problems: OptionProblems,
  knownKeys: readonly string[],
): ResolvedClient {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'needs an options object with at least a model');
  }
  problems.unknownKeys(options, knownKeys);
  if (typeof options.model !== 'string' || options.model.trim() === '') {
    problems.add('model', `must be a non-empty model name; got ${String(options.model)}`);
  }
  const maxRetries =
    options.maxRetries === undefined
      ? undefined
      : problems.check(() => integerAtLeast('maxRetries', options.maxRetries, 0, 0));
  // The SDK checks per-request timeouts as positive integers.
  const timeout = problems.check(() => optionalPositive('timeout', options.timeout, true));
  const idleTimeoutMs = problems.check(() => optionalDelay('idleTimeoutMs', options.idleTimeoutMs));
  for (const key of ['apiKey', 'organization'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      problems.add(key, 'must be a non-empty string');
    }
  }
  if (options.baseURL !== undefined && !URL.canParse(String(options.baseURL))) {
    problems.add(
      'baseURL',
      `must be an absolute URL such as http://localhost:11434/v1; got ${String(options.baseURL)}`,
    );
  }
  const headers = options.defaultHeaders;
  if (
    headers !== undefined &&
    (!isRecord(headers) || Object.values(headers).some((v) => typeof v !== 'string'))
  ) {
    problems.add('defaultHeaders', 'must be an object of header names to string values');
  }
  if (options.providerOptions !== undefined && !isRecord(options.providerOptions)) {
    problems.add('providerOptions', 'must be an object of request parameters');
  }
  const requestOptions = {
    ...(maxRetries !== undefined && { maxRetries }),
    ...(timeout !== undefined && { timeout }),
  };
  const idle = idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  if (options.client !== undefined) {
    problems.check(() => checkClient(options, api));
    problems.throwIfAny();
    return { client: options.client, requestOptions, idleTimeoutMs: idle };
  }
  const apiKey = options.apiKey ?? globalThis.process?.env?.OPENAI_API_KEY;
  if (!apiKey && options.apiKey === undefined) {
    problems.add(
      'apiKey',
      'is required: pass apiKey or set the OPENAI_API_KEY environment variable',
    );
  }
  problems.throwIfAny();
  const client = new OpenAI({
    apiKey,
    ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
    ...(options.organization !== undefined && { organization: options.organization }),
    ...(headers !== undefined && { defaultHeaders: { ...headers } }),
    ...requestOptions,
  });
  return { client, requestOptions, idleTimeoutMs: idle };
}

/** A client passed in: an SDK client, with no connection options beside it. */
function checkClient(options: OpenAIModelOptions, api: 'chat' | 'responses'): void {
  const given = CONNECTION_OPTIONS.filter((key) => options[key] !== undefined);
  if (given.length > 0) {
    throw new ConfigError(
      'client',
      `comes configured: set ${given.join(', ')} on the client instead of beside it`,
    );
  }
  const client = options.client as unknown as Partial<OpenAI> | null;
  const callable =
    api === 'chat'
      ? typeof client?.chat?.completions?.create === 'function'
      : typeof client?.responses?.create === 'function';
  if (!callable) {
    throw new ConfigError(
      'client',
      `must be an OpenAI SDK client (new OpenAI({...})) with ${api === 'chat' ? 'chat.completions' : 'responses'}.create`,
    );
  }
}
