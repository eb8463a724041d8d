// Which failures mean the request never got (all of) its answer through the network: worth
// retrying, whatever the SDK. Node's fetch (undici) reports them with a code somewhere down
// the cause chain, or as a bare TypeError: 'fetch failed' (no connection) or 'terminated'
// (the connection dropped mid-body, e.g. during a stream).

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
]);

/** True when `error`, or one of its causes, is a network failure rather than an API answer. */
export function isNetworkError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  // Undici's wording for a request that never got an answer or lost its connection mid-body.
  return (
    error instanceof TypeError &&
    (error.message === 'fetch failed' || error.message === 'terminated')
  );
}
