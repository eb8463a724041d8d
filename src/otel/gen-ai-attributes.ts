import type { FinishReason } from '../model/language-model.js';

// The OpenTelemetry GenAI semantic conventions statecraft follows (semantic-conventions
// v1.37+, where `gen_ai.provider.name` replaced `gen_ai.system`, and their continuation in
// open-telemetry/semantic-conventions-genai; still "Development" status). Names are spelled out
// here rather than imported from @opentelemetry/semantic-conventions: the library depends on
// @opentelemetry/api only.

export const ATTR = {
  operationName: 'gen_ai.operation.name',
  providerName: 'gen_ai.provider.name',
  agentName: 'gen_ai.agent.name',
  workflowName: 'gen_ai.workflow.name',
  requestModel: 'gen_ai.request.model',
  requestTemperature: 'gen_ai.request.temperature',
  requestTopP: 'gen_ai.request.top_p',
  requestMaxTokens: 'gen_ai.request.max_tokens',
  requestStopSequences: 'gen_ai.request.stop_sequences',
  requestSeed: 'gen_ai.request.seed',
  requestStream: 'gen_ai.request.stream',
  conversationId: 'gen_ai.conversation.id',
  outputType: 'gen_ai.output.type',
  responseModel: 'gen_ai.response.model',
  responseId: 'gen_ai.response.id',
  responseFinishReasons: 'gen_ai.response.finish_reasons',
  usageInputTokens: 'gen_ai.usage.input_tokens',
  usageOutputTokens: 'gen_ai.usage.output_tokens',
  usageCacheReadInputTokens: 'gen_ai.usage.cache_read.input_tokens',
  usageReasoningOutputTokens: 'gen_ai.usage.reasoning.output_tokens',
  toolName: 'gen_ai.tool.name',
  toolCallId: 'gen_ai.tool.call.id',
  toolType: 'gen_ai.tool.type',
  toolCallArguments: 'gen_ai.tool.call.arguments',
  toolCallResult: 'gen_ai.tool.call.result',
  inputMessages: 'gen_ai.input.messages',
  outputMessages: 'gen_ai.output.messages',
  errorType: 'error.type',
  // statecraft's own, for what the conventions have no name for.
  runId: 'statecraft.run.id',
  runKind: 'statecraft.run.kind',
  modelCallPurpose: 'statecraft.model_call.purpose',
  toolExecutor: 'statecraft.tool.executor',
  approvalApproved: 'statecraft.approval.approved',
  approvalReason: 'statecraft.approval.reason',
  approvalTimedOut: 'statecraft.approval.timed_out',
  /** US dollars a model call or run cost, priced with the chain's `prices` (SPEC H3). */
  costUsd: 'statecraft.cost.usd',
  /**
   * Images and files a run's input, a model call's messages or a tool's result carry: how
   * many, and their inline bytes (never the bytes themselves). Set only when there are some.
   */
  attachmentsCount: 'statecraft.attachments.count',
  attachmentsBytes: 'statecraft.attachments.bytes',
} as const;

/** Our adapters' provider names as the conventions' well-known `gen_ai.provider.name` values. */
export function providerName(provider: string): string {
  switch (provider) {
    case 'gemini':
      // The adapter reaches AI Studio or Vertex AI: "any Google generative AI endpoint".
      return 'gcp.gen_ai';
    case 'xai':
      return 'x_ai';
    case 'mistral':
      return 'mistral_ai';
    default:
      return provider;
  }
}

/**
 * A finish reason as the conventions spell them (`stop`, `length`, `tool_call`,
 * `content_filter`, `error`). For `other`, the provider's raw reason when it is a short
 * identifier (`pause_turn`, `RECITATION`, lowercased), else `other`: free text such as the tool
 * loop's "decided on nextAction: response; …" would make `gen_ai.response.finish_reasons` a
 * high-cardinality attribute.
 */
export function finishReason(reason: FinishReason): string {
  switch (reason.unified) {
    case 'tool-calls':
      return 'tool_call';
    case 'content-filter':
      return 'content_filter';
    case 'other':
      return reason.raw !== undefined && REASON_TOKEN.test(reason.raw)
        ? reason.raw.toLowerCase()
        : 'other';
    default:
      return reason.unified;
  }
}

/** A provider's enum-like reason word: letters, digits, `_`, `-`, `.`, at most 32 of them. */
const REASON_TOKEN = /^[A-Za-z][\w.-]{0,31}$/;

/**
 * `error.type`: a statecraft error's stable `code` (e.g. `MODEL_ERROR`), else the error's
 * class name, else `_OTHER`: low-cardinality, as the conventions ask.
 */
export function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    const { code } = error as { code?: unknown };
    if (typeof code === 'string' && code) return code;
    if (error instanceof Error && error.name) return error.name;
  }
  return '_OTHER';
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
