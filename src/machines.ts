// `statecraft/machines`: the chain and tool-loop statecharts themselves, their types and the
// chain's policy helpers, for app machines that invoke them directly and for path tests.

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
