// `statecraft/gemini`: the Gemini adapter on the official `@google/genai` SDK (an optional
// peer dependency). Only this entry loads the SDK; `import 'statecraft'` never does.

export { type CallMemo, CallMemory } from '../adapters/models/gemini/call-memory.js';
export { geminiError, isRetryableStatus } from '../adapters/models/gemini/errors.js';
export {
  geminiBlockedPrompt,
  geminiFinishReason,
} from '../adapters/models/gemini/finish-reason.js';
export {
  type GeminiParams,
  type GeminiRequestSettings,
  geminiContents,
  geminiRequest,
  geminiToolConfig,
  geminiTools,
  SKIP_THOUGHT_SIGNATURE,
} from '../adapters/models/gemini/request.js';
export {
  type GeminiMappedCall,
  type GeminiMappedResponse,
  type GeminiResponseData,
  geminiMalformedCall,
  geminiResponse,
  geminiToolCall,
  MALFORMED_CALL_NAME,
} from '../adapters/models/gemini/response.js';
export { GeminiStreamMapper } from '../adapters/models/gemini/stream.js';
export { geminiUsage } from '../adapters/models/gemini/usage.js';
export {
  GeminiModel,
  type GeminiModelOptions,
  type GeminiRetryOptions,
} from '../adapters/models/gemini.js';
