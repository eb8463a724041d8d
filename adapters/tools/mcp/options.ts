import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ConfigError } from '../../../src/errors.js';
import { isRecord } from '../../../src/is-record.js';
import { optionalDelay } from '../../../src/options/checks.js';
import { OptionProblems } from '../../../src/options/problems.js';

/** Starts the server as a child process and speaks MCP over its stdin/stdout. */
export interface McpStdioTransportOptions {
  readonly type: 'stdio';
  readonly command: string;
  readonly args?: readonly string[];
  /**
   * Added to the SDK's safe default environment (PATH, HOME, …), not replacing it: the
   * parent's secrets do not leak into the server unless named here.
   */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Where the server's stderr goes; default 'inherit' (the SDK's default). */
  readonly stderr?: 'inherit' | 'pipe' | 'ignore';
}

/** Speaks MCP's Streamable HTTP transport to a server that is already running. */
export interface McpHttpTransportOptions {
  readonly type: 'http';
  readonly url: string | URL;
  /** Sent with every request, e.g. `{ Authorization: 'Bearer …' }`. */
  readonly headers?: Readonly<Record<string, string>>;
}

export type McpTransportOptions = McpStdioTransportOptions | McpHttpTransportOptions;

export interface McpExecutorOptions {
  /** How the executor is named in logs and tool errors; default `mcp:<server name>`. */
  readonly name?: string;
  /**
   * Per-request timeout for listing and calling tools, in ms. Default: the SDK's (60 s). The
   * chain's `toolTimeoutMs` still applies on top; set this higher for tools that run longer.
   */
  readonly requestTimeoutMs?: number;
  /**
   * Let the server's tools take the place of local tools of the same name (remote first;
   * the local tool runs only when the server gives no return for a call). Default false: a
   * chain run whose local tools share a name with this server's ends with a
   * ToolCollisionError (a ConfigError, code `TOOL_COLLISION`) naming both.
   */
  readonly shadowLocalTools?: boolean;
}

export interface McpConnectOptions extends McpExecutorOptions {
  readonly transport: McpTransportOptions;
  /** How this client introduces itself to the server; default `statecraft`. */
  readonly clientInfo?: { readonly name: string; readonly version: string };
  /** Aborting gives up connecting and closes what was opened. */
  readonly signal?: AbortSignal;
}

const STDERR_MODES = ['inherit', 'pipe', 'ignore'] as const;

// Every option each function knows, for refusing the rest with the nearest name (SPEC Q4).
const EXECUTOR_KEYS = ['name', 'requestTimeoutMs', 'shadowLocalTools'] as const;
const CONNECT_KEYS = [...EXECUTOR_KEYS, 'transport', 'clientInfo', 'signal'] as const;
const STDIO_KEYS = ['type', 'command', 'args', 'env', 'cwd', 'stderr'] as const;
const HTTP_KEYS = ['type', 'url', 'headers'] as const;

// tsc fails here when an options interface gains a key its list lacks.
type Unlisted<Options, Keys extends readonly string[]> = Exclude<keyof Options, Keys[number]>;
const _everyKeyListed: [
  Unlisted<McpExecutorOptions, typeof EXECUTOR_KEYS>,
  Unlisted<McpConnectOptions, typeof CONNECT_KEYS>,
  Unlisted<McpStdioTransportOptions, typeof STDIO_KEYS>,
  Unlisted<McpHttpTransportOptions, typeof HTTP_KEYS>,
] extends [never, never, never, never]
  ? true
  : false = true;

function nonEmptyString(option: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new ConfigError(option, `must be a non-empty string; got ${describe(value)}`);
  }
  return value;
}

function stringRecord(option: string, value: unknown): void {
  if (value === undefined) return;
  if (!isRecord(value) || Object.values(value).some((v) => typeof v !== 'string')) {
    throw new ConfigError(option, 'must be an object whose values are strings');
  }
}

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/**
 * The options of `fromClient`, checked: every problem at once in one ConfigError (SPEC Q4),
 * unknown keys named with the nearest known one.
 */
export function checkExecutorOptions(options: unknown): McpExecutorOptions {
  if (options === undefined) return {};
  if (!isRecord(options)) throw new ConfigError('options', 'must be an object');
  const problems = new OptionProblems('McpToolExecutor.fromClient');
  problems.unknownKeys(options, EXECUTOR_KEYS);
  checkExecutorKeys(problems, options);
  problems.throwIfAny();
  return options as McpExecutorOptions;
}

/** The options `connect` and `fromClient` share, into `problems`. */
function checkExecutorKeys(problems: OptionProblems, options: Record<string, unknown>): void {
  if (options.name !== undefined) problems.check(() => nonEmptyString('name', options.name));
  problems.check(() => optionalDelay('requestTimeoutMs', options.requestTimeoutMs));
  const shadow = options.shadowLocalTools;
  if (shadow !== undefined && typeof shadow !== 'boolean') {
    problems.add('shadowLocalTools', `must be true or false; got ${describe(shadow)}`);
  }
}

/**
 * Every option of `connect`, checked before anything is spawned or fetched: every problem at
 * once in one ConfigError (SPEC Q4), unknown keys named with the nearest known one.
 */
export function checkConnectOptions(options: unknown): McpConnectOptions {
  if (!isRecord(options)) {
    throw new ConfigError(
      'options',
      "must be an object with a `transport`, e.g. { transport: { type: 'stdio', command } }",
    );
  }
  const problems = new OptionProblems('McpToolExecutor.connect');
  problems.unknownKeys(options, CONNECT_KEYS);
  checkExecutorKeys(problems, options);
  checkTransport(problems, options.transport);
  const { clientInfo, signal } = options;
  if (
    clientInfo !== undefined &&
    !(
      isRecord(clientInfo) &&
      typeof clientInfo.name === 'string' &&
      typeof clientInfo.version === 'string'
    )
  ) {
    problems.add('clientInfo', 'must be { name: string, version: string }');
  }
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    problems.add('signal', 'must be an AbortSignal');
  }
  problems.throwIfAny();
  return options as unknown as McpConnectOptions;
}

function checkTransport(problems: OptionProblems, transport: unknown): void {
  if (!isRecord(transport)) {
    problems.add(
      'transport',
      "must be { type: 'stdio', command, args?, env?, cwd? } or { type: 'http', url, headers? }",
    );
    return;
  }
  if (transport.type === 'stdio') {
    problems.unknownKeys(transport, STDIO_KEYS, 'transport.');
    problems.check(() => nonEmptyString('transport.command', transport.command));
    if (
      transport.args !== undefined &&
      (!Array.isArray(transport.args) || transport.args.some((a) => typeof a !== 'string'))
    ) {
      problems.add('transport.args', 'must be an array of strings');
    }
    problems.check(() => stringRecord('transport.env', transport.env));
    if (transport.cwd !== undefined) {
      problems.check(() => nonEmptyString('transport.cwd', transport.cwd));
    }
    if (
      transport.stderr !== undefined &&
      !STDERR_MODES.includes(transport.stderr as (typeof STDERR_MODES)[number])
    ) {
      problems.add(
        'transport.stderr',
        `must be one of ${STDERR_MODES.map((m) => `'${m}'`).join(', ')}; got ${describe(transport.stderr)}`,
      );
    }
  } else if (transport.type === 'http') {
    problems.unknownKeys(transport, HTTP_KEYS, 'transport.');
    problems.check(() => checkHttpUrl(transport.url));
    problems.check(() => stringRecord('transport.headers', transport.headers));
  } else {
    problems.add('transport.type', `must be 'stdio' or 'http'; got ${describe(transport.type)}`);
  }
}

function checkHttpUrl(value: unknown): void {
  let url: URL | undefined;
  try {
    url = value instanceof URL ? value : typeof value === 'string' ? new URL(value) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    throw new ConfigError(
      'transport.url',
      `must be an http(s) URL of the server's MCP endpoint, e.g. 'http://127.0.0.1:3000/mcp'; got ${describe(value)}`,
    );
  }
}

/** Anything with the SDK Client's methods we use: guards `fromClient` against a wrong argument. */
export function checkClient(client: unknown): asserts client is Client {
  const candidate = client as Partial<Client> | null | undefined;
  if (
    !candidate ||
    typeof candidate.callTool !== 'function' ||
    typeof candidate.listTools !== 'function' ||
    typeof candidate.setNotificationHandler !== 'function'
  ) {
    throw new ConfigError(
      'client',
      'must be a connected Client from @modelcontextprotocol/sdk/client/index.js',
    );
  }
}
