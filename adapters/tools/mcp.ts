import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { type Tool, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { AbortError, StatecraftError } from '../../src/errors.js';
import { linkedController } from '../../src/linked-controller.js';
import { failedToolResult, type ToolCall, type ToolResult } from '../../src/messages.js';
import type { ToolSpec } from '../../src/model/language-model.js';
import { ABORTED, raceAbort } from '../../src/race-abort.js';
import type { RemoteToolExecutor } from '../../src/tools/remote-executor.js';
import { isCallable, providerSafeNames, toToolResult, toToolSpec } from './mcp/map-tools.js';
import {
  checkClient,
  checkConnectOptions,
  checkExecutorOptions,
  type McpConnectOptions,
  type McpExecutorOptions,
} from './mcp/options.js';
import { createTransport } from './mcp/transport.js';

/** Connecting to an MCP server failed: the process did not start, or the handshake did not complete. */
export class McpConnectionError extends StatecraftError {
  static override readonly code: string = 'MCP_CONNECTION';
}

// A server that hands back a cursor it already gave is looping; so is one that never stops.
const MAX_LIST_PAGES = 1000;

/**
 * The tools of one MCP server as a remote tool executor (SPEC X5, C10): the chain offers the
 * tools the server lists and runs them there, and falls back to its local tools for the rest.
 * The listing is cached and dropped when the server sends `notifications/tools/list_changed`.
 * A server tool named like a local tool ends the run with a ToolCollisionError, unless the
 * `shadowLocalTools` option lets the server's tool take its place.
 *
 * Tool names: MCP allows names that OpenAI and Anthropic reject (they accept only
 * `^[a-zA-Z0-9_-]{1,64}$`; MCP allows e.g. `files.read` and up to 128 characters), and one
 * such name would make every model request fail. So `listTools` offers such a tool under a
 * provider-safe name: each other character becomes `_`, the name is cut to 64 characters,
 * and a suffix `_2`, `_3`, … is added if it would equal another listed tool's name (names
 * that are already safe are never changed). `execute` accepts that name and calls the server
 * with the original one; the ToolResult keeps the name the model used.
 */
export class McpToolExecutor implements RemoteToolExecutor {
  readonly name: string;
  /** From the `shadowLocalTools` option: whether this server's tools may replace local ones of the same name. */
  readonly shadowLocalTools: boolean;
  readonly #client: Client;
  readonly #requestTimeoutMs: number | undefined;
  readonly #beforeClose: () => Promise<void>;
  #listing: Promise<readonly ToolSpec[]> | undefined;
  /**
   * Provider-safe name → the server's name, for renamed tools only, from the latest listing
   * fetched. Kept when list_changed drops the cached listing: the model may still call a tool
   * by a name it saw in that listing before the next one is fetched.
   */
  #serverNames: ReadonlyMap<string, string> = new Map();
  #closing: Promise<void> | undefined;

  private constructor(
    client: Client,
    name: string,
    options: McpExecutorOptions,
    beforeClose: () => Promise<void>,
  ) {
    this.#client = client;
    this.name = name;
    this.shadowLocalTools = options.shadowLocalTools === true;
    this.#requestTimeoutMs = options.requestTimeoutMs;
    this.#beforeClose = beforeClose;
    // Registered directly rather than through the Client's `listChanged` option, so that a
    // client the caller built (fromClient) gets it too. It replaces any handler that client
    // had for this one notification.
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.#listing = undefined;
    });
  }

  /**
   * Starts (stdio) or reaches (Streamable HTTP) an MCP server and completes the handshake.
   * Options are checked first: a ConfigError names the one that is wrong.
   */
  static async connect(options: McpConnectOptions): Promise<McpToolExecutor> {
    const checked = checkConnectOptions(options);
    const opened = createTransport(checked.transport);
    const client = new Client(checked.clientInfo);
    // The SDK never removes its abort listener: it goes on a signal of our own, not the caller's.
    const connecting = linkedController(checked.signal);
    const request: RequestOptions = {
      signal: connecting.controller.signal,
      ...(checked.requestTimeoutMs ? { timeout: checked.requestTimeoutMs } : {}),
    };
    try {
      await client.connect(opened.transport, request);
    } catch (error) {
      // The SDK starts closing the client when the handshake fails but does not wait for it;
      // closing again is harmless, and waiting for the transport means a stdio server is gone
      // before we reject (a process exiting right after would otherwise leave it running).
      await client.close().catch(() => {});
      await opened.closed();
      if (checked.signal?.aborted) {
        throw new AbortError(`Connecting to the MCP server ${opened.label} was cancelled`, {
          cause: checked.signal.reason,
        });
      }
      throw new McpConnectionError(
        `Could not connect to the MCP server ${opened.label}: ${messageOf(error)}`,
        { cause: error },
      );
    } finally {
      connecting.unlink();
    }
    return new McpToolExecutor(client, nameFor(checked, client, opened.label), checked, () =>
      opened.beforeClose(),
    );
  }

  /**
   * Wraps a Client that is already connected, for transports `connect` does not build (SSE,
   * WebSocket, in-memory, an auth provider). `close()` closes that client.
   */
  static fromClient(client: Client, options: McpExecutorOptions = {}): McpToolExecutor {
    checkClient(client);
    const checked = checkExecutorOptions(options);
    return new McpToolExecutor(client, nameFor(checked, client, 'client'), checked, async () => {});
  }

  /** The server's tools as ToolSpecs, from the cache unless the server said they changed. */
  async listTools(options: { readonly signal?: AbortSignal } = {}): Promise<readonly ToolSpec[]> {
    this.#assertOpen();
    let listing = this.#listing;
    if (!listing) {
      // Shared by concurrent callers, so it is not tied to any one caller's signal: each
      // caller stops waiting on its own abort below, and the listing still fills the cache.
      const fetching = this.#fetchTools();
      listing = fetching;
      this.#listing = fetching;
      fetching.catch(() => {
        if (this.#listing === fetching) this.#listing = undefined;
      });
    }
    const { signal } = options;
    if (!signal) return listing;
    const listed = await raceAbort(listing, signal);
    if (listed === ABORTED) {
      throw new AbortError(`Listing the tools of ${this.name} was cancelled`, {
        cause: signal.reason,
      });
    }
    return listed;
  }

  /**
   * Runs one call on the server, by the tool's own name when `call.name` is a provider-safe
   * name `listTools` gave it. A tool that fails there comes back as a failed ToolResult; an
   * abort cancels the request on the server (MCP `notifications/cancelled`) and rejects with
   * AbortError; a broken connection rejects with the SDK's error.
   */
  async execute(call: ToolCall, options: { readonly signal: AbortSignal }): Promise<ToolResult> {
    this.#assertOpen();
    const fail = (error: string) => failedToolResult(call, error);
    if (call.argumentsError !== undefined) {
      return fail(`The arguments for '${call.name}' are not valid JSON: ${call.argumentsError}`);
    }
    const args = call.arguments ?? {};
    if (typeof args !== 'object' || Array.isArray(args)) {
      return fail(`The arguments for '${call.name}' must be a JSON object.`);
    }
    const { signal } = options;
    // The SDK adds an abort listener per request and never removes it: a run's long-lived
    // signal would collect one per tool call, so the request gets a signal of its own.
    const request = linkedController(signal);
    try {
      const result = await this.#client.callTool(
        {
          name: this.#serverNames.get(call.name) ?? call.name,
          arguments: args as Record<string, unknown>,
        },
        undefined,
        this.#requestOptions(request.controller.signal),
      );
      return toToolResult(call, result);
    } catch (error) {
      if (signal.aborted) {
        throw new AbortError(`Tool '${call.name}' on ${this.name} was cancelled`, {
          cause: signal.reason,
        });
      }
      throw error;
    } finally {
      request.unlink();
    }
  }

  /**
   * Ends the session and the connection; a stdio server's process is stopped. Idempotent.
   * Never hangs on the server: an HTTP server gets 2 s (TERMINATE_SESSION_WAIT_MS) to answer
   * the DELETE that ends its session, and a stdio server that will not exit is killed.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#listing = undefined;
      try {
        await this.#beforeClose();
      } finally {
        await this.#client.close();
      }
    })();
    return this.#closing;
  }

  async #fetchTools(): Promise<readonly ToolSpec[]> {
    const tools: Tool[] = [];
    const seen = new Set<string>();
    const server = this.#client.getServerVersion()?.name || this.name;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.#client.listTools(
        cursor === undefined ? undefined : { cursor },
        this.#requestOptions(undefined),
      );
      tools.push(...result.tools.filter(isCallable));
      cursor = result.nextCursor;
      if (cursor === undefined) {
        // Named once every page is in: a renamed tool must not take a name a later page lists.
        const names = providerSafeNames(tools.map((t) => t.name));
        const serverNames = new Map<string, string>();
        const specs = tools.map((tool, i) => {
          const name = names[i] ?? tool.name;
          if (name !== tool.name) serverNames.set(name, tool.name);
          return toToolSpec(tool, server, name);
        });
        this.#serverNames = serverNames;
        return Object.freeze(specs);
      }
      if (seen.has(cursor)) {
        throw new Error(`${this.name} repeated the tool list cursor '${cursor}'`);
      }
      seen.add(cursor);
    }
    throw new Error(`${this.name} listed more than ${MAX_LIST_PAGES} pages of tools`);
  }

  #requestOptions(signal: AbortSignal | undefined): RequestOptions {
    return {
      ...(signal ? { signal } : {}),
      ...(this.#requestTimeoutMs ? { timeout: this.#requestTimeoutMs } : {}),
    };
  }

  #assertOpen(): void {
    if (this.#closing) throw new Error(`The MCP tool executor ${this.name} is closed`);
  }
}

function nameFor(options: McpExecutorOptions, client: Client, fallback: string): string {
  if (options.name) return options.name;
  const server = client.getServerVersion()?.name;
  return `mcp:${server || fallback}`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
