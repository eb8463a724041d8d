import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpTransportOptions } from './options.js';

/** The SDK transport for checked options, and how to end it politely. */
export interface OpenedTransport {
  readonly transport: Transport;
  /** A short description for the executor's default name and error messages. */
  readonly label: string;
  /** Runs before the client closes: ends an HTTP session on the server's side. */
  readonly beforeClose: () => Promise<void>;
  /**
   * Settles once a started transport has closed (a stdio child has exited), or at once if it
   * never started. After a failed handshake the SDK closes the transport without waiting;
   * `connect` waits on this so that no server process outlives a rejected connect.
   */
  readonly closed: () => Promise<void>;
}

// The SDK stops a stdio child in at most ~4 s (stdin closed, then SIGTERM, then SIGKILL).
const CLOSE_WAIT_MS = 5_000;

/**
 * How long close() waits for the server to answer the DELETE that ends an HTTP session. The
 * SDK sends it with no timeout, so a server that never answers would hang close() for good;
 * ending the session is a courtesy (the server expires it anyway), so after this we close
 * regardless, and closing the transport aborts the DELETE still in flight.
 */
export const TERMINATE_SESSION_WAIT_MS = 2_000;

/** Settles when `promise` does or after `ms`, whichever is first; never rejects. */
async function settleWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    promise.then(
      () => {},
      () => {},
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

function trackClose(transport: Transport): () => Promise<void> {
  let started = false;
  let markClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    markClosed = resolve;
  });
  // Set before the Client connects: Protocol.connect chains its own handler after this one.
  transport.onclose = () => markClosed();
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    started = true;
  };
  return async () => {
    if (!started) return;
    await settleWithin(closed, CLOSE_WAIT_MS);
  };
}

export function createTransport(options: McpTransportOptions): OpenedTransport {
  if (options.type === 'stdio') {
    const transport = new StdioClientTransport({
      command: options.command,
      args: options.args ? [...options.args] : undefined,
      env: options.env ? { ...options.env } : undefined,
      cwd: options.cwd,
      stderr: options.stderr,
    });
    // Closing the client closes this transport, which ends stdin, then SIGTERMs and finally
    // SIGKILLs a child that will not exit: nothing more to do here.
    return {
      transport,
      label: options.command,
      beforeClose: async () => {},
      closed: trackClose(transport),
    };
  }
  const url = new URL(options.url);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: options.headers ? { headers: { ...options.headers } } : undefined,
  });
  return {
    transport,
    label: url.origin,
    closed: trackClose(transport),
    beforeClose: async () => {
      // A DELETE frees the session on the server; servers without sessions answer 405, and
      // a server that is gone or never answers must not stop us closing.
      await settleWithin(transport.terminateSession(), TERMINATE_SESSION_WAIT_MS);
    },
  };
}
