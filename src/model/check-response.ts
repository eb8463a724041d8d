import { ModelError } from '../errors.js';
import { isRecord } from '../is-record.js';
import { jsonSafeOutput } from '../json-safe.js';
import type { Usage } from '../usage.js';
import {
  type ContentPart,
  type FinishReason,
  type ModelResponse,
  UNIFIED_FINISH_REASONS,
} from './language-model.js';
import { describeValue } from './malformed-response.js';

// The check every model response passes before a runtime trusts it (SPEC Q3), whichever
// LanguageModel produced it: the adapters check their wire formats themselves, but a user's
// own model is checked only here.

const UNIFIED_REASONS: readonly string[] = UNIFIED_FINISH_REASONS;

/**
 * `response` as a valid ModelResponse, or a ModelError (not retryable: the same model code
 * will answer the same way) naming what is wrong, with `source` (e.g. `model 'gpt-4.1'`) as
 * where it came from. Refused: a response that is not an object, `content` that is not an
 * array, a part that is not `text` with a string or `tool-call` with a named call.
 * Corrected: a missing or partial `usage` (missing or invalid counters count 0, `totalTokens`
 * is their sum), a missing `finishReason` (`tool-calls` when the content calls tools, else
 * `stop`), a bare unified reason string, or an unknown unified reason (`other`, the word kept
 * as `raw`). The input is never mutated: a corrected copy is returned, or the input itself
 * when it needed no correction.
 */
export function checkModelResponse(response: unknown, source: string): ModelResponse {
  if (!isRecord(response)) {
    throw invalid(source, `returned ${describeValue(response)} instead of a response object`);
  }
  const { content } = response;
  if (!Array.isArray(content)) {
    throw invalid(
      source,
      `returned a response whose \`content\` is ${describeValue(content)}, not an array of parts`,
    );
  }
  let parts = content as readonly ContentPart[];
  for (const [index, part] of content.entries()) {
    const checked = checkedPart(part, index, source);
    if (checked !== part) {
      if (parts === content) parts = [...parts];
      (parts as ContentPart[])[index] = checked;
    }
  }
  const usage = checkedUsage(response.usage);
  const finishReason = checkedFinishReason(response.finishReason, parts);
  const meta = isRecord(response.response) ? response.response : undefined;
  if (
    parts === content &&
    usage === response.usage &&
    finishReason === response.finishReason &&
    meta === response.response
  ) {
    return response as unknown as ModelResponse;
  }
  return { content: parts, usage, finishReason, ...(meta && { response: meta }) };
}

/** The part as given when valid, a corrected copy (tool-call arguments JSON can carry), or a ModelError. */
function checkedPart(part: unknown, index: number, source: string): ContentPart {
  const where = `content[${index}]`;
  if (!isRecord(part)) throw invalid(source, `returned ${describeValue(part)} as ${where}`);
  if (part.type === 'text') {
    if (typeof part.text !== 'string') {
      throw invalid(
        source,
        `returned a text part (${where}) whose \`text\` is ${describeValue(part.text)}`,
      );
    }
    return part as unknown as ContentPart;
  }
  if (part.type === 'tool-call') {
    const call = part.toolCall;
    if (!isRecord(call)) {
      throw invalid(source, `returned a tool-call part (${where}) without a \`toolCall\` object`);
    }
    if (typeof call.name !== 'string' || call.name === '') {
      throw invalid(
        source,
        `returned a tool call (${where}) whose \`name\` is not a non-empty string`,
      );
    }
    // A missing id is given one by the runtime (SPEC A1); an id of another type is no id.
    if (call.id !== undefined && typeof call.id !== 'string') {
      throw invalid(source, `returned a tool call (${where}) whose \`id\` is not a string`);
    }
    // Arguments are data the model sent: made JSON-safe here, once, like tool output, so a
    // BigInt or a cycle from a custom model cannot break a request, a key or details().
    const args = jsonSafeOutput(call.arguments);
    return (args === call.arguments
      ? part
      : { ...part, toolCall: { ...call, arguments: args } }) as unknown as ContentPart;
  }
  throw invalid(
    source,
    `returned a part of unknown type ${JSON.stringify(part.type)} as ${where}; parts are 'text' or 'tool-call'`,
  );
}

/** The usage as given when it is complete and valid, else a copy with the gaps filled. */
function checkedUsage(given: unknown): Usage {
  const wire = isRecord(given) ? given : {};
  const inputTokens = tokenCount(wire.inputTokens);
  const outputTokens = tokenCount(wire.outputTokens);
  const total = tokenCount(wire.totalTokens, inputTokens + outputTokens);
  const usage: { -readonly [K in keyof Usage]: Usage[K] } = {
    inputTokens,
    outputTokens,
    totalTokens: total,
  };
  for (const key of ['cachedInputTokens', 'reasoningTokens'] as const) {
    if (wire[key] !== undefined) usage[key] = tokenCount(wire[key]);
  }
  const unchanged =
    isRecord(given) &&
    (Object.keys(usage) as (keyof Usage)[]).every((key) => given[key] === usage[key]);
  return unchanged ? (given as unknown as Usage) : usage;
}

function checkedFinishReason(given: unknown, content: readonly ContentPart[]): FinishReason {
  if (isRecord(given) && UNIFIED_REASONS.includes(given.unified as string)) {
    if (given.raw === undefined || typeof given.raw === 'string')
      return given as unknown as FinishReason;
    return { unified: given.unified as FinishReason['unified'], raw: undefined };
  }
  const word = typeof given === 'string' ? given : isRecord(given) ? given.unified : undefined;
  if (typeof word === 'string' && word !== '') {
    const unified = UNIFIED_REASONS.includes(word) ? (word as FinishReason['unified']) : 'other';
    return { unified, raw: word };
  }
  const callsTools = content.some((part) => part.type === 'tool-call');
  return { unified: callsTools ? 'tool-calls' : 'stop', raw: undefined };
}

function invalid(source: string, problem: string): ModelError {
  return new ModelError(`${source} ${problem}`, { retryable: false });
}

/** How a response's checks name the model it came from, e.g. `model 'gpt-4.1' (openai)`. */
export function modelSource(model: {
  readonly modelId?: unknown;
  readonly provider?: unknown;
}): string {
  return `model '${String(model.modelId)}' (${String(model.provider)})`;
}

/** A token count as a provider reported it: a finite number >= 0, else `fallback`. */
export function tokenCount(value: unknown, fallback = 0): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : fallback;
}
