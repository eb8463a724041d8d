import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo, Socket } from 'node:net';
import type { InspectionEvent, Observer } from 'xstate';
import { CliError } from './cli-error.js';
import { openBrowser } from './open-browser.js';

// `statecraft run --inspect` and examples/inspect.ts (SPEC D1, Q5): a local bridge between the
// runs and the Stately inspector. @statelyai/inspect's client (`createWebSocketInspector`)
// sends the runs' inspection events to it over WebSocket; the bridge relays them to the page it
// serves, which embeds the inspector from stately.ai and hands it the events (postMessage), and
// replays its last 200 events to a page opened late.
//
// @statelyai/inspect ships a bridge of its own (`@statelyai/inspect/server`, 0.7), but it
// listens on every network interface and checks no Host nor Origin, with no option to change
// either: another machine on the network, or any web page open in a browser here, could read
// the runs, prompts and answers included. This one, in the same few lines on `ws`:
// - listens on 127.0.0.1 only;
// - answers only requests whose Host is 127.0.0.1:<port> or localhost:<port> (a web page that
//   points its own name at 127.0.0.1, DNS rebinding, sends its own name);
// - accepts a WebSocket only from its own page (Origin http://127.0.0.1:<port> or
//   http://localhost:<port>) or with no Origin at all. Browsers send an Origin with every
//   WebSocket handshake, and a page cannot remove it, so a missing Origin is a program on this
//   machine, not a web page: @statelyai/inspect's own Node client is one (it sends none). A
//   program on this machine can reach 127.0.0.1 anyway: the bridge is as private as the
//   machine, as `statecraft view` is.
//
// @statelyai/inspect is an optional peer, imported only here, when asked for; `ws` is loaded
// from where @statelyai/inspect is installed (it is that package's own dependency), so the
// bridge needs nothing more than --inspect already did.
//
// The inspector client (0.7) gives neither a "connected" nor a "flushed" signal, and retries a
// closed connection every 5 s forever, so stopping it before it connected would keep this
// process alive. So the client is waited for before the runs start, everything it was handed
// is sent before it stops, and the pages still connected when the bridge stops are closed.

export const DEFAULT_INSPECTOR_PORT = 8080;

/** The bridge listens on the loopback interface only. */
const HOST = '127.0.0.1';
const LOCAL_NAMES = [HOST, 'localhost'];

/** Where the page embeds the inspector from. */
const INSPECTOR_URL = 'https://stately.ai/inspect';

/** Events replayed to a page that connects late, as @statelyai/inspect's bridge does. */
const REPLAYED = 200;

/** What the bridge needs from `ws` (8): a server that takes upgrades handed to it. */
export interface WebSocketServerLike {
  readonly clients: Set<WebSocketLike>;
  handleUpgrade(
    request: IncomingMessage,
    socket: Socket,
    head: Buffer,
    done: (socket: WebSocketLike) => void,
  ): void;
  close(): void;
}

export interface WebSocketLike {
  readonly readyState: number;
  send(data: string): void;
  on(event: 'message', listener: (data: unknown) => void): void;
  once(event: 'close', listener: () => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
}

/** What the bridge needs from @statelyai/inspect, and from the `ws` it depends on. */
export interface InspectModules {
  createWebSocketInspector(options: { url: string }): {
    readonly inspect: Observer<InspectionEvent>;
    readonly adapter: unknown;
    stop(): void;
  };
  readonly WebSocketServer: new (options: { noServer: true }) => WebSocketServerLike;
}

export interface InspectorBridgeOptions {
  /** 0 picks a free port (read it from `url` or `port`). */
  readonly port: number;
  /** Open the page in the default browser. */
  readonly open: boolean;
  /** How @statelyai/inspect and ws are imported; a test passes one that fails. */
  readonly load?: () => Promise<InspectModules>;
  /** The one-line message for a port already in use (default: the CLI's, naming --inspect-port). */
  readonly portInUse?: (port: number) => string;
  /** Who says that no browser could be opened (default `statecraft run`). */
  readonly name?: string;
}

export interface InspectorBridge {
  /** The page to open: the Stately inspector, fed by this bridge. */
  readonly url: string;
  /** The port it listens on, on 127.0.0.1. */
  readonly port: number;
  /** Where it listens: 127.0.0.1 and the port. */
  address(): AddressInfo;
  /** The XState inspection observer to give runs (`inspectRuns`). */
  readonly inspect: Observer<InspectionEvent>;
  /** Hands the bridge every event inspected so far, then closes it and its pages' connections. */
  stop(): Promise<void>;
}

const CONNECT_MS = 5_000;
const FLUSH_MS = 5_000;
const CLOSE_PAGES_MS = 1_000;

export async function startInspectorBridge(
  options: InspectorBridgeOptions,
): Promise<InspectorBridge> {
  const {
    port: wanted,
    open,
    load = importInspect,
    portInUse = (port) => `--inspect-port ${port} is in use: choose another port`,
    name = 'statecraft run',
  } = options;
  let modules: InspectModules;
  try {
    modules = await load();
  } catch (error) {
    throw new CliError(
      `the Stately inspector needs @statelyai/inspect, an optional peer dependency of statecraft: npm install @statelyai/inspect (${error instanceof Error ? error.message : String(error)})`,
    );
  }

  const relay = new modules.WebSocketServer({ noServer: true });
  const replayed: string[] = [];
  let port = wanted;
  const server = createServer((request, response) => {
    if (!isLocal(request, port)) return refuse(response);
    const path = new URL(request.url ?? '/', `http://${HOST}`).pathname;
    if (request.method !== 'GET' || path !== '/') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('The inspector bridge serves its page at / only.\n');
      return;
    }
    response.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
    });
    response.end(PAGE);
  });
  server.on('upgrade', (request: IncomingMessage, socket: Socket, head: Buffer) => {
    if (!isLocal(request, port)) {
      socket.end(
        'HTTP/1.1 403 Forbidden\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n' +
          `${FORBIDDEN}\n`,
      );
      return;
    }
    relay.handleUpgrade(request, socket, head, (client) => {
      for (const message of replayed) client.send(message);
      client.on('message', (data) => {
        const message = String(data);
        replayed.push(message);
        if (replayed.length > REPLAYED) replayed.shift();
        for (const other of relay.clients) {
          // 1 is OPEN.
          if (other !== client && other.readyState === 1) other.send(message);
        }
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(listenError(error, wanted, portInUse)),
    );
    server.listen(wanted, HOST, () => resolve());
  });
  const address = server.address() as AddressInfo;
  port = address.port;
  const url = `http://${HOST}:${port}`;

  const inspector = modules.createWebSocketInspector({ url: `ws://${HOST}:${port}` });
  const connection = connectionOf(inspector.adapter);

  const stop = async () => {
    // The inspector converts each event in a timer of its own: let those queued so far run.
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (connection) await waitUntil(() => connection.buffered() === 0, FLUSH_MS);
    const closed = connection?.closed();
    inspector.stop();
    // Once the closing handshake is done, the bridge has relayed everything sent before it.
    if (closed) await within(closed, FLUSH_MS);
    // Pages still open are told the bridge is going away (1001), then cut off if they do not
    // answer: an open connection would keep this process alive until the tab closes.
    const pages = [...relay.clients].map(
      (page) =>
        new Promise<void>((resolve) => {
          page.once('close', resolve);
          page.close(1001, 'the inspected process is done');
        }),
    );
    await within(
      Promise.all(pages).then(() => undefined),
      CLOSE_PAGES_MS,
    );
    for (const page of relay.clients) page.terminate();
    relay.close();
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  };

  if (connection && !(await waitUntil(connection.open, CONNECT_MS))) {
    await stop();
    throw new CliError(`the inspector could not connect to its bridge on port ${port}`);
  }
  if (open) openBrowser(url, name);
  return { url, port, address: () => ({ ...address }), inspect: inspector.inspect, stop };
}

async function importInspect(): Promise<InspectModules> {
  // A specifier in a variable: the package is an optional peer, not needed to compile or run
  // anything but this.
  const client = '@statelyai/inspect';
  const { createWebSocketInspector } = (await import(client)) as Pick<
    InspectModules,
    'createWebSocketInspector'
  >;
  // `ws` as @statelyai/inspect itself resolves it: its dependency, wherever it was installed.
  const fromInspect = createRequire(createRequire(import.meta.url).resolve(client));
  const { WebSocketServer } = fromInspect('ws') as Pick<InspectModules, 'WebSocketServer'>;
  return { createWebSocketInspector, WebSocketServer };
}

const FORBIDDEN =
  'The inspector bridge answers its own page on 127.0.0.1 and localhost only, and programs on this machine.';

/**
 * A request for this bridge from its own page or from a program on this machine: Host names
 * 127.0.0.1 or localhost with the bridge's port, and Origin, when there is one, is the
 * bridge's own page on either name.
 */
export function isLocal(request: IncomingMessage, port: number): boolean {
  const { host, origin } = request.headers;
  // A Host or an Origin without a port is port 80's.
  const hosts = LOCAL_NAMES.map((name) => `${name}:${port}`);
  if (port === 80) hosts.push(...LOCAL_NAMES);
  if (host === undefined || !hosts.includes(host.toLowerCase())) return false;
  if (origin === undefined) return true;
  const lower = origin.toLowerCase();
  return lower.startsWith('http://') && hosts.includes(lower.slice('http://'.length));
}

function refuse(response: ServerResponse): void {
  response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
  response.end(`${FORBIDDEN}\n`);
}

function listenError(
  error: NodeJS.ErrnoException,
  port: number,
  portInUse: (port: number) => string,
): CliError {
  if (error.code === 'EADDRINUSE') return new CliError(portInUse(port), { cause: error });
  if (error.code === 'EACCES') {
    return new CliError(
      `the inspector bridge may not listen on ${HOST}:${port} (ports below 1024 need root): choose another port`,
      { cause: error },
    );
  }
  return new CliError(`the inspector bridge cannot listen on ${HOST}:${port}: ${error.message}`, {
    cause: error,
  });
}

/**
 * The page: the Stately inspector in a frame, handed every event the bridge relays once it
 * says it is ready. As @statelyai/inspect's bridge page (0.7, MIT), but it connects back to
 * the host it was loaded from, 127.0.0.1 or localhost alike.
 */
const PAGE = `<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>Stately Inspector (statecraft)</title>
  <style>
    * { margin: 0; padding: 0; }
    html, body { height: 100%; }
    iframe { width: 100%; height: 100%; border: none; }
  </style>
</head>
<body>
  <iframe id="inspector" src="${INSPECTOR_URL}"></iframe>
  <script>
    const iframe = document.getElementById('inspector');
    const buffer = [];
    let connected = false;
    window.addEventListener('message', (e) => {
      if (e.data && e.data.type === '@statelyai.connected') {
        connected = true;
        for (const event of buffer) iframe.contentWindow.postMessage(event, '*');
        buffer.length = 0;
      }
    });
    const ws = new WebSocket('ws://' + location.host);
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      if (connected) iframe.contentWindow.postMessage(data, '*');
      else buffer.push(data);
    };
  </script>
</body>
</html>
`;

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
