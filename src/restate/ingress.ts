import http from 'node:http';
import https from 'node:https';
import { type Credential, SIGNATURE_HEADER, type Target } from './credential.js';
import { RestateCredentialError, refusalIn } from './credential-error.js';
import { RestateRequestError } from './request-error.js';

/** How a client reaches Restate: extra headers for every request, and its credential. */
export interface RestateHttpOptions {
  /** Sent with every request (e.g. `authorization` for a proxy in front of Restate). */
  readonly headers?: Readonly<Record<string, string>> | undefined;
  /** Signs every handler invocation (see credential.ts). */
  readonly credential?: Credential | undefined;
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
  readonly #headers: Readonly<Record<string, string>>;
  readonly #credential: Credential | undefined;

  constructor(base: string, timeoutMs: number, options: RestateHttpOptions = {}) {
    this.base = base.replace(/\/+$/, '');
    this.#timeoutMs = timeoutMs;
    const secure = this.base.startsWith('https:');
    this.#agent = secure ? sharedAgent(https.Agent) : sharedAgent(http.Agent);
    this.#request = secure ? https.request : http.request;
    this.#headers = options.headers ?? {};
    this.#credential = options.credential;
  }

  /** The same client with another timeout (a long wait for one call). */
  withTimeout(timeoutMs: number): RestateHttp {
    return new RestateHttp(this.base, timeoutMs, {
      headers: this.#headers,
      credential: this.#credential,
    });
  }

  /**
   * Invokes a handler through the ingress, signed with this client's credential; `send`
   * only enqueues it (Restate answers at once). A handler's credential refusal is a
   * RestateCredentialError; any other non-2xx answer a RestateRequestError.
   */
  invoke<T>(target: Target, body?: unknown, options: { readonly send?: boolean } = {}): Promise<T> {
    const key = target.key === undefined ? '' : `/${encodeURIComponent(target.key)}`;
    const path = `/${target.service}${key}/${target.handler}${options.send ? '/send' : ''}`;
    const text = JSON.stringify(body ?? null);
    const signature = this.#credential && {
      [SIGNATURE_HEADER]: this.#credential.sign(target, text),
    };
    const what = `${target.service}${key}/${target.handler}`;
    return this.#send<T>(
      'POST',
      path,
      text,
      { 'content-type': 'application/json', ...signature },
      what,
    );
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
    what = path,
  ): Promise<T> {
    const url = `${this.base}${path}`;
    const allHeaders = { ...this.#headers, ...headers };
    return new Promise<T>((resolve, reject) => {
      const request = this.#request(
        url,
        { method, headers: allHeaders, agent: this.#agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', (error) => fail(error));
          response.on('end', () => {
            clearTimeout(timer);
            const text = Buffer.concat(chunks).toString('utf8');
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              const message = messageOf(text);
              const refusal = refusalIn(status, message);
              reject(
                refusal !== undefined
                  ? new RestateCredentialError(url, status, refusal, `${what} was refused`)
                  : new RestateRequestError(url, status, `${message}${hintFor(status)}`),
              );
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
        },
      );
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

/** What to do about a refusal that is not a statecraft handler's (those say it themselves). */
function hintFor(status: number): string {
  return status === 401 || status === 403
    ? " (the server, or a proxy in front of it, wants a credential of its own: pass it with the `headers` option, e.g. { authorization: 'Bearer …' })"
    : '';
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
