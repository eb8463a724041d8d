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
