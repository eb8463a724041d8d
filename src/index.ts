// Public API of statecraft. Explicit named exports only: what is not listed here is internal.

export {
  LocalToolRegistry,
  type RunToolOptions,
  runTool,
} from '../adapters/tools/local-registry.js';
export {
  type CallModelInput,
  type ChainConfig,
  type ChainContext,
  type ChainEffectRequest,
  type ChainEvent,
  type ChainFailure,
  type ChainInput,
  type ChainMachine,
  type ChainOutput,
  type ChainStep,
  type ChainWarning,
  chainMachine,
  type ExecuteToolsInput,
  type ExecuteToolsOutput,
  type StreamBatch,
  type ValidateResultInput,
  type ValidationOutcome,
} from '../machines/chain.js';
export { callKey, isDuplicateCall, warningPoint } from '../machines/chain-policy.js';
export {
  BUDGET_STOP_MESSAGE,
  EARLY_STOP_MESSAGE,
  type EarlyStop,
  type EarlyStopping,
  type IntermediateStep,
  type StopLimit,
} from '../machines/early-stopping.js';
export {
  type ExecuteEvent,
  type ExecuteInput,
  type PlannedRound,
  type PlanOutcome,
  type RespondInput,
  type ResponseOutcome,
  type StopReason,
  type ToolLoopConfig,
  type ToolLoopContext,
  type ToolLoopEvent,
  type ToolLoopFailure,
  type ToolLoopInput,
  type ToolLoopOutput,
  toolLoopMachine,
} from '../machines/tool-loop.js';
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
export { costOf, type ModelPrice, type ModelPrices } from './cost.js';
export {
  type Approvals,
  type ApprovalsOptions,
  approvals,
  type PendingApproval,
} from './durable/approvals.js';
export {
  JOURNAL_FORMAT_VERSION,
  type JournalEntry,
  type RunStatus,
} from './durable/journal-entry.js';
export { JournalError, type JournalErrorReason } from './durable/journal-error.js';
export { JournalMismatchError } from './durable/journal-mismatch.js';
export { type FileJournalStore, fileStore } from './durable/stores/file-store.js';
export type {
  JournalStore,
  RunListing,
  UnreadableRun,
} from './durable/stores/journal-store.js';
export { memoryStore } from './durable/stores/memory-store.js';
export type { StoreOptions } from './durable/stores/store-options.js';
export {
  AbortError,
  type BudgetErrorOptions,
  ChainError,
  ConfigError,
  CostLimitError,
  InputError,
  ModelError,
  type ModelErrorOptions,
  type OptionProblem,
  type PartialResult,
  ProtocolError,
  StatecraftError,
  type StatecraftErrorOptions,
  TimeoutError,
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
export { inspectRuns, type RunInspector } from './observe/inspect-runs.js';
export { observeRuns } from './observe/registry.js';
export type {
  ObservedApproval,
  ObservedModelCall,
  ObservedRun,
  ObservedToolCall,
  RunObserver,
} from './observe/run-observer.js';
export type { BatchOptions, BatchResult } from './runnable/batch.js';
export { fromChain } from './runnable/from-chain.js';
export { fromFunction } from './runnable/from-function.js';
export { fromModel, type ModelInput, type ModelSettings } from './runnable/from-model.js';
export { fromToolLoop } from './runnable/from-tool-loop.js';
export {
  InMemoryChatMemory,
  type InMemoryChatMemoryOptions,
  type Memory,
  type MemoryTurn,
  withMemory,
} from './runnable/memory.js';
export { type ParallelOutput, parallel } from './runnable/parallel.js';
export type {
  IntermediateResultsRef,
  RunCallbacks,
  RunConfig,
  RunInfo,
  RunKind,
} from './runnable/run-config.js';
export type { InnerRunEvent, RunEvent, RunEventBody } from './runnable/run-events.js';
export {
  createRunnable,
  type Invocable,
  isRunnable,
  type RetryOptions,
  type RunContext,
  type Runnable,
  type RunnableDefinition,
  type RunnableFunction,
  type RunnableLike,
} from './runnable/runnable.js';
export { pipe, sequence } from './runnable/sequence.js';
export { runnable } from './runnable/to-runnable.js';
export type { CommonInput, InputOf, OutputOf } from './runnable/types.js';
export {
  type ChainOptions,
  DEFAULT_TOOL_RESPONSE_INSTRUCTIONS,
  type ValidateResult,
} from './runtime/chain-options.js';
export {
  type Chain,
  type ChainPartialResult,
  type ChainResult,
  type ChainRunInput,
  type ChainRunOptions,
  type ChainStreamEvent,
  createChain,
} from './runtime/create-chain.js';
export {
  createToolLoop,
  type ToolLoop,
  type ToolLoopPartialResult,
  type ToolLoopResult,
  type ToolLoopRunInput,
  type ToolLoopRunOptions,
  type ToolLoopStreamEvent,
} from './runtime/create-tool-loop.js';
export type { DurableRunOptions } from './runtime/durable-run.js';
export {
  type ApprovedCall,
  formatRunDetails,
  type ModelCallDetail,
  type RunDetails,
  type ToolCallDetail,
} from './runtime/run-details.js';
export { STOP_STREAM_TOOL } from './runtime/run-tools.js';
export type { Planner, Responder, ToolLoopOptions } from './runtime/tool-loop-options.js';
export { toJsonSchema } from './schema.js';
export { extractJson, jsonCandidates } from './structured/extract-json.js';
export type { OutputSchema, StandardSchema } from './structured/output-schema.js';
export {
  type Convergence,
  converge,
  QUOTE_SOURCES_INSTRUCTION,
  toActionResults,
} from './tool-loop/converge.js';
export {
  type NextAction,
  normalizePlan,
  type Plan,
  type ToolCommand,
} from './tool-loop/plan.js';
export {
  type PlannerContext,
  plannerMessages,
  planResponseFormat,
} from './tool-loop/planner-context.js';
export type { ToolExecutionRecord } from './tool-loop/records.js';
export {
  type ApprovalAnswer,
  type ApprovalContext,
  type ApprovalDecision,
  ApprovalPendingError,
  type ApprovalRequest,
  type ApprovalRunOptions,
  type ApprovalTimeoutPolicy,
  type ApproveCallback,
  type NeedsApproval,
} from './tools/approval.js';
export {
  type AnyTool,
  defineTool,
  type Tool,
  type ToolArgs,
  type ToolContext,
  type ToolDefinition,
  type ToolInputSchema,
} from './tools/define-tool.js';
export {
  type InvalidToolCall,
  InvalidToolCallError,
  type InvalidToolCallPolicy,
} from './tools/invalid-tool-call.js';
export type { RemoteToolExecutor } from './tools/remote-executor.js';
export { jsonSafeOutput } from './tools/safe-output.js';
export { ToolCollisionError } from './tools/tool-collision.js';
export {
  type AfterToolCall,
  type BeforeToolCall,
  type BeforeToolCallDecision,
  type HookedCall,
  type ToolCallHooks,
  type ToolHookContext,
  ToolHookError,
} from './tools/tool-hooks.js';
export { Transcript } from './transcript.js';
export { addUsage, type Usage, usage, ZERO_USAGE } from './usage.js';
export {
  type ActionJSON,
  type GuardJSON,
  type InvokeJSON,
  type JsonValue,
  type MachineJSON,
  type StateNodeJSON,
  type TransitionJSON,
  toJSON,
} from './viz/to-json.js';
export {
  type MermaidDirection,
  type MermaidOptions,
  stateIdOf,
  stateIdsOf,
  toMermaid,
} from './viz/to-mermaid.js';
