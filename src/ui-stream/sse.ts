import type { UIMessageChunk } from './chunks.js';

// The UI message stream on the wire: server-sent events, one `data: <json>` per chunk and
// `data: [DONE]` at the end, under the headers the AI SDK's client checks for. The same bytes
// `ai`'s createUIMessageStreamResponse writes, without depending on `ai`.

/** The headers of a UI message stream response. */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
});

/** The SSE frames of a chunk stream, `data: [DONE]` last. */
export function uiMessageStreamSse(stream: ReadableStream<UIMessageChunk>): ReadableStream<string> {
  return stream.pipeThrough(
    new TransformStream<UIMessageChunk, string>({
      transform(chunk, controller) {
        controller.enqueue(`data: ${JSON.stringify(chunk)}\n\n`);
      },
      flush(controller) {
        controller.enqueue('data: [DONE]\n\n');
      },
    }),
  );
}

/** A web `Response` carrying the stream as SSE (for fetch-style servers: Next.js, Hono, Bun, Deno). */
export function uiMessageStreamResponse(
  stream: ReadableStream<UIMessageChunk>,
  init: { readonly status?: number; readonly headers?: Readonly<Record<string, string>> } = {},
): Response {
  return new Response(uiMessageStreamSse(stream).pipeThrough(new TextEncoderStream()), {
    status: init.status ?? 200,
    headers: { ...UI_MESSAGE_STREAM_HEADERS, ...init.headers },
  });
}

/** What writeUIMessageStream needs of node:http's ServerResponse. */
export interface NodeResponse {
  writeHead(status: number, headers: Record<string, string>): unknown;
  write(chunk: string): boolean;
  end(): unknown;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
}

/**
 * Writes the stream to a node:http response as SSE and ends it. A client that goes away
 * cancels the stream (and so stops the run, unless it paused on an approval). Resolves when
 * the response has ended or the client has gone.
 */
export async function writeUIMessageStream(
  response: NodeResponse,
  stream: ReadableStream<UIMessageChunk>,
): Promise<void> {
  response.writeHead(200, { ...UI_MESSAGE_STREAM_HEADERS });
  const reader = uiMessageStreamSse(stream).getReader();
  let gone = false;
  response.once('close', () => {
    if (response.writableEnded) return;
    gone = true;
    reader.cancel('the client went away').catch(() => undefined);
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || gone || response.destroyed) break;
      if (!response.write(value)) {
        // Whichever comes first, the other listener goes: a long answer to a slow client
        // waits many times, and must not leave a listener behind for each wait.
        await new Promise<void>((resolve) => {
          const done = () => {
            response.off('drain', done);
            response.off('close', done);
            resolve();
          };
          response.once('drain', done);
          response.once('close', done);
        });
      }
    }
  } finally {
    if (!response.writableEnded && !response.destroyed) response.end();
  }
}
