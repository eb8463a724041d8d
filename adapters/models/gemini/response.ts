import type { Candidate, FunctionCall, GenerateContentResponse, Part } from '@google/genai';
import { isRecord } from '../../../src/is-record.js';
import { generateToolCallId, parseToolArguments, type ToolCall } from '../../../src/messages.js';
import type { ContentPart, ModelResponse } from '../../../src/model/language-model.js';
import { describeValue, malformedResponse } from '../../../src/model/malformed-response.js';
import type { CallMemo } from './call-memory.js';
import { geminiBlockedPrompt, geminiFinishReason } from './finish-reason.js';
import { geminiUsage } from './usage.js';

/** The fields of a `GenerateContentResponse` (SDK object or REST JSON) that we read. */
export type GeminiResponseData = Pick<
  GenerateContentResponse,
  'candidates' | 'usageMetadata' | 'promptFeedback' | 'responseId' | 'modelVersion'
>;

/** One call as ours, with its arguments as text (for a stream's delta) and its memo. */
export interface GeminiMappedCall {
  readonly toolCall: ToolCall;
  readonly argumentsText: string;
  readonly memo: CallMemo;
}

export interface GeminiMappedResponse {
  readonly response: ModelResponse;
  /** What to remember of each call, by its id (see CallMemory). */
  readonly calls: ReadonlyMap<string, CallMemo>;
}

/**
 * A `generateContent` response as ours: the first candidate's text and function calls, in
 * the order Gemini produced them. Thought summaries (`thought: true`) are not the answer and
 * are left out; other part kinds (inline data, code execution) are not ours to carry. A call
 * Gemini could not produce (`MALFORMED_FUNCTION_CALL`) comes last, as a failed call (see
 * geminiMalformedCall). A response with neither a candidate nor a blocked prompt is
 * malformed (see firstCandidate); missing `usageMetadata` counts as zero.
 */
export function geminiResponse(raw: GeminiResponseData): GeminiMappedResponse {
  const candidate = firstCandidate(raw);
  const content: ContentPart[] = [];
  const calls = new Map<string, CallMemo>();
  for (const part of candidate?.content?.parts ?? []) {
    if (part.thought) continue;
    if (part.functionCall) {
      const { toolCall, memo } = geminiToolCall(part.functionCall, part.thoughtSignature);
      content.push({ type: 'tool-call', toolCall });
      calls.set(toolCall.id, memo);
      continue;
    }
    const text = partText(part);
    if (!text) continue;
    const last = content.at(-1);
    if (last?.type === 'text')
      content[content.length - 1] = { type: 'text', text: last.text + text };
    else content.push({ type: 'text', text });
  }
  const malformed = candidate && geminiMalformedCall(candidate);
  if (malformed) {
    content.push({ type: 'tool-call', toolCall: malformed.toolCall });
    calls.set(malformed.toolCall.id, malformed.memo);
  }
  const blockReason = raw.promptFeedback?.blockReason;
  const finishReason =
    !candidate && blockReason
      ? geminiBlockedPrompt(blockReason)
      : geminiFinishReason(candidate?.finishReason, calls.size > 0);
  return {
    response: {
      content,
      usage: geminiUsage(raw.usageMetadata),
      finishReason,
      ...responseMeta(raw),
    },
    calls,
  };
}

/**
 * The first candidate, checked: a response must be an object with a `candidates` list whose
 * first is an object, unless the prompt was blocked (`promptFeedback.blockReason`, no
 * candidates). Anything else is malformed: retryable when not an object at all (a gateway's
 * answer, not the API's), not when the API's shape is wrong (the same server answers so
 * again).
 */
function firstCandidate(raw: unknown): Candidate | undefined {
  if (!isRecord(raw)) {
    throw malformedResponse('Gemini', `the response is ${describeValue(raw)}, not an object`, true);
  }
  const { candidates, promptFeedback } = raw as GeminiResponseData;
  const blocked = isRecord(promptFeedback) && Boolean(promptFeedback.blockReason);
  if (candidates === undefined && blocked) return undefined;
  if (!Array.isArray(candidates) || candidates.length === 0) {
    if (blocked) return undefined;
    const problem = `the response has no \`candidates\` (got ${describeValue(candidates)}) and no blocked prompt`;
    throw malformedResponse('Gemini', problem, false);
  }
  const [candidate] = candidates;
  if (!isRecord(candidate)) {
    throw malformedResponse('Gemini', 'the first candidate is not an object', false);
  }
  if (candidate.content !== undefined && !isRecord(candidate.content)) {
    throw malformedResponse('Gemini', "the first candidate's `content` is not an object", false);
  }
  const parts = candidate.content?.parts;
  if (parts !== undefined && (!Array.isArray(parts) || !parts.every(isRecord))) {
    throw malformedResponse(
      'Gemini',
      "the first candidate's `content.parts` is not a list of parts",
      false,
    );
  }
  return candidate;
}

/** The text of a part that is answer text (not a thought summary), else ''. */
export function partText(part: Part): string {
  return !part.thought && typeof part.text === 'string' ? part.text : '';
}

/**
 * One Gemini function call as ours. Gemini often sends no id: one is generated. `args` is a
 * JSON object on the wire and is kept as it is. Gemini itself never sends it as text (a call
 * it cannot parse ends the turn with MALFORMED_FUNCTION_CALL instead), but a proxy speaking
 * its format might: text is parsed, and text that is not JSON is kept with `argumentsError`
 * for the tool runner to answer.
 */
export function geminiToolCall(call: FunctionCall, thoughtSignature?: string): GeminiMappedCall {
  const args: unknown = call.args;
  const argumentsText = typeof args === 'string' ? args : JSON.stringify(args ?? {});
  const parsed = typeof args === 'string' ? parseToolArguments(args) : { arguments: args ?? {} };
  const toolCall: ToolCall = {
    id: call.id || generateToolCallId(),
    name: call.name ?? '',
    ...parsed,
  };
  const memo: CallMemo = {
    providerId: Boolean(call.id),
    ...(thoughtSignature !== undefined && { thoughtSignature }),
  };
  return { toolCall, argumentsText, memo };
}

/** The name a malformed call gets when Gemini's message names no function. */
export const MALFORMED_CALL_NAME = 'malformed_call';

/**
 * When the model wrote a function call Gemini could not parse, the candidate ends with
 * `MALFORMED_FUNCTION_CALL`, usually without content, the model's text being in
 * `finishMessage` (`Malformed function call: print(default_api.get_weather(city=...))`).
 * Left as it is, that turn is an empty answer and a chain would end on it "successfully".
 * Instead it becomes a call with `argumentsError`: the tool runner answers it with a failed
 * result, so the model sees its mistake and can try again, as with any bad arguments.
 *
 * `finishMessage` may be missing: @google/genai (2.x) drops it from Gemini API responses,
 * keeping it only from Vertex AI. The call is then named MALFORMED_CALL_NAME, and the
 * runner's "unknown tool" answer is what tells the model its call failed.
 */
export function geminiMalformedCall(
  candidate: Pick<Candidate, 'finishReason' | 'finishMessage'>,
): GeminiMappedCall | undefined {
  if (candidate.finishReason !== 'MALFORMED_FUNCTION_CALL') return undefined;
  const message = candidate.finishMessage ?? '';
  const toolCall: ToolCall = {
    id: generateToolCallId(),
    name: malformedCallName(message) ?? MALFORMED_CALL_NAME,
    arguments: message,
    argumentsError: message
      ? `Gemini reported MALFORMED_FUNCTION_CALL: the call could not be parsed ("${message}")`
      : 'Gemini reported MALFORMED_FUNCTION_CALL: the call could not be parsed (Gemini gave no details)',
  };
  return { toolCall, argumentsText: message, memo: { providerId: false } };
}

/**
 * The function a malformed call tried, from Gemini's wording of it, which comes in two forms:
 * Python-like `print(default_api.name(...))` and `call:default_api:name{...}` (or
 * `call:name{...}` for a built-in tool). Undefined when it names none (e.g. "Function call is
 * empty").
 */
function malformedCallName(message: string): string | undefined {
  // The name stops at a dot, so that `print(default_api.get_weather(` gives `get_weather`.
  const match = /(?:\bdefault_api[.:]|\bcall:|\bprint\(\s*)([A-Za-z_][\w-]*)\s*[({]/.exec(message);
  return match?.[1];
}

export function responseMeta(raw: GeminiResponseData): Pick<ModelResponse, 'response'> {
  const meta = {
    ...(raw.responseId && { id: raw.responseId }),
    ...(raw.modelVersion && { modelId: raw.modelVersion }),
  };
  return Object.keys(meta).length ? { response: meta } : {};
}
