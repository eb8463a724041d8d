import { base64OfBytes } from '../../../src/attachments.js';
import { AbortError, ModelError } from '../../../src/errors.js';
import { isNetworkError, networkCause } from '../../../src/model/network-error.js';

// URL attachments for a model that does not take them. The AI SDK's own `generateText`
// downloads every URL a model does not list in its `supportedUrls` before calling it; a
// direct caller of `doGenerate` (this adapter) must do the same, or the provider fails in
// its own way (openai-compatible refuses a PDF URL, for one). So statecraft downloads them:
// a screenshot URL works with every provider, as it does through `generateText`. Each
// download is bounded (`downloadTimeoutMs`) and follows the call's signal; a URL that cannot
// be fetched fails the call with a ModelError naming the URL and why.

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

/** The downloads of one call: bounded each by `timeoutMs`, all stopped by `signal`. */
export function downloads(
  label: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Downloads {
  const started = new Map<string, Promise<string>>();
  return {
    fetch(url, mediaType) {
      let download = started.get(url);
      if (!download) {
        download = downloadBase64(url, mediaType, label, timeoutMs, signal);
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
  timeoutMs: number,
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
    return base64OfBytes(new Uint8Array(await response.arrayBuffer()));
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
