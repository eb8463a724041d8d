import type OpenAI from 'openai';
import { ModelError } from '../../../src/errors.js';
import { isRecord } from '../../../src/is-record.js';
import type { StreamPart } from '../../../src/model/language-model.js';
import { malformedResponse } from '../../../src/model/malformed-response.js';
import type { Usage } from '../../../src/usage.js';
import { toolCall } from './chat-response.js';
import { chatFinishReason } from './finish-reason.js';
import { chatUsage } from './usage.js';

type Chunk = OpenAI.Chat.ChatCompletionChunk;
type WireToolCallDelta = OpenAI.Chat.ChatCompletionChunk.Choice.Delta.ToolCall;

interface PendingCall {
  /** Our index: the order in which calls first appeared. */
  readonly index: number;
  id: string | undefined;
  name: string | undefined;
  argumentsText: string;
}

/**
 * Folds Chat Completions chunks into stream parts: `push` each chunk as it arrives, then
 * `end` once the SSE stream is over. Text and tool-call argument deltas pass through as they
 * come; each call is completed (a `tool-call` part) when the choice's `finish_reason`
 * arrives; `usage` (the last chunk, with `stream_options.include_usage`) and `finish` come at
 * the end. Pure state, no IO: the wire fixtures test it directly.
 */
export class ChatStreamMapper {
  readonly #calls = new Map<number, PendingCall>();
  #lastWireIndex: number | undefined;
  #finishRaw: string | undefined;
  #completed = false;
  #usage: Usage | undefined;

  push(chunk: Chunk): StreamPart[] {
    // A chunk of another shape is a corrupted stream, not one to read around.
    if (!isRecord(chunk) || (chunk.choices != null && !Array.isArray(chunk.choices))) {
      throw malformedResponse('OpenAI', 'the stream sent a chunk without a `choices` list', true);
    }
    if (chunk.usage) this.#usage = chatUsage(chunk.usage);
    // One choice is requested (no `n`): the first is the answer.
    const choice = chunk.choices?.[0];
    if (!isRecord(choice)) return [];
    const parts: StreamPart[] = [];
    const delta = choice.delta ?? {};
    if (delta.content) parts.push({ type: 'text-delta', delta: delta.content });
    if (delta.refusal) parts.push({ type: 'text-delta', delta: delta.refusal });
    for (const wire of delta.tool_calls ?? []) {
      const part = this.#toolCallDelta(wire);
      if (part) parts.push(part);
    }
    if (delta.function_call) {
      // The deprecated single-call form: one call, no id.
      const part = this.#toolCallDelta({ index: 0, function: delta.function_call });
      if (part) parts.push(part);
    }
    if (choice.finish_reason) {
      this.#finishRaw = choice.finish_reason;
      parts.push(...this.#completeCalls());
    }
    return parts;
  }

  /**
   * The closing parts. A stream that ended without a finish reason was cut off (a dropped
   * connection, a crashed server): that is a provider failure worth retrying, not an answer.
   */
  end(): StreamPart[] {
    if (this.#finishRaw === undefined) {
      const message = 'The OpenAI stream ended before its finish reason: the answer is incomplete';
      throw new ModelError(message, { retryable: true });
    }
    const parts = this.#completeCalls();
    if (this.#usage) parts.push({ type: 'usage', usage: this.#usage });
    parts.push({
      type: 'finish',
      finishReason: chatFinishReason(this.#finishRaw, this.#calls.size > 0),
    });
    return parts;
  }

  #toolCallDelta(wire: Partial<WireToolCallDelta>): StreamPart | undefined {
    const wireIndex = typeof wire.index === 'number' ? wire.index : this.#guessWireIndex(wire.id);
    this.#lastWireIndex = wireIndex;
    let call = this.#calls.get(wireIndex);
    const isNew = call === undefined;
    if (!call) {
      call = { index: this.#calls.size, id: undefined, name: undefined, argumentsText: '' };
      this.#calls.set(wireIndex, call);
    }
    // The id and name arrive on a call's first delta; servers that repeat them are not
    // concatenated.
    call.id ||= wire.id || undefined;
    call.name ||= wire.function?.name || undefined;
    const argumentsDelta = wire.function?.arguments ?? '';
    call.argumentsText += argumentsDelta;
    if (!isNew && !argumentsDelta) return undefined;
    return {
      type: 'tool-call-delta',
      index: call.index,
      ...(isNew && call.id && { id: call.id }),
      ...(isNew && call.name && { name: call.name }),
      argumentsDelta,
    };
  }

  /**
   * Some OpenAI-compatible servers omit a delta's `index`: a new id starts a new call (keyed
   * below 0, clear of real indexes), anything else continues the last call.
   */
  #guessWireIndex(id: string | undefined): number {
    for (const [wireIndex, call] of this.#calls) if (id && call.id === id) return wireIndex;
    if (id || this.#lastWireIndex === undefined) return -1 - this.#calls.size;
    return this.#lastWireIndex;
  }

  #completeCalls(): StreamPart[] {
    if (this.#completed) return [];
    this.#completed = true;
    return [...this.#calls.values()]
      .sort((a, b) => a.index - b.index)
      .map((call) => ({
        type: 'tool-call' as const,
        toolCall: toolCall(call.id, call.name ?? '', call.argumentsText),
      }));
  }
}
