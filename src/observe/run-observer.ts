import type { AnyStateMachine } from 'xstate';
import type { ApprovalDecision, ApprovalRequest } from '../approvals/approval.js';
import type { ToolCall, ToolResult } from '../messages.js';
import type { ModelRequest, ModelResponse } from '../model/language-model.js';
import type { Usage } from '../usage.js';
import type { RunInfo } from './run-info.js';

// One way to watch runs from outside (SPEC X4, A5, D1): OpenTelemetry spans, the local run
// viewer and the CLI's progress display are all observers of these events, so none of them
// needs a hook of its own in the runtime, and the core imports no telemetry library.
// Observers are told, never asked: their return values are ignored and what they throw is
// caught and reported once on stderr, so a broken exporter cannot fail an agent run.

/** A run as observers see it: the Runnable tree's RunInfo, and the machine for chains and loops. */
export interface ObservedRun extends RunInfo {
  /** The statechart the run executes (chains and tool loops): what a viewer draws. */
  readonly machine?: AnyStateMachine;
  /** The model the run calls, when it has one: provider and id, as the GenAI conventions name them. */
  readonly model?: { readonly provider: string; readonly modelId: string };
  /**
   * The conversation the run belongs to: the run config's `sessionId` (what `withMemory`
   * loads and saves under), when the caller gave one. Runs started directly (a chain's own
   * `invoke`) have none.
   */
  readonly sessionId?: string;
  /** `performance.timeOrigin + performance.now()` at the start, in milliseconds. */
  readonly startTime: number;
}

export interface ObservedModelCall {
  /** 1-based within its run, in the order calls start. */
  readonly index: number;
  /** The chain's generation, or a tool loop's `plan` / `respond`. */
  readonly purpose: string;
  readonly request: ModelRequest;
  readonly model: { readonly provider: string; readonly modelId: string };
  /** Made with `model.stream` (its parts read as they arrive), not `model.generate`. */
  readonly streamed: boolean;
  readonly startTime: number;
}

export interface ObservedToolCall {
  readonly call: ToolCall;
  /** `local`, or the name of the remote executor that ran it. */
  readonly executor: string;
  readonly startTime: number;
}

/** A call that waits for a person (SPEC H2): asked, then decided (or its deadline passed). */
export type ObservedApproval =
  | { readonly type: 'requested'; readonly request: ApprovalRequest; readonly time: number }
  | {
      readonly type: 'decided';
      readonly decision: ApprovalDecision;
      readonly waitedMs: number;
      readonly time: number;
    };

/** Every hook is optional; each receives the run it belongs to. */
export interface RunObserver {
  onRunStart?(run: ObservedRun, input: unknown): void;
  /**
   * The machine's state after each macrostep: XState's `snapshot.value`, a string for a flat
   * machine (the chain's `'thinking'`), a plain JSON object for nested states (the tool loop's
   * `{ running: 'planning' }`). An actor a state invokes starts before that state is reported.
   */
  onState?(run: ObservedRun, state: unknown, context: unknown): void;
  onModelCallStart?(run: ObservedRun, call: ObservedModelCall): void;
  onModelCallEnd?(
    run: ObservedRun,
    call: ObservedModelCall,
    outcome:
      | {
          readonly response: ModelResponse;
          readonly usage: Usage;
          /** US dollars, when the chain has `prices` (SPEC H3). */
          readonly cost?: number;
          readonly endTime: number;
        }
      | { readonly error: unknown; readonly endTime: number },
  ): void;
  onToolCallStart?(run: ObservedRun, call: ObservedToolCall): void;
  /** A call began, or ended, waiting for a decision (SPEC H2). */
  onApproval?(run: ObservedRun, approval: ObservedApproval): void;
  onToolCallEnd?(
    run: ObservedRun,
    call: ObservedToolCall,
    outcome: {
      readonly result: ToolResult;
      /**
       * Set only when the call was still running as its run ended (aborted, timed out): an
       * AbortError (code `ABORTED`), reported just before the run's end; the call's own end,
       * if it ever comes, is not reported. A model call cut short this way ends with it too.
       */
      readonly error?: unknown;
      readonly endTime: number;
    },
  ): void;
  onRunEnd?(
    run: ObservedRun,
    outcome:
      | {
          readonly output: unknown;
          readonly usage?: Usage;
          /** What the run's usage cost in US dollars, when the chain has `prices` (SPEC H3). */
          readonly cost?: number;
          readonly endTime: number;
        }
      | {
          readonly error: unknown;
          readonly usage?: Usage;
          readonly cost?: number;
          readonly endTime: number;
        },
  ): void;
}
