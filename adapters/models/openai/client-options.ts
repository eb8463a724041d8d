import OpenAI from 'openai';
import { ConfigError } from '../../../src/errors.js';
import { DEFAULT_IDLE_TIMEOUT_MS } from '../../../src/model/idle-watch.js';
import {
  type CheckedValues,
  type Describes,
  describeOptions,
  type OptionsDescription,
} from '../../../src/options/describe.js';
import { delay, integer, positive, satisfies, unchecked } from '../../../src/options/kinds.js';
import { headers, record, text } from '../../../src/options/more-kinds.js';

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

/**
 * The options both classes accept, described once (see src/options/describe.ts): each
 * option's check, in the order problems are reported, and its default. `client` comes last:
 * its rule reads the connection options beside it, or asks for a key when there is no client.
 * Each class describes these under its own name, with options of its own (OpenAIChatModel).
 */
export function openAIModelSpecs(api: 'chat' | 'responses') {
  return {
    model: satisfies<string>(
      (value) => typeof value === 'string' && value.trim() !== '',
      (value) => `must be a non-empty model name; got ${String(value)}`,
      { required: true, defaultText: 'required' },
    ),
    maxRetries: integer(0, { defaultText: "the SDK's (2)" }),
    // The SDK checks per-request timeouts as positive integers.
    timeout: positive(true, { defaultText: "the SDK's (10 minutes)" }),
    idleTimeoutMs: delay({ default: DEFAULT_IDLE_TIMEOUT_MS }),
    apiKey: text(undefined, { defaultText: 'OPENAI_API_KEY' }),
    organization: text(),
    baseURL: satisfies<string>(
      (value) => URL.canParse(String(value)),
      (value) => `must be an absolute URL such as http://localhost:11434/v1; got ${String(value)}`,
      { defaultText: 'https://api.openai.com/v1 (or OPENAI_BASE_URL)' },
    ),
    defaultHeaders: headers(),
    providerOptions: record('must be an object of request parameters'),
    client: unchecked<OpenAI>({
      also: (_, at) => {
        // As given: a null client is a bad one, not none.
        if (at.options.client !== undefined) at.problems.check(() => checkClient(at.options, api));
        else if (at.options.apiKey === undefined && !envApiKey()) {
          at.problem(
            'is required: pass apiKey or set the OPENAI_API_KEY environment variable',
            'apiKey',
          );
        }
      },
    }),
  } as const;
}

/** The key the SDK would read when none is given. */
function envApiKey(): string | undefined {
  return globalThis.process?.env?.OPENAI_API_KEY;
}

/** OpenAIResponsesModel's options, described. */
export const OPENAI_RESPONSES_OPTIONS = describeOptions(
  'new OpenAIResponsesModel',
  openAIModelSpecs('responses'),
);

// tsc fails here, naming the option, when the interface and its description drift apart.
const _described: Describes<OpenAIModelOptions, typeof OPENAI_RESPONSES_OPTIONS> = true;

/** What a model class keeps of its options: the client, and the per-request SDK options. */
export interface ResolvedClient {
  readonly client: OpenAI;
  readonly requestOptions: { readonly maxRetries?: number; readonly timeout?: number };
  readonly idleTimeoutMs: number;
}

const CONNECTION_OPTIONS = ['apiKey', 'baseURL', 'organization', 'defaultHeaders'] as const;

/**
 * Checks the options shared by both classes, with the class's own, throws every problem at
 * once, and returns the SDK client to call. `maxRetries` and `timeout` travel with
 * each request rather than on the client, so they apply to a client passed in as well.
 */
export function resolveClient<S extends ReturnType<typeof openAIModelSpecs>>(
  options: OpenAIModelOptions,
  description: OptionsDescription<S>,
): ResolvedClient & { readonly checked: CheckedValues<S> } {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'needs an options object with at least a model');
  }
  const checked = description.parse(options);
  const { maxRetries, timeout, idleTimeoutMs } = checked as CheckedValues<
    ReturnType<typeof openAIModelSpecs>
  >;
  const requestOptions = {
    ...(maxRetries !== undefined && { maxRetries }),
    ...(timeout !== undefined && { timeout }),
  };
  if (options.client !== undefined) {
    return { client: options.client, requestOptions, idleTimeoutMs, checked };
  }
  const headers = options.defaultHeaders;
  const client = new OpenAI({
    apiKey: options.apiKey ?? envApiKey(),
    ...(options.baseURL !== undefined && { baseURL: options.baseURL }),
    ...(options.organization !== undefined && { organization: options.organization }),
    ...(headers !== undefined && { defaultHeaders: { ...headers } }),
    ...requestOptions,
  });
  return { client, requestOptions, idleTimeoutMs, checked };
}

/** A client passed in: an SDK client, with no connection options beside it. */
function checkClient(options: Readonly<Record<string, unknown>>, api: 'chat' | 'responses'): void {
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
