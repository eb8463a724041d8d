// The types a chain's run gives and takes (its input, options, result, stream events and
// partial result): shared by createChain and the helpers that build its results and events,
// in a module of their own so the helpers never import the factory.
import type { InspectionEvent, Observer } from 'xstate';
import type { ChainOutput, ChainStep } from '../../machines/chain.js';
import type { EarlyStop, IntermediateStep } from '../../machines/early-stopping.js';
import type { ApprovalRunOptions } from '../approvals/approval.js';
import type { MutationLog } from '../compile/compile-turn.js';
import type { PartialResult } from '../errors.js';
import type { DurableRunOptions } from '../host/durable-run.js';
import type { RunDetails } from '../host/run-details.js';
import type { RUN_OPTION_KEYS } from '../host/run-options.js';
import type { Message, ToolCall, ToolResult } from '../messages.js';
import type { RunObserver } from '../observe/run-observer.js';
import type { EveryKeyListed } from '../options/keys.js';
import type { ApprovalStreamEvent } from '../tool-calls/approval-stream-events.js';
import type { ToolCallHooks } from '../tools/hooks.js';
import type { Usage } from '../usage.js';

export interface ChainRunInput {
  /** The conversation so far; usually one user message. */
  readonly messages: readonly Message[];
  /** What earlier chains cached (SPEC C9). */
  readonly intermediateResults?: Readonly<Record<string, unknown>>;
}

export interface ChainRunOptions extends DurableRunOptions, ToolCallHooks, ApprovalRunOptions {
  /** Aborting ends the run in `failed` with an AbortError; the model call and every tool see it. */
  readonly signal?: AbortSignal;
  /** XState's inspection hook: pass `createBrowserInspector().inspect` or any observer; `inspectRuns` adds more. */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Told of this run as it happens (SPEC X4), besides the observers `observeRuns` registered. */
  readonly observers?: RunObserver | readonly RunObserver[];
  /** The run that started this one, for observers' tree of runs (a Runnable's RunConfig has it). */
  readonly parentRunId?: string;
}

// tsc fails here, naming the option, when ChainRunOptions gains one that runs do not check.
const _everyRunOptionChecked: EveryKeyListed<ChainRunOptions, typeof RUN_OPTION_KEYS> = true;

export interface ChainResult<T> {
  readonly status: 'succeeded';
  /** The validated result: the parsed JSON with an outputSchema, else the answer text. */
  readonly result: T;
  readonly text: string;
  readonly transcript: readonly Message[];
  readonly usage: Usage;
  /** What `usage` cost in US dollars, when the chain has `prices` (SPEC H3). */
  readonly cost?: number;
  readonly iterations: number;
  readonly steps: readonly ChainStep[];
  /** Every tool call with the result the model got, in call order (LangChain's intermediate_steps). */
  readonly intermediateSteps: readonly IntermediateStep[];
  /** Present when the run reached a limit and `earlyStopping` (or maxToolCalls's final call) ended it: which one, and how. */
  readonly stopped?: EarlyStop;
  readonly mutationLog: MutationLog;
  readonly intermediateResults: Readonly<Record<string, unknown>>;
  /** Every model call (compiled request, response, usage, latency) and tool call of the run (SPEC A5). */
  details(): RunDetails;
}

export type ChainStreamEvent<T = unknown> =
  | { readonly type: 'state'; readonly state: string }
  | { readonly type: 'text-delta'; readonly delta: string; readonly iteration: number }
  | { readonly type: 'tool-call'; readonly toolCall: ToolCall }
  | { readonly type: 'tool-result'; readonly result: ToolResult }
  | { readonly type: 'warning'; readonly kind: 'iterations' | 'tokens'; readonly text: string }
  /** A call waits for a decision (SPEC H2); `approval-decided` follows when it is taken. */
  | ApprovalStreamEvent
  | {
      readonly type: 'final';
      readonly output: ChainOutput;
      readonly details: RunDetails;
      /** What `invoke` resolves with; undefined when the run failed (the stream then throws). */
      readonly result: ChainResult<T> | undefined;
    };

/** Fatal chain errors keep the whole partial run: transcript, usage and steps. */
export interface ChainPartialResult extends PartialResult {
  /** What `usage` cost in US dollars, when the chain has `prices` (SPEC H3). */
  readonly cost?: number;
  readonly steps: readonly ChainStep[];
  /** The tool calls the run made before it failed, with their results. */
  readonly intermediateSteps: readonly IntermediateStep[];
  readonly output: ChainOutput;
  /** Every model call and tool call made before the failure (SPEC A5), as on a result. */
  details(): RunDetails;
}
