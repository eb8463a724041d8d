import diagnostics from 'node:diagnostics_channel';
import { createServer, type Socket } from 'node:net';
import type { InspectionEvent, Observer } from 'xstate';
import { CliError } from './cli-error.js';

// `statecraft run --inspect` (SPEC D1): @statelyai/inspect's bridge, as examples/inspect.ts
// starts it. The bridge serves http://localhost:<port>, a page that embeds the Stately
// inspector, and relays over WebSocket what the inspector client sends it (and replays its
// last 200 events to a page opened late). Its server (0.7) listens on every network interface
// and checks no Origin, with no option to bind it to 127.0.0.1: whoever reaches the port gets
// the runs' events. @statelyai/inspect is an optional peer, imported only here, when asked for.
//
// The package (0.7) gives neither a "connected" nor a "flushed" signal, and its client retries
// a closed connection every 5 s forever, so stopping it before it connected would keep this
// process alive. So the client is waited for before the example runs, everything it was handed
// is sent before it stops, and the pages still connected when the bridge stops are closed
// (its server leaves them open, and one would keep the process alive until the tab closes).

export const DEFAULT_INSPECTOR_PORT = 8080;

/** What the bridge needs from @statelyai/inspect. */
export interface InspectModules {
  createWebSocketInspector(options: { url: string }): {
    readonly inspect: Observer<InspectionEvent>;
    readonly adapter: unknown;
    stop(): void;
  };
  createInspectorServer(options: { port: number; autoOpen: boolean }): { stop(): void };
}

export interface InspectorBridgeOptions {
  readonly port: number;
  /** Open the page in the default browser. */
  readonly open: boolean;
  /** How @statelyai/inspect is imported; a test passes one that fails. */
  readonly load?: () => Promise<InspectModules>;
}

export interface InspectorBridge {
  /** The page to open: the Stately inspector, fed by this bridge. */
  readonly url: string;
  /** The XState inspection observer to give runs (`inspectRuns`). */
  readonly inspect: Observer<InspectionEvent>;
  /** Hands the bridge every event inspected so far, then closes it and its pages' connections. */
  stop(): Promise<void>;
}

const CONNECT_MS = 5_000;
const FLUSH_MS = 5_000;

export async function startInspectorBridge(
  options: InspectorBridgeOptions,
): Promise<InspectorBridge> {
  const { port, open, load = importInspect } = options;
  let modules: InspectModules;
  try {
    modules = await load();
  } catch (error) {
    throw new CliError(
      `--inspect needs @statelyai/inspect, an optional peer dependency of statecraft: npm install @statelyai/inspect (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  // The bridge's server has no error handler: a port in use would crash the process.
  if (!(await portIsFree(port))) {
    throw new CliError(`--inspect-port ${port} is in use: choose another port`);
  }
  const pages = new Set<Socket>();
  const onSocket = (message: unknown) => {
    const { socket } = message as { socket: Socket };
    if (socket.localPort !== port) return;
    pages.add(socket);
    socket.once('close', () => pages.delete(socket));
  };
  diagnostics.subscribe('net.server.socket', onSocket);
  const server = modules.createInspectorServer({ port, autoOpen: open });
  const inspector = modules.createWebSocketInspector({ url: `ws://127.0.0.1:${port}` });
  const connection = connectionOf(inspector.adapter);

  const stop = async () => {
    // The inspector converts each event in a timer of its own: let those queued so far run.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (connection) await waitUntil(() => connection.buffered() === 0, FLUSH_MS);
    const closed = connection?.closed();
    inspector.stop();
    // Once the closing handshake is done, the bridge has relayed everything sent before it.
    if (closed) await within(closed, FLUSH_MS);
    server.stop();
    diagnostics.unsubscribe('net.server.socket', onSocket);
    for (const socket of pages) socket.end(() => socket.destroy());
  };

  if (connection && !(await waitUntil(connection.open, CONNECT_MS))) {
    await stop();
    throw new CliError(`the inspector could not connect to its bridge on port ${port}`);
  }
  return { url: `http://localhost:${port}`, inspect: inspector.inspect, stop };
}

async function importInspect(): Promise<InspectModules> {
  // Specifiers in variables: the package is an optional peer, not needed to compile or run
  // anything but this.
  const client = '@statelyai/inspect';
  const bridge = '@statelyai/inspect/server';
  const [{ createWebSocketInspector }, { createInspectorServer }] = await Promise.all([
    import(client) as Promise<Pick<InspectModules, 'createWebSocketInspector'>>,
    import(bridge) as Promise<Pick<InspectModules, 'createInspectorServer'>>,
  ]);
  return { createWebSocketInspector, createInspectorServer };
}

/** The bridge listens on every interface (IPv6 and IPv4), as its server does: try the same. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, () => probe.close(() => resolve(true)));
  });
}

interface Connection {
  readonly open: () => boolean;
  /** Bytes handed to the socket and not yet written. */
  readonly buffered: () => number;
  /** Resolves once the socket has closed. */
  readonly closed: () => Promise<void>;
}

/**
 * The WebSocket adapter's state, read from its fields (TypeScript-private in 0.7, plain
 * properties at run time): `status` is 'open' once connected, `ws` is the socket. Undefined
 * when they are not there (another version): the bridge then neither waits nor flushes.
 */
function connectionOf(adapter: unknown): Connection | undefined {
  if (typeof adapter !== 'object' || adapter === null || !('status' in adapter)) return undefined;
  const fields = adapter as {
    status?: unknown;
    ws?: { bufferedAmount?: unknown; readyState?: unknown; once?: unknown };
  };
  return {
    open: () => fields.status === 'open',
    buffered: () => {
      const amount = fields.ws?.bufferedAmount;
      return typeof amount === 'number' ? amount : 0;
    },
    closed: () => {
      const { ws } = fields;
      // readyState 3 is CLOSED.
      if (!ws || ws.readyState === 3 || typeof ws.once !== 'function') return Promise.resolve();
      return new Promise((resolve) =>
        (ws.once as (event: string, listener: () => void) => void).call(ws, 'close', () =>
          resolve(),
        ),
      );
    },
  };
}

/** Polls `condition` until it holds (true) or `ms` pass (false). */
async function waitUntil(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await delay(10);
  }
  return true;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits for `promise`, or `ms` at most. */
async function within(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
