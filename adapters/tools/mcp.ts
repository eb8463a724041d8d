import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { AbortError, StatecraftError } from '../../src/errors.js';
import type { ToolCall, ToolResult } from '../../src/messages.js';
import type { ToolSpec } from '../../src/model/language-model.js';
import { ABORTED, raceAbort } from '../../src/tools/race-abort.js';
import type { RemoteToolExecutor } from '../../src/tools/remote-executor.js';
import { followSignal } from './mcp/follow-signal.js';
import { isCallable, toToolResult, toToolSpec } from './mcp/map-tools.js';
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
 */
export class McpToolExecutor implements RemoteToolExecutor {
  readonly name: string;
  readonly #client: Client;
  readonly #requestTimeoutMs: number | undefined;
  readonly #beforeClose: () => Promise<void>;
  #listing: Promise<readonly ToolSpec[]> | undefined;
  #closing: Promise<void> | undefined;

  private constructor(
    client: Client,
    name: string,
    options: McpExecutorOptions,
    beforeClose: () => Promise<void>,
  ) {
    this.#client = client;
    this.name = name;
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
    const client = new Client(checked.clientInfo ?? { name: 'statecraft', version: '0.1.0' });
    const connecting = checked.signal ? followSignal(checked.signal) : undefined;
    const request: RequestOptions = {
      ...(connecting ? { signal: connecting.signal } : {}),
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
      connecting?.release();
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
   * Runs one call on the server. A tool that fails there comes back as a failed ToolResult;
   * an abort cancels the request on the server (MCP `notifications/cancelled`) and rejects
   * with AbortError; a broken connection rejects with the SDK's error.
   */
  async execute(call: ToolCall, options: { readonly signal: AbortSignal }): Promise<ToolResult> {
    this.#assertOpen();
    const fail = (error: string): ToolResult => ({
      toolCallId: call.id,
      name: call.name,
      output: null,
      success: false,
      error,
    });
    if (call.argumentsError !== undefined) {
      return fail(`The arguments for '${call.name}' are not valid JSON: ${call.argumentsError}`);
    }
    const args = call.arguments ?? {};
    if (typeof args !== 'object' || Array.isArray(args)) {
      return fail(`The arguments for '${call.name}' must be a JSON object.`);
    }
    const { signal } = options;
    const request = followSignal(signal);
    try {
      const result = await this.#client.callTool(
        { name: call.name, arguments: args as Record<string, unknown> },
        undefined,
        this.#requestOptions(request.signal),
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
      request.release();
    }
  }

  /** Ends the session and the connection; a stdio server's process is stopped. Idempotent. */
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
    const specs: ToolSpec[] = [];
    const seen = new Set<string>();
    const server = this.#client.getServerVersion()?.name || this.name;
    let cursor: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.#client.listTools(
        cursor === undefined ? undefined : { cursor },
        this.#requestOptions(undefined),
      );
      for (const tool of result.tools) {
        if (isCallable(tool)) specs.push(toToolSpec(tool, server));
      }
      cursor = result.nextCursor;
      if (cursor === undefined) return Object.freeze(specs);
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
