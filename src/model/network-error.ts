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

// What a person reads when the provider could not be reached: one line naming the URL the
// client used and the cause in a few words, e.g. `could not reach http://127.0.0.1:9/v1
// (connection refused)`. The SDKs' own words ("Connection error.", "fetch failed") name
// neither, and a base URL of 127.0.0.1 still read "Could not reach the OpenAI API".

/** Causes by the code Node, undici or OpenSSL puts on the error or one of its causes. */
const CAUSES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ECONNABORTED: 'connection aborted',
  EPIPE: 'connection closed',
  ETIMEDOUT: 'connection timed out',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host name lookup failed, try again',
  ENETUNREACH: 'network unreachable',
  EHOSTUNREACH: 'host unreachable',
  UND_ERR_SOCKET: 'connection closed',
  UND_ERR_CLOSED: 'connection closed',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no response headers in time',
  UND_ERR_BODY_TIMEOUT: 'response body stalled',
};

/** OpenSSL and Node TLS codes: certificate problems, a TLS client talking to plain HTTP… */
const TLS_CODE = /^(?:ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|SELF_SIGNED_|DEPTH_ZERO_|ERR_OSSL_)/;

/**
 * The cause of a failed connection in a few words, from the first code found down the
 * `cause` chain: `connection refused`, `host not found`, `TLS: self-signed certificate`…;
 * a timeout is `timed out`. Undefined when nothing in the chain says (then the caller keeps
 * the SDK's message).
 */
export function networkCause(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e && typeof e === 'object' && depth < 6; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      const known = CAUSES[code];
      if (known) return known;
      if (TLS_CODE.test(code)) return `TLS: ${tlsReason(e, code)} (${code})`;
    }
    const name = (e as { name?: unknown }).name;
    if (name === 'TimeoutError' || name === 'APIConnectionTimeoutError') return 'timed out';
    e = (e as { cause?: unknown }).cause;
  }
  if (error instanceof TypeError && error.message === 'terminated') return 'connection closed';
  return undefined;
}

/**
 * The one-line message of a request that did not get its answer through the network: `could
 * not reach <url> (<cause>)`, or `lost the connection to <url> (<cause>)` once the answer had
 * started (`started`). Without a URL (a stand-in client) the provider's name stands in for
 * it; the cause is `cause` when the caller knows it, else read from the error (networkCause),
 * else the first line of the error's own message.
 */
export function networkFailureMessage(
  provider: string,
  url: string | undefined,
  error: unknown,
  { started = false, cause }: { readonly started?: boolean; readonly cause?: string } = {},
): string {
  const where = url ? displayUrl(url) : `the ${provider} API`;
  cause ??= networkCause(error) ?? truncate(innermostMessage(error) || 'network error');
  return `${started ? 'lost the connection to' : 'could not reach'} ${where} (${cause})`;
}

/** A URL as printed: without credentials or query (an API key may ride in either). */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return truncate(firstLine(url));
  }
}

/**
 * OpenSSL's reason (`wrong version number`) rather than its message, which is a line of
 * addresses and source paths; Node's own TLS errors (`self-signed certificate`) are short.
 */
function tlsReason(error: object, code: string): string {
  const reason = (error as { reason?: unknown }).reason;
  if (typeof reason === 'string' && reason) return reason;
  const message = firstLine(messageOf(error));
  return message && message.length <= 80 ? message : code.toLowerCase().replace(/_/g, ' ');
}

/**
 * The first line of the innermost message down the `cause` chain: the SDKs wrap the failure
 * in words of their own (`Connection error.`, `fetch failed`) that say nothing of it. Fetch's
 * refusal of a port it blocks (`bad port`, e.g. 9 or 6000) is said in full.
 */
function innermostMessage(error: unknown): string {
  let message = '';
  for (let e: unknown = error, depth = 0; e && depth < 6; depth++) {
    message = firstLine(messageOf(e)) || message;
    e = typeof e === 'object' ? (e as { cause?: unknown }).cause : undefined;
  }
  return message === 'bad port' ? 'port blocked by fetch' : message;
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  const message = (error as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : String(error);
}

function firstLine(text: string): string {
  const end = text.indexOf('\n');
  return (end === -1 ? text : text.slice(0, end)).trim();
}

function truncate(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
