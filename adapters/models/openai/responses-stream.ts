import type OpenAI from 'openai';
import { ModelError } from '../../../src/errors.js';
import { isRecord } from '../../../src/is-record.js';
import type { StreamPart } from '../../../src/model/language-model.js';
import { malformedResponse } from '../../../src/model/malformed-response.js';
import { toolCall } from './chat-response.js';
import { responseFailure } from './errors.js';
import { responsesFinishReason } from './finish-reason.js';
import { responsesUsage } from './usage.js';

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;
type FunctionCallItem = OpenAI.Responses.ResponseFunctionToolCall;

interface PendingCall {
  readonly index: number;
  argumentsText: string;
  done: boolean;
}

/**
 * Folds Responses API stream events into stream parts: `push` each event, then `end` when
 * the stream is over. A function call opens with `response.output_item.added` (its
 * `call_id` and name), grows with `response.function_call_arguments.delta`, and is complete
 * at `response.output_item.done`; `response.completed` (or `.incomplete`) carries the usage
 * and the status the finish reason comes from. `response.failed` and `error` events throw a
 * ModelError. Pure state, no IO.
 */
export class ResponsesStreamMapper {
  /** Calls by output item id. */
  readonly #calls = new Map<string, PendingCall>();
  #final: OpenAI.Responses.Response | undefined;

  push(event: StreamEvent): StreamPart[] {
    if (!isRecord(event)) throw malformedEvent('an event that is not an object');
    switch (event.type) {
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        return event.delta ? [{ type: 'text-delta', delta: event.delta }] : [];
      case 'response.output_item.added':
        return isRecord(event.item) && event.item.type === 'function_call'
          ? [this.#open(event.item)]
          : [];
      case 'response.function_call_arguments.delta': {
        const call = this.#calls.get(event.item_id);
        if (!call || !event.delta) return [];
        call.argumentsText += event.delta;
        return [{ type: 'tool-call-delta', index: call.index, argumentsDelta: event.delta }];
      }
      case 'response.output_item.done':
        return isRecord(event.item) && event.item.type === 'function_call'
          ? this.#complete(event.item)
          : [];
      case 'response.completed':
      case 'response.incomplete': {
        if (!isRecord(event.response) || !Array.isArray(event.response.output ?? [])) {
          throw malformedEvent(`a ${event.type} event without its response`);
        }
        this.#final = event.response;
        // Calls the stream never closed with `output_item.done` are completed from the
        // final output, so none is lost.
        const parts: StreamPart[] = [];
        for (const item of event.response.output ?? []) {
          if (item.type === 'function_call') parts.push(...this.#complete(item));
        }
        return parts;
      }
      case 'response.failed':
        throw responseFailure(event.response?.error);
      case 'error':
        throw responseFailure(event);
      default:
        return [];
    }
  }

  /** `usage` and `finish`; throws when the stream ended before the response did. */
  end(): StreamPart[] {
    const final = this.#final;
    if (!final) {
      throw new ModelError(
        'The OpenAI response stream ended before response.completed: the answer is incomplete',
        { retryable: true },
      );
    }
    return [
      { type: 'usage', usage: responsesUsage(final.usage) },
      { type: 'finish', finishReason: responsesFinishReason(final, this.#calls.size > 0) },
    ];
  }

  #open(item: FunctionCallItem): StreamPart {
    const call: PendingCall = {
      index: this.#calls.size,
      argumentsText: item.arguments ?? '',
      done: false,
    };
    this.#calls.set(item.id ?? item.call_id, call);
    return {
      type: 'tool-call-delta',
      index: call.index,
      id: item.call_id,
      name: item.name,
      argumentsDelta: call.argumentsText,
    };
  }

  #complete(item: FunctionCallItem): StreamPart[] {
    const key = item.id ?? item.call_id;
    const parts: StreamPart[] = [];
    let call = this.#calls.get(key);
    if (!call) {
      parts.push(this.#open(item));
      call = this.#calls.get(key) as PendingCall;
    }
    if (call.done) return parts;
    call.done = true;
    // The item's own `arguments` is the whole text; the deltas are only its pieces.
    const text = item.arguments || call.argumentsText;
    parts.push({ type: 'tool-call', toolCall: toolCall(item.call_id, item.name, text) });
    return parts;
  }
}

function malformedEvent(what: string): ModelError {
  return malformedResponse('OpenAI', `the response stream sent ${what}`, true);
}
