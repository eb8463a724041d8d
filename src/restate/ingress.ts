import http from 'node:http';
import https from 'node:https';
import { StatecraftError } from '../errors.js';

/** A request to Restate's ingress or admin API failed: the server's status and message. */
export class RestateRequestError extends StatecraftError {
  static override readonly code: string = 'RESTATE_REQUEST_ERROR';
  /** HTTP status; 0 when no answer came (refused, timed out). */
  readonly status: number;
  readonly url: string;
  constructor(url: string, status: number, message: string, options?: { cause?: unknown }) {
    super(`Restate request ${url} failed${status ? ` (${status})` : ''}: ${message}`, options);
    this.status = status;
    this.url = url;
  }
}

/**
 * Restate's HTTP APIs as statecraft calls them: JSON in, JSON out, every wait bounded. Over
 * node:http with kept-alive connections rather than fetch: a worker makes a request per
 * journal write, and fetch's streams and signals cost more CPU than the write itself.
 */
export class RestateHttp {
  readonly base: string;
  readonly #timeoutMs: number;
  readonly #agent: http.Agent;
  readonly #request: typeof http.request;

  constructor(base: string, timeoutMs: number) {
    this.base = base.replace(/\/+$/, '');
    this.#timeoutMs = timeoutMs;
    const secure = this.base.startsWith('https:');
    this.#agent = secure ? sharedAgent(https.Agent) : sharedAgent(http.Agent);
    this.#request = secure ? https.request : http.request;
  }

  /** POSTs `body` (JSON) to `path` and returns the parsed answer; a non-2xx is a RestateRequestError. */
  post<T>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return this.#send<T>('POST', path, JSON.stringify(body ?? null), {
      'content-type': 'application/json',
      ...headers,
    });
  }

  get<T>(path: string): Promise<T> {
    return this.#send<T>('GET', path, undefined, {});
  }

  #send<T>(
    method: string,
    path: string,
    body: string | undefined,
    headers: Record<string, string>,
  ): Promise<T> {
    const url = `${this.base}${path}`;
    return new Promise<T>((resolve, reject) => {
      const request = this.#request(url, { method, headers, agent: this.#agent }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', (error) => fail(error));
        response.on('end', () => {
          clearTimeout(timer);
          const text = Buffer.concat(chunks).toString('utf8');
          const status = response.statusCode ?? 0;
          if (status < 200 || status >= 300) {
            reject(new RestateRequestError(url, status, messageOf(text)));
            return;
          }
          try {
            resolve((text === '' ? undefined : JSON.parse(text)) as T);
          } catch (cause) {
            reject(
              new RestateRequestError(url, status, `not JSON: ${text.slice(0, 200)}`, { cause }),
            );
          }
        });
      });
      const fail = (cause: unknown) => {
        clearTimeout(timer);
        request.destroy();
        reject(
          new RestateRequestError(url, 0, String((cause as Error)?.message ?? cause), { cause }),
        );
      };
      const timer = setTimeout(
        () => fail(new Error(`no answer within ${this.#timeoutMs} ms`)),
        this.#timeoutMs,
      );
      request.on('error', fail);
      request.end(body);
    });
  }
}

// One pool of kept-alive connections per process and protocol, shared by every client. No cap
// on sockets: a run waiting on its result (attach) must never hold up a journal write.
const agents = new Map<unknown, http.Agent>();
function sharedAgent(Agent: typeof http.Agent | typeof https.Agent): http.Agent {
  let agent = agents.get(Agent);
  if (!agent) {
    agent = new Agent({ keepAlive: true, maxFreeSockets: 256 });
    agents.set(Agent, agent);
  }
  return agent;
}

/** Restate answers errors as `{ message }` JSON; anything else is shown as it came. */
function messageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed?.message === 'string') return parsed.message;
  } catch {
    // not JSON: shown as is
  }
  return text.slice(0, 500);
}
