import OpenAI from 'openai';
import { ConfigError } from '../../../src/errors.js';
import { isRecord } from '../../../src/is-record.js';
import { integerAtLeast, optionalPositive } from '../../../src/runtime/option-checks.js';

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
  /** Milliseconds before the SDK gives up on one attempt. Default: the SDK's (10 minutes). */
  readonly timeout?: number;
  readonly organization?: string;
  readonly defaultHeaders?: { readonly [name: string]: string };
  /**
   * Request parameters sent with every call, merged over the mapped ones (e.g.
   * `{ reasoning_effort: 'low' }`, `{ store: false }`). Per call, `request.providerOptions`
   * under the provider's name adds to them.
   */
  readonly providerOptions?: { readonly [key: string]: unknown };
}

/** What a model class keeps of its options: the client, and the per-request SDK options. */
export interface ResolvedClient {
  readonly client: OpenAI;
  readonly requestOptions: { readonly maxRetries?: number; readonly timeout?: number };
}

const CONNECTION_OPTIONS = ['apiKey', 'baseURL', 'organization', 'defaultHeaders'] as const;

/**
 * Validates the options shared by both classes, naming the first bad one, and returns the
 * SDK client to call. `maxRetries` and `timeout` travel with each request rather than on the
 * client, so they apply to a client passed in as well.
 */
export function resolveClient(
  options: OpenAIModelOptions,
  api: 'chat' | 'responses',
): ResolvedClient {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'needs an options object with at least a model');
  }
  if (typeof options.model !== 'string' || options.model.trim() === '') {
    throw new ConfigError('model', `must be a non-empty model name; got ${String(options.model)}`);
  }
  const maxRetries =
    options.maxRetries === undefined
      ? undefined
      : integerAtLeast('maxRetries', options.maxRetries, 0, 0);
  // The SDK checks per-request timeouts as positive integers.
  const timeout = optionalPositive('timeout', options.timeout, true);
  for (const key of ['apiKey', 'organization'] as const) {
    const value = options[key];
    if (value !== undefined && (typeof value !== 'string' || value === '')) {
      throw new ConfigError(key, 'must be a non-empty string');
    }
  }
  if (options.baseURL !== undefined && !URL.canParse(String(options.baseURL))) {
    throw new ConfigError(
      'baseURL',
      `must be an absolute URL such as http://localhost:11434/v1; got ${String(options.baseURL)}`,
    );
  }
  const headers = options.defaultHeaders;
  if (
    headers !== undefined &&
    (!isRecord(headers) || Object.values(headers).some((v) => typeof v !== 'string'))
  ) {
    throw new ConfigError('defaultHeaders', 'must be an object of header names to string values');
  }
  if (options.providerOptions !== undefined && !isRecord(options.providerOptions)) {
    throw new ConfigError('providerOptions', 'must be an object of request parameters');
  }
  const requestOptions = {
    ...(maxRetries !== undefined && { maxRetries }),
    ...(timeout !== undefined && { timeout }),
  };
  if (options.client !== undefined) {
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
    return { client: options.client, requestOptions };
  }
  const apiKey = options.apiKey ?? globalThis.process?.env?.OPENAI_API_KEY;
  if (!apiKey) {
    throw new ConfigError(
      'apiKey',
      'is required: pass apiKey or set the OPENAI_API_KEY environment variable',
    );
  }
  const client = new OpenAI({
    apiKey,
    ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
    ...(options.organization !== undefined && { organization: options.organization }),
    ...(headers !== undefined && { defaultHeaders: { ...headers } }),
    ...requestOptions,
  });
  return { client, requestOptions };
}
