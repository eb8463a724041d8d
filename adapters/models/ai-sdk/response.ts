import { parseToolArguments } from '../../../src/messages.js';
import {
  type ContentPart,
  type FinishReason,
  type ModelResponse,
  UNIFIED_FINISH_REASONS,
} from '../../../src/model/language-model.js';
import { type Usage, usage } from '../../../src/usage.js';
import type {
  SpecContent,
  SpecFinishReason,
  SpecGenerateResult,
  SpecResponseMetadata,
  SpecUsage,
} from './spec.js';

// An AI SDK result as a ModelResponse: text and tool calls (the spec's `input` is JSON text,
// parsed here), the nested token counts as Usage, the finish reason as it is (v4's
// `interrupted` is `other` here). Reasoning, sources, files and provider-executed tools have
// no place in a ModelResponse and are skipped.

export function generateResponse(result: SpecGenerateResult): ModelResponse {
  const content: ContentPart[] = [];
  for (const part of result.content ?? []) {
    const mapped = contentPart(part);
    if (mapped) content.push(mapped);
  }
  const response = responseMetadata(result.response);
  return {
    content,
    usage: specUsage(result.usage),
    finishReason: finishReason(result.finishReason),
    ...(response && { response }),
  };
}

function contentPart(part: SpecContent): ContentPart | undefined {
  if (part.type === 'text' && 'text' in part) return { type: 'text', text: part.text };
  if (part.type === 'tool-call' && 'toolCallId' in part && !part.providerExecuted) {
    return {
      type: 'tool-call',
      toolCall: { id: part.toolCallId, name: part.toolName, ...toolInput(part.input) },
    };
  }
  return undefined;
}

/** The spec's tool input is JSON text; a provider that hands over an object is taken at its word. */
export function toolInput(input: unknown): ReturnType<typeof parseToolArguments> {
  return typeof input === 'string' ? parseToolArguments(input) : { arguments: input ?? {} };
}

/**
 * The spec's nested counts as Usage. Totals are the provider's: Anthropic's input total
 * already counts cache reads and writes. A missing count is 0, as the other adapters do.
 */
export function specUsage(spec: SpecUsage | undefined): Usage {
  const cached = count(spec?.inputTokens?.cacheRead);
  const reasoning = count(spec?.outputTokens?.reasoning);
  return usage({
    inputTokens: count(spec?.inputTokens?.total) ?? 0,
    outputTokens: count(spec?.outputTokens?.total) ?? 0,
    ...(cached !== undefined && { cachedInputTokens: cached }),
    ...(reasoning !== undefined && { reasoningTokens: reasoning }),
  });
}

/** A token count, or undefined: what is not a number >= 0 must not poison a run's sums. */
function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}

const UNIFIED: ReadonlySet<string> = new Set(UNIFIED_FINISH_REASONS);

/** The spec's finish reason: its unified word when statecraft has it, else `other`. */
export function finishReason(spec: SpecFinishReason | string | undefined): FinishReason {
  // v2 (AI SDK 5) sent a bare string; not accepted as a model, but harmless to read.
  if (typeof spec === 'string') {
    return { unified: UNIFIED.has(spec) ? (spec as FinishReason['unified']) : 'other', raw: spec };
  }
  const unified = spec?.unified;
  return {
    unified:
      unified !== undefined && UNIFIED.has(unified)
        ? (unified as FinishReason['unified'])
        : 'other',
    raw: spec?.raw,
  };
}

export function responseMetadata(
  metadata: SpecResponseMetadata | undefined,
): ModelResponse['response'] {
  if (!metadata) return undefined;
  const { id, modelId } = metadata;
  if (id === undefined && modelId === undefined) return undefined;
  return { ...(id !== undefined && { id }), ...(modelId !== undefined && { modelId }) };
}
