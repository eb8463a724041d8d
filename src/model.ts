// `statecraft/model`: for model adapter authors, the LanguageModel contract and the helpers
// every adapter uses (stream collection, response checks, tool-call ids, usage, JSON).

export {
  type Attachment,
  attachmentSize,
  attachmentUrl,
  base64OfBytes,
  bytesOfBase64,
  isImage,
} from './attachments.js';
export {
  ensureToolCallId,
  generateToolCallId,
  parseToolArguments,
  toolResultText,
} from './messages.js';
export { checkModelResponse } from './model/check-response.js';
export { collectStream, ResponseCollector } from './model/collect-stream.js';
export { DEFAULT_IDLE_TIMEOUT_MS } from './model/idle-watch.js';
export {
  type CallOptions,
  type ContentPart,
  type FinishReason,
  type JsonSchema,
  LANGUAGE_MODEL_VERSION,
  type LanguageModel,
  type ModelRequest,
  type ModelResponse,
  type ResponseFormat,
  responseText,
  responseToolCalls,
  type StreamPart,
  type ToolChoice,
  type ToolSpec,
} from './model/language-model.js';
export { toJsonSchema } from './schema.js';
export { extractJson, jsonCandidates } from './structured/extract-json.js';
export { addUsage, type Usage, usage, ZERO_USAGE } from './usage.js';
