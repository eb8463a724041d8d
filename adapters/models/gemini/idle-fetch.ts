import type { IdleWatch } from '../../../src/model/idle-watch.js';
import { watchedBody } from '../../../src/model/watched-io.js';

// The SDK reads a `generateContent` body itself and never says when its headers arrived,
// so the idle watch of a non-streamed call goes in through the one door the SDK opens per
// request: `httpOptions.fetch`. Used only with a client this adapter built, which has no
// fetch of its own that this one would replace.

/** The `fetch` of one call: the answer's body, once its headers are in, is read under `watch`. */
export function idleFetch(watch: IdleWatch): typeof fetch {
  return async (input, init) => {
    // `dispatcher` is Node's own RequestInit field (undici), unknown to the DOM type.
    const response = await fetch(input, { ...init, ...noUndiciTimeouts() } as RequestInit);
    if (!response.body) return response;
    return new Response(watchedBody(response.body, watch), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

/** Where Node's fetch (undici) keeps its global dispatcher; the SDK reads it the same way. */
const GLOBAL_DISPATCHER = Symbol.for('undici.globalDispatcher.1');

interface Dispatcher {
  dispatch(options: object, handler: unknown): boolean;
}

/**
 * Without a fetch of its own, the SDK gives Node's fetch a dispatcher with undici's 300 s
 * header and body timeouts turned off, so that a long answer is bounded by the server (10
 * minutes unary) rather than cut at 5: a fetch passed in loses that, so it is done here the
 * same way. Elsewhere (no undici global dispatcher), nothing is added.
 */
function noUndiciTimeouts(): { dispatcher?: Dispatcher } {
  // Node loads undici, which sets its global dispatcher, on first use of a fetch global.
  if (!(GLOBAL_DISPATCHER in globalThis)) new Headers();
  const global = (globalThis as Record<symbol, unknown>)[GLOBAL_DISPATCHER] as
    | Dispatcher
    | undefined;
  if (typeof global?.dispatch !== 'function') return {};
  return {
    dispatcher: {
      dispatch: (options, handler) =>
        global.dispatch({ ...options, headersTimeout: 0, bodyTimeout: 0 }, handler),
    },
  };
}
