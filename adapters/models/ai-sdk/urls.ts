import { base64OfBytes } from '../../../src/attachments.js';
import { AbortError, ModelError } from '../../../src/errors.js';
import { isNetworkError, networkCause } from '../../../src/model/network-error.js';

// URL attachments for a model that does not take them. The AI SDK's own `generateText`
// downloads every URL a model does not list in its `supportedUrls` before calling it; a
// direct caller of `doGenerate` (this adapter) must do the same, or the provider fails in
// its own way (openai-compatible refuses a PDF URL, for one). So statecraft downloads them:
// a screenshot URL works with every provider, as it does through `generateText`. Each
// download is bounded in time (`downloadTimeoutMs`) and in size (`maxDownloadBytes`: the
// bytes are held whole, then again as base64, so a huge body would take the process down)
// and follows the call's signal; a URL that cannot be fetched fails the call with a
// ModelError naming the URL and why.

/**
 * The model's `supportedUrls`: media type patterns (`image/png`, `image/` with a star, a lone
 * star…) to URL patterns.
 */
export type SupportedUrls = Readonly<Record<string, readonly RegExp[]>>;

/**
 * True when the model takes `url` for `mediaType` as it is, by the rule the AI SDK applies:
 * a pattern covering the media type (equal to it, its top type with a star, or a star for
 * any) whose regexes match the lower-cased URL.
 */
export function isUrlSupported(supported: SupportedUrls, mediaType: string, url: string): boolean {
  const type = mediaType.toLowerCase();
  const lowerUrl = url.toLowerCase();
  for (const [pattern, regexes] of Object.entries(supported)) {
    const key = pattern.toLowerCase();
    const covers =
      key === '*' ||
      key === '*/*' ||
      key === type ||
      (key.endsWith('/*') && type.startsWith(key.slice(0, -1)));
    if (!covers) continue;
    for (const regex of regexes) {
      regex.lastIndex = 0;
      if (regex.test(lowerUrl)) return true;
    }
  }
  return false;
}

export interface Downloads {
  /** The bytes at `url`, base64; one download per URL per call. */
  fetch(url: string, mediaType: string): Promise<string>;
}

/** How one call's downloads are bounded. */
export interface DownloadLimits {
  readonly timeoutMs: number;
  readonly maxBytes: number;
}

/** The downloads of one call: bounded each by `limits`, all stopped by `signal`. */
export function downloads(
  label: string,
  limits: DownloadLimits,
  signal: AbortSignal | undefined,
): Downloads {
  const started = new Map<string, Promise<string>>();
  return {
    fetch(url, mediaType) {
      let download = started.get(url);
      if (!download) {
        download = downloadBase64(url, mediaType, label, limits, signal);
        started.set(url, download);
      }
      return download;
    },
  };
}

async function downloadBase64(
  url: string,
  mediaType: string,
  label: string,
  { timeoutMs, maxBytes }: DownloadLimits,
  signal: AbortSignal | undefined,
): Promise<string> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const why = (problem: string) =>
    `Could not download the attachment ${url} (${mediaType}), which ${label} does not take as a URL: ${problem}`;
  try {
    const response = await fetch(url, { signal: both });
    if (!response.ok) {
      response.body?.cancel().catch(() => {});
      throw new ModelError(why(`HTTP ${response.status}`), {
        status: response.status,
        retryable: response.status === 408 || response.status === 429 || response.status >= 500,
      });
    }
    const announced = Number(response.headers.get('content-length') ?? Number.NaN);
    if (announced > maxBytes) {
      response.body?.cancel().catch(() => {});
      throw new ModelError(
        why(`it is ${announced} bytes (content-length), more than maxDownloadBytes (${maxBytes})`),
        { retryable: false },
      );
    }
    const bytes = await readAtMost(response, maxBytes);
    if (!bytes) {
      throw new ModelError(why(`it is more than maxDownloadBytes (${maxBytes})`), {
        retryable: false,
      });
    }
    return base64OfBytes(bytes);
  } catch (error) {
    if (ModelError.isInstance(error)) throw error;
    if (signal?.aborted) {
      throw new AbortError('The model call was aborted', { cause: signal.reason });
    }
    if (timeout.aborted) {
      throw new ModelError(why(`no complete answer within ${timeoutMs} ms (downloadTimeoutMs)`), {
        cause: error,
        retryable: true,
      });
    }
    const cause = networkCause(error) ?? (error instanceof Error ? error.message : String(error));
    throw new ModelError(why(cause), { cause: error, retryable: isNetworkError(error) });
  }
}

/**
 * The body of `response`, read chunk by chunk; undefined, the rest cancelled, once it passes
 * `maxBytes` (a server may send no content-length, or a wrong one).
 */
async function readAtMost(response: Response, maxBytes: number): Promise<Uint8Array | undefined> {
  if (!response.body) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}
