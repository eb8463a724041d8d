import type { StreamPart } from '../../../src/model/language-model.js';
import { malformedResponse } from '../../../src/model/malformed-response.js';
import { finishReason, specUsage, toolInput } from './response.js';
import type { SpecStreamPart } from './spec.js';

// The AI SDK's stream parts as ours. Tool input arrives as `tool-input-start/delta/end` keyed
// by the call's id, then one complete `tool-call`: each id gets the next `index` on its first
// appearance, so the deltas of one call share it whatever order providers interleave them in
// (openai-compatible closes text after the tool input). An `error` part is handed to the
// caller to throw; everything else (stream-start, text/reasoning start and end, reasoning,
// sources, files, custom, ping, raw) carries nothing a StreamPart has.

export type MappedPart =
  | { readonly kind: 'parts'; readonly parts: readonly StreamPart[] }
  | { readonly kind: 'error'; readonly error: unknown };

const NONE: MappedPart = { kind: 'parts', parts: [] };

export class AiSdkStreamMapper {
  readonly #indexes = new Map<string, number>();
  /** Provider-executed calls: their input is not ours to run. */
  readonly #providerCalls = new Set<string>();
  #finished = false;
  /** Whether anything but the stream's opening and its finish arrived. */
  #answered = false;
  readonly #label: string;

  /** `label` names the model in errors. */
  constructor(label: string) {
    this.#label = label;
  }

  get finished(): boolean {
    return this.#finished;
  }

  /** The error for a stream that ended before its `finish` part. */
  endedEarly(): Error {
    return malformedResponse(this.#label, 'the stream ended before it said it had finished', true);
  }

  push(part: SpecStreamPart): MappedPart {
    switch (part.type) {
      case 'stream-start':
        return NONE;
      case 'error':
        return { kind: 'error', error: (part as { error: unknown }).error };
      case 'finish': {
        const { usage, finishReason: reason } = part as Extract<SpecStreamPart, { type: 'finish' }>;
        this.#finished = true;
        // A finish with no answer and no reason from the provider: what arrived was not an
        // answer (a stream that ended at once, its events lost), whatever the provider's
        // mapping made of it.
        if (!this.#answered && reason?.raw === undefined) {
          return {
            kind: 'error',
            error: malformedResponse(this.#label, 'the stream ended without an answer', true),
          };
        }
        return {
          kind: 'parts',
          parts: [
            { type: 'usage', usage: specUsage(usage) },
            { type: 'finish', finishReason: finishReason(reason) },
          ],
        };
      }
    }
    this.#answered = true;
    switch (part.type) {
      case 'text-delta': {
        const { delta } = part as Extract<SpecStreamPart, { type: 'text-delta' }>;
        return delta ? { kind: 'parts', parts: [{ type: 'text-delta', delta }] } : NONE;
      }
      case 'tool-input-start': {
        const start = part as Extract<SpecStreamPart, { type: 'tool-input-start' }>;
        if (start.providerExecuted) {
          this.#providerCalls.add(start.id);
          return NONE;
        }
        return {
          kind: 'parts',
          parts: [
            {
              type: 'tool-call-delta',
              index: this.#index(start.id),
              id: start.id,
              name: start.toolName,
              argumentsDelta: '',
            },
          ],
        };
      }
      case 'tool-input-delta': {
        const { id, delta } = part as Extract<SpecStreamPart, { type: 'tool-input-delta' }>;
        if (this.#providerCalls.has(id) || !delta) return NONE;
        return {
          kind: 'parts',
          parts: [{ type: 'tool-call-delta', index: this.#index(id), argumentsDelta: delta }],
        };
      }
      case 'tool-call': {
        const call = part as Extract<SpecStreamPart, { type: 'tool-call' }>;
        if (call.providerExecuted || this.#providerCalls.has(call.toolCallId)) return NONE;
        this.#index(call.toolCallId);
        return {
          kind: 'parts',
          parts: [
            {
              type: 'tool-call',
              toolCall: { id: call.toolCallId, name: call.toolName, ...toolInput(call.input) },
            },
          ],
        };
      }
      default:
        return NONE;
    }
  }

  #index(id: string): number {
    let index = this.#indexes.get(id);
    if (index === undefined) {
      index = this.#indexes.size;
      this.#indexes.set(id, index);
    }
    return index;
  }
}
