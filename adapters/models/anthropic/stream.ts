import type {
  RawContentBlockDeltaEvent,
  RawContentBlockStartEvent,
  RawMessageStreamEvent,
} from '@anthropic-ai/sdk/resources/messages';
import { ModelError } from '../../../src/errors.js';
import { isRecord } from '../../../src/is-record.js';
import type { FinishReason, StreamPart } from '../../../src/model/language-model.js';
import { malformedResponse } from '../../../src/model/malformed-response.js';
import { streamErrorEvent } from './errors.js';
import { mapStopReason, mapUsage, toolCallFromInput, type UsageFields } from './response.js';

// Stream mapping: Messages API SSE events → our stream parts. A small state machine with no
// I/O: the adapter feeds it the SDK's raw events, the tests feed it recorded ones.

/** What the stream carries: the SDK's events, plus the two it filters out, kept for fixtures. */
export type AnthropicStreamEvent =
  | RawMessageStreamEvent
  | { readonly type: 'ping' }
  | {
      readonly type: 'error';
      readonly error?: { readonly type?: string; readonly message?: string };
    };

type OpenBlock =
  | { readonly kind: 'text' }
  | {
      readonly kind: 'tool';
      /** Position of the call among this response's calls (our `index`), not the block index. */
      readonly callIndex: number;
      readonly id: string;
      readonly name: string;
      /** The `input` the block started with; the API starts tool_use blocks with `{}`. */
      readonly startInput: unknown;
      json: string;
    };

/**
 * Maps one response's events, in order: `push` returns the parts each event yields, `end`
 * checks the stream was complete. Parts follow LanguageModel v1: text and tool-call deltas as
 * they come, a `tool-call` when its block stops, then `usage` and `finish` at `message_stop`.
 */
export class AnthropicStreamMapper {
  readonly #blocks = new Map<number, OpenBlock>();
  #calls = 0;
  #usage: UsageFields = {};
  #stopReason: string | null = null;
  #stopped = false;
  #response: { id?: string; modelId?: string } = {};

  /** The response id and model, once `message_start` told them. */
  get response(): { readonly id?: string; readonly modelId?: string } {
    return this.#response;
  }

  push(event: AnthropicStreamEvent): StreamPart[] {
    checkEvent(event);
    switch (event.type) {
      case 'message_start':
        this.#response = { id: event.message.id, modelId: event.message.model };
        this.#mergeUsage(event.message.usage);
        return [];
      case 'content_block_start':
        return this.#start(event.index, event.content_block);
      case 'content_block_delta':
        return this.#delta(event.index, event.delta);
      case 'content_block_stop':
        return this.#stop(event.index);
      case 'message_delta':
        if (event.delta.stop_reason) this.#stopReason = event.delta.stop_reason;
        this.#mergeUsage(event.usage);
        return [];
      case 'message_stop':
        this.#stopped = true;
        return [
          { type: 'usage', usage: mapUsage(this.#usage) },
          { type: 'finish', finishReason: this.finishReason },
        ];
      case 'error':
        // The SDK throws on `event: error` itself; this is for streams read without it.
        throw streamErrorEvent(event.error);
      default:
        // ping, and event types newer than this adapter: the API says to tolerate them.
        return [];
    }
  }

  get finishReason(): FinishReason {
    return mapStopReason(this.#stopReason);
  }

  /** Throws when the events ended before `message_stop`: a cut-off response is no response. */
  end(): void {
    if (this.#stopped) return;
    throw new ModelError('The Anthropic stream ended before its message_stop event', {
      retryable: true,
    });
  }

  #start(index: number, block: RawContentBlockStartEvent['content_block']): StreamPart[] {
    if (block.type === 'text') {
      this.#blocks.set(index, { kind: 'text' });
      return block.text ? [{ type: 'text-delta', delta: block.text }] : [];
    }
    if (block.type !== 'tool_use') return [];
    const open: OpenBlock = {
      kind: 'tool',
      callIndex: this.#calls++,
      id: block.id ?? '',
      name: block.name ?? '',
      startInput: block.input,
      json: '',
    };
    this.#blocks.set(index, open);
    // The first delta carries the id and name, so a UI can show the call before its input.
    return [
      {
        type: 'tool-call-delta',
        index: open.callIndex,
        id: open.id,
        name: open.name,
        argumentsDelta: '',
      },
    ];
  }

  #delta(index: number, delta: RawContentBlockDeltaEvent['delta']): StreamPart[] {
    const block = this.#blocks.get(index);
    if (delta.type === 'text_delta' && block?.kind === 'text') {
      return delta.text ? [{ type: 'text-delta', delta: delta.text }] : [];
    }
    if (delta.type === 'input_json_delta' && block?.kind === 'tool') {
      const json = delta.partial_json;
      if (!json) return [];
      block.json += json;
      return [{ type: 'tool-call-delta', index: block.callIndex, argumentsDelta: json }];
    }
    // thinking, signature and citations deltas have no part in LanguageModel v1.
    return [];
  }

  #stop(index: number): StreamPart[] {
    const block = this.#blocks.get(index);
    this.#blocks.delete(index);
    if (block?.kind !== 'tool') return [];
    // The concatenated deltas are the input; malformed JSON becomes `argumentsError`, never a
    // throw. Without deltas, the block's starting input stands (the API's `{}` for no input).
    const input = block.json || block.startInput;
    return [{ type: 'tool-call', toolCall: toolCallFromInput(block.id, block.name, input) }];
  }

  #mergeUsage(usage: UsageFields | null | undefined): void {
    if (!usage) return;
    // message_delta's counts are cumulative; its null fields mean "no news", not zero.
    const next: Record<string, unknown> = { ...this.#usage };
    for (const [key, value] of Object.entries(usage)) if (value !== null) next[key] = value;
    this.#usage = next as UsageFields;
  }
}

/** The object each event type must carry, by type; other types carry none we read. */
const EVENT_PAYLOADS: Readonly<Record<string, string>> = {
  message_start: 'message',
  content_block_start: 'content_block',
  content_block_delta: 'delta',
  message_delta: 'delta',
};

/** Throws for an event that is not an object, or lacks the object its type must carry. */
function checkEvent(event: unknown): void {
  const payload = isRecord(event) ? EVENT_PAYLOADS[String(event.type)] : undefined;
  if (isRecord(event) && (payload === undefined || isRecord(event[payload]))) return;
  const what = isRecord(event)
    ? `a ${String(event.type)} event without its \`${payload}\``
    : 'an event that is not an object';
  throw malformedResponse('Anthropic', `the stream sent ${what}`, true);
}
