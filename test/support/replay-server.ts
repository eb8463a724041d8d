import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

// A local HTTP server on 127.0.0.1 that replays recorded provider responses (JSON bodies and
// SSE streams) in order, and records every request it receives. Adapter tests point the real
// SDK at it through the SDK's base URL: nothing leaves the machine.

/** One scripted answer, used for the next request that arrives. */
export type ReplayResponse =
  | {
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string>>;
      /** A JSON body. */
      readonly json: unknown;
    }
  | {
      readonly status?: number;
      readonly headers?: Readonly<Record<string, string>>;
      /**
       * The SSE stream as written on the wire, in pieces: each piece is written as it is
       * (pieces need not end on an event boundary), with `delayMs` between them.
       */
      readonly sse: readonly string[];
      readonly delayMs?: number;
      /** Keep the connection open after the last piece, until the client goes away. */
      readonly hang?: boolean;
    }
  | {
      readonly status?: number;
      /** Default content-type: application/json. */
      readonly headers?: Readonly<Record<string, string>>;
      /** A raw body, written as it is: an HTML page, JSON cut short, anything. */
      readonly body: string;
      /**
       * Write only the first `stallAfter` characters of `body` (0: none, right after the
       * headers), then keep the connection open until the client goes away: a stalled body.
       */
      readonly stallAfter?: number;
    };

export interface RecordedRequest {
  readonly method: string;
  /** Path and query, e.g. `/v1/chat/completions`. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  readonly body: unknown;
}

export interface ReplayServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** Requests whose connection is still open: 0 once every call has finished or been aborted. */
  openRequests(): number;
  /** Scripted responses not used yet. */
  remaining(): number;
  close(): Promise<void>;
}

/** Starts a server answering requests, in arrival order, with `responses`. */
export async function startReplayServer(
  responses: readonly ReplayResponse[],
): Promise<ReplayServer> {
  const queue = [...responses];
  const requests: RecordedRequest[] = [];
  let open = 0;
  const server = createServer(async (req, res) => {
    open++;
    res.on('close', () => open--);
    const body = await readBody(req);
    requests.push({
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      body,
    });
    const next = queue.shift();
    if (!next) {
      respondJson(res, 599, {
        error: { message: `replay server: no response scripted for ${req.url}` },
      });
      return;
    }
    if ('json' in next) {
      respondJson(res, next.status ?? 200, next.json, next.headers);
      return;
    }
    if ('body' in next) {
      res.writeHead(next.status ?? 200, { 'content-type': 'application/json', ...next.headers });
      // Sent now, as a server does once it starts answering, even if no body byte follows.
      res.flushHeaders();
      if (next.stallAfter === undefined) res.end(next.body);
      else if (next.stallAfter > 0) res.write(next.body.slice(0, next.stallAfter));
      return;
    }
    res.writeHead(next.status ?? 200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...next.headers,
    });
    res.flushHeaders();
    for (const piece of next.sse) {
      if (res.destroyed) return;
      res.write(piece);
      if (next.delayMs) await sleep(next.delayMs);
    }
    if (!next.hang) res.end();
  });
  // Each test owns its server; keep-alive sockets must not keep close() waiting.
  server.keepAliveTimeout = 1;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    openRequests: () => open,
    remaining: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A fixture file under test/fixtures, as text. */
export function fixture(...path: string[]): string {
  return readFileSync(join(import.meta.dirname, '..', 'fixtures', ...path), 'utf8');
}

/** A JSON fixture under test/fixtures, parsed. */
export function jsonFixture(...path: string[]): unknown {
  return JSON.parse(fixture(...path));
}

/**
 * An SSE fixture cut into pieces of `size` characters, so events (and the JSON inside them)
 * arrive split across network reads, as they do from a real provider.
 */
export function ssePieces(text: string, size = 37): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

function respondJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
