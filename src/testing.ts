// Test helpers, published as `statecraft/testing` so users test their agents the way we do.

export {
  ScriptExhaustedError,
  ScriptedModel,
  type ScriptedModelOptions,
  type ScriptedToolCall,
  type ScriptedTurn,
  type ScriptFunction,
  type ScriptStep,
} from '../adapters/models/scripted.js';
// Path tests and graph properties for any XState v5 machine (SPEC D2, D3): see src/graph/.
export {
  assertCanReach,
  assertUnreachable,
  canReach,
  type ReachOptions,
  type ReachResult,
  type ReachTarget,
  type ReachWitness,
} from './graph/can-reach.js';
export type { Coverage, CoverageCount } from './graph/coverage.js';
export type { ActorOutcomes, ActorScript, OfferedEvents } from './graph/events.js';
export { allSnapshots, type Edge, type MachineGraph } from './graph/machine-graph.js';
export {
  generatePathTests,
  type PathStep,
  type PathTest,
  type PathTestOptions,
  type PathTestSuite,
} from './graph/path-tests.js';
export type { PathKind } from './graph/paths.js';
export {
  type ReachabilityCheck,
  reachabilityViolations,
  type Violation,
} from './graph/reachability.js';
export {
  type ChildCall,
  type ChildCallOf,
  type PathReplay,
  PathReplayError,
} from './graph/replay.js';
export { stateNodePaths } from './graph/state-nodes.js';
export {
  allTransitionNames,
  type TransitionNaming,
  transitionName,
} from './graph/transition-names.js';
export {
  DEFAULT_LIMITS,
  type GraphOptions,
  serializeSnapshot,
  TraversalLimitError,
  type TraversalLimits,
} from './graph/traversal.js';
