import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ConfigError } from '../../../src/errors.js';
import { isRecord } from '../../../src/is-record.js';
import {
  checkEach,
  type Describes,
  describeOptions,
  type OptionContext,
  type OptionSpec,
  type Specs,
} from '../../../src/options/describe.js';
import { delay, flag, satisfies, unchecked } from '../../../src/options/kinds.js';

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

function describe(value: unknown): string {
  return typeof value === 'string' ? `'${value}'` : String(value);
}

/** A string with more than blanks in it. */
function nonEmpty(extra: { readonly required?: boolean; readonly defaultText?: string } = {}) {
  return satisfies<string>(
    (value) => typeof value === 'string' && value.trim() !== '',
    (value) => `must be a non-empty string; got ${describe(value)}`,
    extra,
  );
}

function stringRecord() {
  return satisfies<Readonly<Record<string, string>>>(
    (value) => isRecord(value) && Object.values(value).every((v) => typeof v === 'string'),
    'must be an object whose values are strings',
  );
}

// Each options object described once (see src/options/describe.ts): its checks, in the order
// problems are reported, and its defaults.

type ClientInfo = NonNullable<McpConnectOptions['clientInfo']>;

/** The options `connect` and `fromClient` share. */
const EXECUTOR_SPECS = {
  name: nonEmpty({ defaultText: 'mcp:<server name>' }),
  requestTimeoutMs: delay({ defaultText: "the SDK's (60 s)" }),
  shadowLocalTools: flag(
    { default: false },
    (value) => `must be true or false; got ${describe(value)}`,
  ),
} as const;

export const MCP_EXECUTOR_OPTIONS = describeOptions('McpToolExecutor.fromClient', EXECUTOR_SPECS);

export const MCP_STDIO_OPTIONS = describeOptions('McpToolExecutor.connect', {
  type: unchecked<'stdio'>({ required: true, defaultText: 'required' }),
  command: nonEmpty({ required: true, defaultText: 'required' }),
  args: satisfies<readonly string[]>(
    (value) => Array.isArray(value) && value.every((a) => typeof a === 'string'),
    'must be an array of strings',
  ),
  env: stringRecord(),
  cwd: nonEmpty(),
  stderr: satisfies<McpStdioTransportOptions['stderr'] & {}>(
    (value) => STDERR_MODES.includes(value as (typeof STDERR_MODES)[number]),
    (value) =>
      `must be one of ${STDERR_MODES.map((m) => `'${m}'`).join(', ')}; got ${describe(value)}`,
    { defaultText: "'inherit'" },
  ),
});

export const MCP_HTTP_OPTIONS = describeOptions('McpToolExecutor.connect', {
  type: unchecked<'http'>({ required: true, defaultText: 'required' }),
  url: {
    required: true,
    defaultText: 'required',
    check: (value: unknown, at: OptionContext): string | URL | undefined =>
      at.problems.check(() => checkHttpUrl(value)),
  },
  headers: stringRecord(),
});

/** `transport`: one of two nested descriptions, chosen by its `type`. */
const transport: OptionSpec<McpTransportOptions> = {
  required: true,
  defaultText: 'required',
  check: (transport, at) => {
    if (!isRecord(transport)) {
      at.problem(
        "must be { type: 'stdio', command, args?, env?, cwd? } or { type: 'http', url, headers? }",
      );
      return undefined;
    }
    const described = (
      transport.type === 'stdio'
        ? MCP_STDIO_OPTIONS
        : transport.type === 'http'
          ? MCP_HTTP_OPTIONS
          : undefined
    ) as { readonly specs: Specs; readonly keys: readonly string[] } | undefined;
    if (!described) {
      at.problem(`must be 'stdio' or 'http'; got ${describe(transport.type)}`, `${at.name}.type`);
      return undefined;
    }
    const before = at.problems.size;
    at.problems.unknownKeys(transport, described.keys, `${at.name}.`);
    checkEach(described.specs, described.keys, transport, at.problems, `${at.name}.`);
    return at.problems.size === before ? (transport as unknown as McpTransportOptions) : undefined;
  },
};

export const MCP_CONNECT_OPTIONS = describeOptions('McpToolExecutor.connect', {
  ...EXECUTOR_SPECS,
  transport,
  clientInfo: satisfies<ClientInfo, ClientInfo>(
    (value) =>
      isRecord(value) && typeof value.name === 'string' && typeof value.version === 'string',
    'must be { name: string, version: string }',
    { default: { name: 'statecraft', version: '0.1.0' } },
  ),
  signal: satisfies<AbortSignal>(
    (value) => value instanceof AbortSignal,
    'must be an AbortSignal',
    { defaultText: 'none' },
  ),
});

// tsc fails here, naming the option, when an interface and its description drift apart.
const _described: [
  Describes<McpExecutorOptions, typeof MCP_EXECUTOR_OPTIONS>,
  Describes<McpConnectOptions, typeof MCP_CONNECT_OPTIONS>,
  Describes<McpStdioTransportOptions, typeof MCP_STDIO_OPTIONS>,
  Describes<McpHttpTransportOptions, typeof MCP_HTTP_OPTIONS>,
] = [true, true, true, true];

/**
 * The options of `fromClient`, checked: every problem at once in one ConfigError (SPEC Q4),
 * unknown keys named with the nearest known one; defaults applied.
 */
export function checkExecutorOptions(options: unknown): McpExecutorOptions {
  if (options === undefined) return MCP_EXECUTOR_OPTIONS.parse({});
  if (!isRecord(options)) throw new ConfigError('options', 'must be an object');
  return MCP_EXECUTOR_OPTIONS.parse(options);
}

/**
 * Every option of `connect`, checked before anything is spawned or fetched: every problem at
 * once in one ConfigError (SPEC Q4), unknown keys named with the nearest known one; defaults
 * applied.
 */
export function checkConnectOptions(options: unknown): McpConnectOptions & {
  readonly clientInfo: { readonly name: string; readonly version: string };
} {
  if (!isRecord(options)) {
    throw new ConfigError(
      'options',
      "must be an object with a `transport`, e.g. { transport: { type: 'stdio', command } }",
    );
  }
  const checked = MCP_CONNECT_OPTIONS.parse(options);
  return { ...checked, transport: checked.transport as McpTransportOptions };
}

function checkHttpUrl(value: unknown): string | URL {
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
  return value as string | URL;
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
