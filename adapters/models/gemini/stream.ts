import type { Candidate, GenerateContentResponseUsageMetadata, Part } from '@google/genai';
import { ModelError } from '../../../src/errors.js';
import { isRecord } from '../../../src/is-record.js';
import type { StreamPart } from '../../../src/model/language-model.js';
import { malformedResponse } from '../../../src/model/malformed-response.js';
import type { CallMemo } from './call-memory.js';
import { geminiBlockedPrompt, geminiFinishReason } from './finish-reason.js';
import {
  type GeminiMappedCall,
  type GeminiResponseData,
  geminiMalformedCall,
  geminiToolCall,
  partText,
} from './response.js';
import { geminiUsage } from './usage.js';

/**
 * Folds the chunks of `generateContentStream` (each one a partial GenerateContentResponse)
 * into our stream parts. Text parts are deltas. Gemini sends each function call whole in
 * one chunk, never split, so each becomes one `tool-call-delta` carrying all its arguments
 * followed at once by its `tool-call`, and so does a call Gemini reports as malformed. Usage
 * and finish reason come with the last chunk (usage may come earlier too, growing): they are
 * emitted once, by `end()`, after everything else.
 */
export class GeminiStreamMapper {
  readonly #calls = new Map<string, CallMemo>();
  #callCount = 0;
  #finishReason: string | undefined;
  #blockReason: string | undefined;
  #usage: GenerateContentResponseUsageMetadata | undefined;

  /** The parts one chunk adds, in order. */
  push(chunk: GeminiResponseData): StreamPart[] {
    // A chunk of another shape is a corrupted stream, not one to read around.
    if (!isRecord(chunk) || (chunk.candidates != null && !Array.isArray(chunk.candidates))) {
      throw malformedResponse(
        'Gemini',
        'the stream sent a chunk without a `candidates` list',
        true,
      );
    }
    if (chunk.usageMetadata) this.#usage = chunk.usageMetadata;
    const first: unknown = chunk.candidates?.[0];
    const candidate = isRecord(first) ? (first as Candidate) : undefined;
    if (!candidate && chunk.promptFeedback?.blockReason) {
      this.#blockReason = chunk.promptFeedback.blockReason;
    }
    const parts: StreamPart[] = [];
    const wireParts: unknown = candidate?.content?.parts;
    for (const part of Array.isArray(wireParts) ? (wireParts as Part[]) : []) {
      if (typeof part !== 'object' || part === null || part.thought) continue;
      if (part.functionCall) {
        parts.push(...this.#call(geminiToolCall(part.functionCall, part.thoughtSignature)));
        continue;
      }
      const delta = partText(part);
      if (delta) parts.push({ type: 'text-delta', delta });
    }
    if (candidate?.finishReason) {
      this.#finishReason = candidate.finishReason;
      // Comes with the finish reason, in the last chunk: a failed call (see geminiMalformedCall).
      const malformed = geminiMalformedCall(candidate);
      if (malformed) parts.push(...this.#call(malformed));
    }
    return parts;
  }

  #call({ toolCall, argumentsText, memo }: GeminiMappedCall): StreamPart[] {
    this.#calls.set(toolCall.id, memo);
    return [
      {
        type: 'tool-call-delta',
        index: this.#callCount++,
        id: toolCall.id,
        name: toolCall.name,
        argumentsDelta: argumentsText,
      },
      { type: 'tool-call', toolCall },
    ];
  }

  /**
   * Usage and finish, once the stream is over. A stream that ended without a finish reason
   * was cut short (Gemini always sends one): that is an error, retryable, never an answer.
   */
  end(): StreamPart[] {
    let finishReason = this.#finishReason
      ? geminiFinishReason(this.#finishReason, this.#callCount > 0)
      : undefined;
    if (!finishReason && this.#blockReason) finishReason = geminiBlockedPrompt(this.#blockReason);
    if (!finishReason) {
      throw new ModelError('The Gemini stream ended before Gemini sent a finish reason', {
        retryable: true,
      });
    }
    return [
      { type: 'usage', usage: geminiUsage(this.#usage) },
      { type: 'finish', finishReason },
    ];
  }

  /** What to remember of each call seen so far, by its id (see CallMemory). */
  get calls(): ReadonlyMap<string, CallMemo> {
    return this.#calls;
  }
}
