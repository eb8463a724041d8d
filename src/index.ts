// Public API of statecraft: what an agent author uses. Explicit named exports only; the rest
// lives in named subpaths (statecraft/compile, /machines, …) listed in docs/api.md.

export type {
  ChainFailure,
  ChainInput,
  ChainMachine,
  ChainOutput,
  ChainStep,
  ChainWarning,
} from '../machines/chain.js';
export type {
  EarlyStop,
  EarlyStopping,
  IntermediateStep,
  StopLimit,
} from '../machines/early-stopping.js';
export type {
  PlannedRound,
  StopReason,
  ToolLoopFailure,
  ToolLoopInput,
  ToolLoopOutput,
} from '../machines/tool-loop.js';
// How an app's machine reads a run it invoked (chain.machine, loop.machine, durable()).
export {
  type FailedRunOutput,
  isFailedRun,
  type RunFailure,
  type RunOutput,
  runFailure,
} from './app-machines/run-failure.js';
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
} from './approvals/approval.js';
export type { AttachmentSummary } from './attachment-summary.js';
export { type Attachment, type AttachmentSource, attachment } from './attachments.js';
export {
  type Chain,
  type ChainPartialResult,
  type ChainResult,
  type ChainRunInput,
  type ChainRunOptions,
  type ChainStreamEvent,
  createChain,
} from './chain/create-chain.js';
export type { ChainOptions, ValidateResult } from './chain/options.js';
export { costOf, type ModelPrice, type ModelPrices } from './cost.js';
export {
  type Approvals,
  type ApprovalsOptions,
  approvals,
  type PendingApproval,
} from './durable/approvals.js';
export { JournalError, type JournalErrorReason } from './durable/journal-error.js';
export { JournalMismatchError } from './durable/journal-mismatch.js';
export type { FileJournalStore } from './durable/stores/file-store.js';
export type { JournalStore } from './durable/stores/journal-store.js';
export { fileStore } from './durable/stores/lazy-file-store.js';
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
export type { DurableActorInput, DurableRunOptions } from './host/durable-run.js';
export {
  type ApprovedCall,
  formatRunDetails,
  type ModelCallAttachment,
  type ModelCallDetail,
  type RunDetails,
  type ToolCallDetail,
} from './host/run-details.js';
export {
  type AssistantMessage,
  assistantMessage,
  type Message,
  type SystemMessage,
  systemMessage,
  type ToolCall,
  type ToolResult,
  type ToolResultMessage,
  toolResultMessage,
  type UserMessage,
  userMessage,
} from './messages.js';
export type {
  ContentPart,
  FinishReason,
  JsonSchema,
  LanguageModel,
  ModelRequest,
  ModelResponse,
  ResponseFormat,
} from './model/language-model.js';
export type { RunInfo, RunKind } from './observe/run-info.js';
export type {
  ObservedApproval,
  ObservedModelCall,
  ObservedRun,
  ObservedToolCall,
  RunObserver,
} from './observe/run-observer.js';
export type { Plan } from './plan/plan.js';
export type { PlannerContext } from './plan/planner-context.js';
export type { ToolExecutionRecord } from './plan/records.js';
export type { BatchOptions, BatchResult } from './run-config/batch.js';
export type { IntermediateResultsRef, RunCallbacks, RunConfig } from './run-config/config.js';
export { createRunnable, isRunnable, runnable } from './runnable/create-runnable.js';
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
export type { InnerRunEvent, RunEvent, RunEventBody } from './runnable/run-events.js';
export { pipe, sequence } from './runnable/sequence.js';
export type {
  CommonInput,
  InputOf,
  Invocable,
  OutputOf,
  RetryOptions,
  RunContext,
  Runnable,
  RunnableDefinition,
  RunnableFunction,
  RunnableLike,
} from './runnable/types.js';
export type { OutputSchema, StandardSchema } from './structured/output-schema.js';
export {
  createToolLoop,
  type ToolLoop,
  type ToolLoopPartialResult,
  type ToolLoopResult,
  type ToolLoopRunInput,
  type ToolLoopRunOptions,
  type ToolLoopStreamEvent,
} from './tool-loop/create-tool-loop.js';
export type { Planner, Responder, ToolLoopOptions } from './tool-loop/options.js';
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
  type AfterToolCall,
  type BeforeToolCall,
  type BeforeToolCallDecision,
  type HookedCall,
  type ToolCallHooks,
  type ToolHookContext,
  ToolHookError,
} from './tools/hooks.js';
export {
  type InvalidToolCall,
  InvalidToolCallError,
  type InvalidToolCallPolicy,
} from './tools/invalid-tool-call.js';
export { ToolCollisionError } from './tools/name-collision.js';
export type { RemoteToolExecutor } from './tools/remote-executor.js';
export { type ToolOutput, toolOutput } from './tools/tool-output.js';
export { Transcript } from './transcript.js';
export type { Usage } from './usage.js';
