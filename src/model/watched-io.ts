import type { IdleWatch } from './idle-watch.js';
import { bodySnippet, isJsonSyntaxError, malformedResponse } from './malformed-response.js';

// Reading a provider's answer under an IdleWatch: the wait for each event, or each chunk of
// a body, is bounded; what cannot be parsed is a malformed response. Shared by the adapters,
// which hand over the SDK's stream or the raw Response once its headers have arrived.

/**
 * The SDK's stream events, each wait for the next one bounded by `watch`. The countdown runs
 * only while an event is awaited, not while the consumer holds one. An event that is not
 * JSON (the SDK's `JSON.parse` throws) is a malformed, retryable stream. Leaving early (the
 * consumer stops, the watch fires) returns the SDK's iterator, which cancels the request;
 * after the watch fired that is not awaited, since a stalled SDK may never answer it.
 */
export async function* watchEvents<T>(
  events: AsyncIterable<T>,
  watch: IdleWatch,
  provider: string,
): AsyncGenerator<T> {
  const iterator = events[Symbol.asyncIterator]();
  let settled = false;
  try {
    for (;;) {
      watch.touch();
      const next = await watch.race(iterator.next());
      watch.stop();
      if (next.done) {
        settled = true;
        return;
      }
      yield next.value;
    }
  } catch (error) {
    settled = watch.error === undefined;
    if (watch.error) throw watch.error;
    if (isJsonSyntaxError(error)) {
      throw malformedResponse(
        provider,
        `the stream sent an event that is not JSON (${messageOf(error)})`,
        true,
      );
    }
    throw error;
  } finally {
    watch.stop();
    if (!settled) {
      const closing = Promise.resolve()
        .then(() => iterator.return?.())
        .catch(() => {});
      if (!watch.error) await closing;
    }
  }
}

/**
 * A response body read to its end and parsed as JSON, each wait for the next chunk bounded by
 * `watch`. A body that is not JSON (a proxy's HTML page, a body cut short) is a malformed,
 * retryable response: whatever answered was not the API, or did not finish.
 */
export async function readJsonBody(
  response: Response,
  watch: IdleWatch,
  provider: string,
): Promise<unknown> {
  const text = await readBodyText(response, watch);
  try {
    return JSON.parse(text);
  } catch {
    const type = response.headers.get('content-type') ?? 'no content-type';
    throw malformedResponse(
      provider,
      `a ${response.status} (${type}) whose body is not JSON, perhaps a proxy's page or a body cut short: ${bodySnippet(text)}`,
      true,
    );
  }
}

async function readBodyText(response: Response, watch: IdleWatch): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      watch.touch();
      const { done, value } = await watch.race(reader.read());
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    return text + decoder.decode();
  } catch (error) {
    reader.cancel().catch(() => {});
    throw watch.error ?? error;
  } finally {
    watch.stop();
  }
}

/**
 * `body` with each wait for its next chunk bounded by `watch`, for an SDK that reads the
 * Response itself (Gemini's `generateContent`): once the watch fires, the body errors with
 * the idle error and the underlying one is cancelled.
 */
export function watchedBody(
  body: ReadableStream<Uint8Array>,
  watch: IdleWatch,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      watch.touch();
      try {
        const { done, value } = await watch.race(reader.read());
        watch.stop();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (error) {
        watch.stop();
        reader.cancel().catch(() => {});
        controller.error(watch.error ?? error);
      }
    },
    cancel(reason) {
      watch.stop();
      return reader.cancel(reason);
    },
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
