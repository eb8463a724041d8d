// Public API of statecraft. Explicit named exports only: what is not listed here is internal.

export {
  LocalToolRegistry,
  type RunToolOptions,
  runTool,
} from '../adapters/tools/local-registry.js';
export {
  type CompiledTurn,
  type CompileTurnInput,
  compileTurn,
  type MutationLog,
  replayMutationLog,
} from './compile/compile-turn.js';
export {
  type CompiledTurnContext,
  convertToLlmRequest,
  NATIVE_TOOL_CALLING_PRINCIPLE,
  type PromptContract,
} from './compile/convert-to-llm-request.js';
export { type Experience, renderExperiences, type SelfRefSnapshot } from './compile/experiences.js';
export {
  type AssistantMessageMutation,
  type AssistantTruncatedMutation,
  type ContextMutation,
  type ContextReplaceMutation,
  type ContextSummaryMutation,
  type ExperienceForgetMutation,
  type ExperienceMutation,
  type ExperienceRememberMutation,
  mutate,
  type ToolCancelledMutation,
  type ToolResultMutation,
  type UserMessageMutation,
} from './compile/mutations.js';
export { stripBlocks } from './compile/prompt-blocks.js';
export {
  type ReducedTurnContext,
  reduceTurnContext,
  validatedTranscript,
} from './compile/reduce-turn-context.js';
export {
  placeSystemMessage,
  resolveSystemPrompt,
  type SystemPromptSources,
} from './compile/system-prompt.js';
export { type PendingCalls, pendingToolCalls } from './compile/tool-linkage.js';
export {
  AbortError,
  ChainError,
  ConfigError,
  ModelError,
  type ModelErrorOptions,
  type PartialResult,
  ProtocolError,
  StatecraftError,
  type StatecraftErrorOptions,
  TokenLimitError,
  TranscriptError,
} from './errors.js';
export {
  type AssistantMessage,
  assistantMessage,
  ensureToolCallId,
  generateToolCallId,
  type Message,
  parseToolArguments,
  type SystemMessage,
  systemMessage,
  type ToolCall,
  type ToolResult,
  type ToolResultMessage,
  toolResultMessage,
  toolResultText,
  type UserMessage,
  userMessage,
} from './messages.js';
export { collectStream, ResponseCollector } from './model/collect-stream.js';
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
export {
  type AnyTool,
  defineTool,
  type Tool,
  type ToolContext,
  type ToolDefinition,
} from './tools/define-tool.js';
export { Transcript } from './transcript.js';
export { addUsage, type Usage, usage, ZERO_USAGE } from './usage.js';
