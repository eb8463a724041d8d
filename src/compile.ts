// `statecraft/compile`: the compile pipeline that turns a transcript and a turn's mutations
// into the next model request. Every machine calls it before every model call.

export { DEFAULT_TOOL_RESPONSE_INSTRUCTIONS } from './chain/options.js';
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
  type PromptTool,
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
  type SystemNoteMutation,
  type ToolCancelledMutation,
  type ToolResultMutation,
  type UserMessageMutation,
} from './compile/mutations.js';
export { stripBlocks } from './compile/prompt-blocks.js';
export {
  type ReducedTurnContext,
  type ReduceOptions,
  reduceTurnContext,
  validatedTranscript,
} from './compile/reduce-turn-context.js';
export {
  placeSystemMessage,
  resolveSystemPrompt,
  type SystemPromptSources,
} from './compile/system-prompt.js';
export { type PendingCalls, pendingToolCalls } from './compile/tool-linkage.js';
export { assistantRequestText, truncationMarker } from './compile/truncation-marker.js';
