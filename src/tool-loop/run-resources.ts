import type { SnapshotFrom } from 'xstate';
import type { toolLoopMachine } from '../../machines/tool-loop.js';
import type { ApprovalRunOptions } from '../approvals/approval.js';
import type { RunJournal } from '../durable/run-journal.js';
import { RunRecorder } from '../host/run-details.js';
import type { ApprovalGate } from '../tool-calls/approval-gate.js';
import type { LocalToolRegistry } from '../tool-calls/local-registry.js';
import { approvalGate } from '../tool-calls/run-approvals.js';
import type { ToolCallHooks } from '../tools/hooks.js';

export type ToolLoopSnapshot = SnapshotFrom<typeof toolLoopMachine>;
/** Where a streamed run's final response text goes (stream()). */
export type DeltaListener = (delta: string) => void;

// What a run started by invoke(), stream() or planOnly() gives its actors, found by the
// run's actor system: where the final response's text deltas go (stream()), and the
// recorder of its model and tool calls (details()). A loop invoked from an app's machine
// has a recorder only while someone observes runs (SPEC R5, X4), found by the loop actor,
// the parent of the actors it invokes, or when one of its tools needs approval (its gate
// records into one). Its controller is its effects actor's own (see effects.ts):
// nothing here needs disposing of but the approval gate and the recorder's end.
export interface ToolLoopRunHooks {
  readonly recorder: RunRecorder;
  readonly onDelta?: DeltaListener;
  /** A durable run's journal: effects are journaled, and replayed on resume. */
  readonly journal?: RunJournal;
  /** The run's own beforeToolCall / afterToolCall, after the loop's (SPEC H1). */
  readonly toolHooks?: ToolCallHooks;
  /** Which commands wait for a person (SPEC H2); undefined when no tool needs approval. */
  readonly approvals?: ApprovalGate;
}

/** What a loop's effects find of their run: nothing for an unobserved loop an app's machine invoked. */
export type ToolLoopRunResources = ToolLoopRunHooks | undefined;

/** What a loop's runs' approval gates are made of: its registry and approvalTimeoutMs. */
export interface LoopApprovalSetup {
  readonly registry: LocalToolRegistry;
  readonly approvalTimeoutMs: number | undefined;
}

/**
 * The resources of a run invoke(), stream() or resume() starts. A run with a tool that needs
 * approval and no one to decide it (no `approve`, not durable) is refused with a ConfigError;
 * a `probe` (planOnly) executes nothing, so it needs no gate.
 */
export function loopRunResources(
  setup: LoopApprovalSetup,
  recorder: RunRecorder,
  onDelta: DeltaListener | undefined,
  journal: RunJournal | undefined,
  runOptions: ToolCallHooks & ApprovalRunOptions,
  probe = false,
): ToolLoopRunHooks {
  const approvals = probe
    ? undefined
    : approvalGate(setup.registry, setup.approvalTimeoutMs, recorder, journal, runOptions);
  return {
    recorder,
    ...(onDelta && { onDelta }),
    ...(journal && { journal }),
    toolHooks: runOptions,
    ...(approvals && { approvals }),
  };
}

/**
 * The resources of a loop an app's machine invoked: its decisions come as APPROVE / REJECT
 * events, so a tool that needs approval is gated without an `approve` callback.
 */
export function loopChildResources(
  setup: LoopApprovalSetup,
  observed: RunRecorder | undefined,
): ToolLoopRunResources {
  const recorder = observed ?? new RunRecorder();
  const approvals = approvalGate(
    setup.registry,
    setup.approvalTimeoutMs,
    recorder,
    undefined,
    undefined,
  );
  if (!approvals) return observed && { recorder: observed };
  return { recorder, approvals };
}

/** Ends what a run owns here: no approval deadline or inbox read outlives it. */
export function disposeLoopRun(resources: ToolLoopRunResources): Promise<void> {
  resources?.approvals?.close();
  return Promise.resolve();
}
