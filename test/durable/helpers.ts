import { defineTool, type LanguageModel } from 'statecraft';
import type { ModelRequest, ModelResponse } from 'statecraft/model';
import { z } from 'zod';
import type { JournalEntry } from '../../src/durable/journal-entry.js';
import type { JournalStore } from '../../src/durable/stores/journal-store.js';
import { memoryStore } from '../../src/durable/stores/memory-store.js';

/** What the model says at each step: tool calls (id, name, args) or a final text. */
export type Turn =
  | { readonly calls: readonly { id: string; name: string; arguments: unknown }[] }
  | { readonly text: string };

/**
 * A model whose answer depends only on its request (the number of assistant messages so far),
 * as a real model's would on the same prompt: a call issued again after a crash is answered
 * alike, whichever process makes it. Counts its calls.
 */
export function turnModel(turns: readonly Turn[]): LanguageModel & { calls: number } {
  const model = {
    specificationVersion: 'v1' as const,
    provider: 'test',
    modelId: 'turns',
    calls: 0,
    async generate(request: ModelRequest): Promise<ModelResponse> {
      model.calls++;
      const step = request.messages.toArray().filter((m) => m.role === 'assistant').length;
      const turn = turns[Math.min(step, turns.length - 1)] as Turn;
      const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
      if ('text' in turn) {
        return {
          content: [{ type: 'text', text: turn.text }],
          usage,
          finishReason: { unified: 'stop', raw: 'stop' },
        };
      }
      return {
        content: turn.calls.map((call) => ({
          type: 'tool-call' as const,
          toolCall: {
            id: call.id,
            name: call.name,
            arguments: call.arguments as Record<string, unknown>,
          },
        })),
        usage,
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
      };
    },
    async *stream(request: ModelRequest) {
      const response = await model.generate(request);
      for (const part of response.content) {
        if (part.type === 'text') yield { type: 'text-delta' as const, delta: part.text };
        else yield { type: 'tool-call' as const, toolCall: part.toolCall };
      }
      yield { type: 'usage' as const, usage: response.usage };
      yield { type: 'finish' as const, finishReason: response.finishReason };
    },
  };
  return model as LanguageModel & { calls: number };
}

/** One tool execution as a side-effect log sees it. */
export interface Execution {
  readonly callId: string;
  readonly key: string | undefined;
}

/** A tool with a side effect: every execution is logged with its call id and idempotency key. */
export function loggingTool(name: string, log: Execution[]) {
  return defineTool({
    name,
    description: `Records a ${name}.`,
    input: z.object({ value: z.string() }),
    execute: async ({ value }, { toolCallId, idempotencyKey }) => {
      log.push({ callId: toolCallId, key: idempotencyKey });
      return `${name}:${value}`;
    },
  });
}

/** A memory store holding the first `count` entries of `entries`: a crash after them. */
export async function storeWithPrefix(
  runId: string,
  entries: readonly JournalEntry[],
  count: number,
): Promise<JournalStore> {
  const store = memoryStore();
  for (const entry of entries.slice(0, count)) await store.append(runId, entry);
  return store;
}
