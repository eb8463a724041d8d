import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { ConfigError } from '../errors.js';
import type { RunObserver } from '../observe/run-observer.js';
import {
  type Describes,
  describeOptions,
  type OptionContext,
  type OptionSpec,
} from '../options/describe.js';
import { satisfies } from '../options/kinds.js';
import { nullIsDefault } from '../options/more-kinds.js';
import { loadPageAssets, type PageAsset } from './page-assets.js';
import { checkKeepRuns, DEFAULT_KEEP_RUNS, RunFeed, type SequencedEvent } from './run-feed.js';
import type { ResetEvent } from './viewer-events.js';

// The local run viewer (SPEC X4, A5): one page, served by Node's http on 127.0.0.1, that
// draws each observed run's machine and lights up its states as the run goes, with a timeline
// of its model and tool calls. Run events reach the page as Server-Sent Events: one-way,
// plain HTTP, reconnecting by themselves, and replayable by id, which is all a viewer needs.

export interface ViewerOptions {
  /** Default 4319; 0 picks a free port (read it from `viewer.url`). */
  readonly port?: number;
  /** The viewer only ever listens on the loopback interface: run data stays on this machine. */
  readonly host?: '127.0.0.1';
  /** Finished top-level runs kept for pages opened later (default 100). */
  readonly keepRuns?: number;
}

export interface Viewer {
  /** `http://127.0.0.1:<port>/`: open it in a browser. */
  readonly url: string;
  readonly port: number;
  /** Feeds the viewer: `observeRuns(viewer.observer)`, or a run's `observers`. */
  readonly observer: RunObserver;
  /**
   * Lets the process end while the viewer still listens, as `server.unref()` does, open pages'
   * connections included: `statecraft view --exit` serves until the script's work is done (the
   * process would otherwise go idle), then closes.
   */
  unref(): void;
  /** Ends open pages' event streams and stops listening. */
  close(): Promise<void>;
}

export const DEFAULT_VIEWER_PORT = 4319;
const HOST = '127.0.0.1';

/**
 * startViewer's options described once (see src/options/describe.ts): their checks, in the
 * order problems are reported, and their defaults.
 */
export const VIEWER_OPTIONS = describeOptions('startViewer', {
  port: nullIsDefault(
    satisfies<number, number>(
      (value) => Number.isInteger(value) && (value as number) >= 0 && (value as number) <= 65_535,
      (value) => `expected an integer from 0 to 65535, got ${String(value)}`,
      { default: DEFAULT_VIEWER_PORT, defaultText: String(DEFAULT_VIEWER_PORT) },
    ),
  ),
  host: satisfies<typeof HOST>(
    (value) => value === HOST,
    (value) => `the viewer listens on ${HOST} only, got ${String(value)}`,
    { defaultText: HOST },
  ),
  keepRuns: nullIsDefault<number, OptionSpec<number> & { readonly default: number }>({
    default: DEFAULT_KEEP_RUNS,
    // The feed's own check, its RangeError a problem naming the option.
    check: (value: unknown, at: OptionContext): number | undefined => {
      try {
        return checkKeepRuns(value);
      } catch (error) {
        at.problem((error as Error).message);
        return undefined;
      }
    },
  }),
});

// tsc fails here, naming the option, when ViewerOptions and its description drift apart.
const _described: Describes<ViewerOptions, typeof VIEWER_OPTIONS> = true;

/** Starts the viewer; resolves once it listens. Bad options (all of them at once) and busy ports are clear errors. */
export async function startViewer(options: ViewerOptions = {}): Promise<Viewer> {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'startViewer takes an options object or nothing');
  }
  const { port, keepRuns } = VIEWER_OPTIONS.parse(options);
  const feed = new RunFeed({ keepRuns });
  const assets = await loadPageAssets();
  const streams = new Set<ServerResponse>();
  // Event ids are `<boot>-<seq>`: numbers alone start again at 1 in a restarted viewer, and a
  // page left open would resume "after 30" and miss the new process's first 30 events.
  const boot = randomBytes(6).toString('hex');

  const server = createServer((request, response) => {
    if (!isLocalHost(request.headers.host)) {
      // Refuses DNS rebinding: a web page on another origin resolving its name to 127.0.0.1.
      return plain(response, 403, 'The viewer answers requests for 127.0.0.1 and localhost only.');
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return plain(response, 405, 'The viewer serves GET requests only.');
    }
    const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
    if (path === '/events') return streamEvents(request, response);
    const asset = assets.get(path);
    if (!asset) return plain(response, 404, `No ${path} here: the viewer is at /.`);
    return serve(response, asset, request.method === 'HEAD');
  });

  function streamEvents(request: IncomingMessage, response: ServerResponse): void {
    response.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    // Sent at once, so the page knows it is connected before any run happens; and a lost
    // connection is retried after a second.
    response.write('retry: 1000\n\n');
    const send = ({ seq, event }: SequencedEvent | { seq: number; event: ResetEvent }) => {
      response.write(`id: ${boot}-${seq}\ndata: ${JSON.stringify(event)}\n\n`);
    };
    // A reconnecting page says what it has seen; a new one gets everything kept so far; one
    // that saw another viewer's events starts over.
    const resume = resumeAfter(request.headers['last-event-id'], boot, feed.lastSeq);
    if (resume === 'reset') send({ seq: 0, event: { type: 'reset' } });
    for (const entry of feed.history(resume === 'reset' ? 0 : resume)) send(entry);
    const unsubscribe = feed.subscribe(send);
    streams.add(response);
    response.on('close', () => {
      unsubscribe();
      streams.delete(response);
    });
  }

  let unrefd = false;
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    if (unrefd) socket.unref();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, port)));
    server.listen(port, HOST, () => resolve());
  });
  const { port: actualPort } = server.address() as AddressInfo;

  return {
    url: `http://${HOST}:${actualPort}/`,
    port: actualPort,
    observer: feed.observer,
    unref() {
      unrefd = true;
      server.unref();
      for (const socket of sockets) socket.unref();
    },
    close() {
      for (const response of streams) response.end();
      return new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      });
    },
  };
}

/**
 * Where a page's stream resumes: after the event its Last-Event-ID names when this viewer sent
 * it (0 for a new page), or `reset` when another viewer process did (an unknown boot, or a
 * number this one has not reached).
 */
function resumeAfter(
  lastEventId: string | string[] | undefined,
  boot: string,
  lastSeq: number,
): number | 'reset' {
  if (lastEventId === undefined || lastEventId === '') return 0;
  const match = /^([0-9a-f]+)-(\d+)$/.exec(String(lastEventId));
  const seq = Number(match?.[2]);
  return match?.[1] === boot && seq <= lastSeq ? seq : 'reset';
}

function isLocalHost(host: string | undefined): boolean {
  if (!host) return false;
  const name = host.replace(/:\d+$/, '');
  return name === HOST || name === 'localhost';
}

function serve(response: ServerResponse, asset: PageAsset, headOnly: boolean): void {
  response.writeHead(200, {
    'content-type': asset.contentType,
    'content-length': asset.body.length,
    'cache-control': 'no-cache',
  });
  response.end(headOnly ? undefined : asset.body);
}

function plain(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
  response.end(`${text}\n`);
}

function listenError(error: NodeJS.ErrnoException, port: number): Error {
  if (error.code === 'EADDRINUSE') {
    return new Error(
      `The viewer cannot listen on ${HOST}:${port}: the port is in use. Choose another port, or 0 for any free one.`,
      { cause: error },
    );
  }
  if (error.code === 'EACCES') {
    return new Error(
      `The viewer is not allowed to listen on ${HOST}:${port}: choose a port above 1023, or 0 for any free one.`,
      { cause: error },
    );
  }
  return new Error(`The viewer cannot listen on ${HOST}:${port}: ${error.message}`, {
    cause: error,
  });
}
