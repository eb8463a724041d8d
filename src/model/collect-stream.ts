import { ProtocolError } from '../errors.js';
import { ZERO_USAGE } from '../usage.js';
import type { ContentPart, FinishReason, ModelResponse, StreamPart } from './language-model.js';

/**
 * Folds stream parts into the response `generate` would have returned: adjacent text
 * deltas merge into one text part, and tool calls appear where their `tool-call` part came.
 * Throws ProtocolError when the parts end without a `finish` part, because a response cut
 * short must not pass for a complete one.
 */
export class ResponseCollector {
  readonly #content: ContentPart[] = [];
  #text = '';
  #usage = ZERO_USAGE;
  #finishReason: FinishReason | undefined;

  add(part: StreamPart): void {
    switch (part.type) {
      case 'text-delta':
        this.#text += part.delta;
        break;
      case 'tool-call':
        this.#flushText();
        this.#content.push({ type: 'tool-call', toolCall: part.toolCall });
        break;
      case 'usage':
        this.#usage = part.usage;
        break;
      case 'finish':
        this.#finishReason = part.finishReason;
        break;
      case 'tool-call-delta':
        // Deltas are for live display; the complete `tool-call` part is authoritative.
        break;
    }
  }

  response(): ModelResponse {
    this.#flushText();
    if (!this.#finishReason)
      throw new ProtocolError('The model stream ended without a finish part');
    return { content: this.#content, usage: this.#usage, finishReason: this.#finishReason };
  }

  #flushText(): void {
    if (this.#text) this.#content.push({ type: 'text', text: this.#text });
    this.#text = '';
  }
}

/** The response a stream adds up to (see ResponseCollector). */
export async function collectStream(parts: AsyncIterable<StreamPart>): Promise<ModelResponse> {
  const collector = new ResponseCollector();
  for await (const part of parts) collector.add(part);
  return collector.response();
}
