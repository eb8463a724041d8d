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

/** Restate's HTTP APIs as statecraft calls them: JSON in, JSON out, every wait bounded. */
export class RestateHttp {
  readonly base: string;
  readonly #timeoutMs: number;

  constructor(base: string, timeoutMs: number) {
    this.base = base.replace(/\/+$/, '');
    this.#timeoutMs = timeoutMs;
  }

  /** POSTs `body` (JSON) to `path` and returns the parsed answer; a non-2xx is a RestateRequestError. */
  async post<T>(path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    return this.#request<T>(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body ?? null),
    });
  }

  async get<T>(path: string): Promise<T> {
    return this.#request<T>(path, { method: 'GET' });
  }

  async #request<T>(path: string, init: RequestInit): Promise<T> {
    const url = `${this.base}${path}`;
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(this.#timeoutMs) });
    } catch (cause) {
      throw new RestateRequestError(url, 0, String((cause as Error)?.message ?? cause), { cause });
    }
    const text = await response.text();
    if (!response.ok) throw new RestateRequestError(url, response.status, messageOf(text));
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
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
