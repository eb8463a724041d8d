// `statecraft/observe`: watching every run in the process, through run observers and XState
// inspectors registered once.

export { inspectRuns, type RunInspector } from './observe/inspect-runs.js';
export { observeRuns } from './observe/registry.js';
export type {
  ObservedApproval,
  ObservedModelCall,
  ObservedRun,
  ObservedToolCall,
  RunObserver,
} from './observe/run-observer.js';
