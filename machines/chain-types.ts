// The chain machine's types: its config and input, its context, the effects it requests and
// the events that answer them, its output, and what its guards and actions read
// (ChainArgs). Their own module, so the sibling modules that hold the guards' and actions'
// bodies (chain-limits.ts, chain-transcript-actions.ts, …) read them without importing the
// machine, and chain.ts opens on its policy.

import type { StateMachine } from 'xstate';
import type { ApprovalDecision, ApprovalTimeoutPolicy } from '../src/approvals/approval.js';
import type { PromptContract } from '../src/compile/convert-to-llm-request.js';
import type { SelfRefSnapshot } from '../src/compile/experiences.js';
import type { ContextMutation } from '../src/compile/mutations.js';
import type { ModelPrice } from '../src/cost.js';
import type { Message, ToolCall, ToolResult } from '../src/messages.js';
import type { FinishReason, ModelResponse } from '../src/model/language-model.js';
import type { Transcript } from '../src/transcript.js';
import type { Usage } from '../src/usage.js';
import type { ApprovalEvent, Approvals } from './approvals.js';
import type { EarlyStop, EarlyStopping, IntermediateStep, StopLimit } from './early-stopping.js';

export interface ChainWarning {
  readonly prompt: string;
  /** >= 0: warn once the count reaches it; < 0: warn this far from the limit. */
  readonly threshold: number;
}

/** Everything the machine decides with; fixed for a run. Plain JSON. */
export interface ChainConfig {
  /** Generations allowed; `Infinity`: no limit (the journal's codec keeps it). */
  readonly maxIterations: number;
  readonly maxTokens: number;
  /** SPEC H3: tool calls allowed per run; undefined: no limit. */
  readonly maxToolCalls?: number;
  /** SPEC H3: US dollars allowed per run, priced by `prices`. */
  readonly maxCost?: number;
  /** The chain's model's prices: the run's cost is priced with them (result, details, spans). */
  readonly prices?: ModelPrice;
  /**
   * The model settings' `maxOutputTokens`: the output a call is expected to spend at most,
   * in the check before each call. Undefined: the largest output of the run so far.
   */
  readonly maxOutputTokens?: number;
  readonly warnings: { readonly iterations?: ChainWarning; readonly tokens?: ChainWarning };
  /**
   * A system note added after a step's tool results (SPEC C5 says before them; providers
   * require results right after their calls), on every tool step or only when a stream opened.
   */
  readonly toolResponseInstructions?: {
    readonly text: string;
    readonly when: 'always' | 'streams';
  };
  readonly warnRecursiveCalls: boolean;
  /** Tools that opted in to duplicate-call warnings (`duplicateCallWarn`). */
  readonly duplicateWarnTools: readonly string[];
  readonly catchIntermediateResult: boolean;
  readonly resultCacheKey?: string;
  readonly contract: PromptContract;
  /**
   * Milliseconds a run may take; then the effect in flight is cancelled and the run stops
   * (SPEC R4). The final call of `earlyStopping: 'generate'`, made after a limit, gets
   * maxExecutionTime of its own: the effects host bounds it.
   */
  readonly maxExecutionTime?: number;
  /** How a run that reaches maxIterations or maxExecutionTime ends; undefined: it fails. */
  readonly earlyStopping?: EarlyStopping;
  /** Tools whose single successful call in a step ends the run with its output (`returnDirect`). */
  readonly returnDirectTools: readonly string[];
  /** What a call's approval deadline does when it passes (SPEC H2); undefined: 'reject'. */
  readonly approvalTimeout?: ApprovalTimeoutPolicy;
  /** Characters of a rejection's reason kept (SPEC H2); undefined: DEFAULT_MAX_REASON_LENGTH. */
  readonly maxApprovalReasonLength?: number;
}

export interface ChainInput {
  readonly config: ChainConfig;
  /** The conversation to start from: usually the user's message, maybe a system prompt. */
  readonly messages: readonly Message[];
  /** Results cached by chains that ran before this one (SPEC C9). */
  readonly intermediateResults?: Readonly<Record<string, unknown>>;
}

/** A fatal ending as data; the runtime turns it into the typed error class of the same code. */
export interface ChainFailure {
  readonly code:
    | 'PROTOCOL_ERROR'
    | 'TOKEN_LIMIT'
    | 'COST_LIMIT'
    | 'TIMEOUT'
    | 'CHAIN_ERROR'
    | 'MODEL_ERROR'
    | 'CONFIG_ERROR'
    | 'ABORTED';
  readonly message: string;
  /** The original error of a failed model call or validation, kept for the runtime. */
  readonly cause?: unknown;
  /** The limit that was reached, for limit failures. */
  readonly limit?: number;
  /**
   * A budget's failure before a call (SPEC H3): what the call that was not made was expected
   * to spend, in tokens (TOKEN_LIMIT) or US dollars (COST_LIMIT).
   */
  readonly estimate?: number;
}

/** What `callModel` is asked to do: the compiled messages of this turn. */
export interface CallModelInput {
  readonly messages: Transcript;
  readonly iteration: number;
  /** The last call of `earlyStopping: 'generate'`: sent without tools, so it must answer. */
  readonly final?: boolean;
}

/** What `executeTools` is asked to run (blocked duplicates are already answered). */
export interface ExecuteToolsInput {
  readonly calls: readonly ToolCall[];
  /**
   * The call whose output ends the run if it succeeds (a returnDirect tool called alone): a
   * stream it returns is read to its end, since that output is the answer, not a first batch.
   */
  readonly directCallId?: string;
}

export interface StreamBatch {
  readonly streamId: string;
  readonly toolName: string;
  readonly chunks: readonly unknown[];
  readonly done: boolean;
}

export interface ExecuteToolsOutput {
  /** One result per executed call, in call order. */
  readonly results: readonly ToolResult[];
  /** The next batch of every stream opened in an earlier step (SPEC C11). */
  readonly streamBatches: readonly StreamBatch[];
  /** True when a result of this step opened a stream. */
  readonly openedStream: boolean;
}

export interface ValidateResultInput {
  readonly text: string;
}

export type ValidationOutcome =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly message: string };

/** The calls of the step in progress that wait for a decision, and the run's decisions. */
export type ChainApprovals = Approvals;

export interface ChainStep {
  readonly iteration: number;
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly toolResults: readonly ToolResult[];
  readonly usage: Usage;
  readonly finishReason: FinishReason;
  /**
   * Its calls would have taken the run past maxToolCalls (SPEC H3): none ran, and its message
   * is not in the transcript; a final call without tools answered instead.
   */
  readonly overBudget?: true;
}

/**
 * Keep it at 19 top-level keys at most: XState's assign copies the context with
 * `Object.assign({}, context, update)`, and V8 makes such a copy of 20 or more properties a
 * dictionary-mode object, about 10× slower per assign (measured on Node 20: 1.4 µs against
 * 16 µs); at 21 keys the bench's chain step took twice as long. Derive what you can (see
 * answerText in early-stopping.ts), or group new fields.
 */
export interface ChainContext {
  readonly config: ChainConfig;
  /** The transcript as of the last compiled turn. */
  readonly transcript: Transcript;
  /** What happened since the last compile, applied by the next one. */
  readonly pending: readonly ContextMutation[];
  /** Every turn's mutations, in order: replayable with replayMutationLog. */
  readonly mutationLog: readonly (readonly ContextMutation[])[];
  readonly snapshot: SelfRefSnapshot | undefined;
  /** The messages of the next model call. */
  readonly request: Transcript;
  readonly iterations: number;
  readonly usage: Usage;
  readonly warned: { readonly iterations: boolean; readonly tokens: boolean };
  readonly response: ModelResponse | undefined;
  readonly toolCalls: readonly ToolCall[];
  /**
   * The results the tool step in progress has so far, in the order they came (chain-steps.ts):
   * the blocked duplicates, answered before anything ran, and each call's as it finished.
   */
  readonly stepResults: readonly ToolResult[];
  /** Keys of the calls run so far, and of those warned about in the last step (SPEC C8). */
  readonly duplicates: { readonly history: readonly string[]; readonly warned: readonly string[] };
  /** SPEC H2: the calls of this step waiting for a decision, and every decision of the run. */
  readonly approvals: ChainApprovals;
  readonly steps: readonly ChainStep[];
  /** The limit that sent the run to `stopping`; once set, maxExecutionTime no longer applies. */
  readonly limitReached: StopLimit | undefined;
  readonly result: unknown;
  readonly intermediateResults: Readonly<Record<string, unknown>>;
  readonly failure: ChainFailure | undefined;
}

export interface ChainRunData {
  readonly transcript: Transcript;
  readonly usage: Usage;
  /** What the usage cost in US dollars, when the config has prices (SPEC H3). */
  readonly cost?: number;
  readonly iterations: number;
  readonly steps: readonly ChainStep[];
  /** Every tool call with the result the model got for it, in order (LangChain's intermediate_steps). */
  readonly intermediateSteps: readonly IntermediateStep[];
  readonly mutationLog: readonly (readonly ContextMutation[])[];
  readonly intermediateResults: Readonly<Record<string, unknown>>;
}

/**
 * How a run ended. `T` is the result's type, which the chain validated (unknown to the machine).
 * A failed run is an output too (`status: 'failed'`), never an error of the actor: an app's
 * machine gets it on `onDone` from `chain.machine` and from `chain.durable(store)` alike.
 */
export type ChainOutput<T = unknown> =
  | (ChainRunData & {
      readonly status: 'succeeded';
      readonly result: T;
      readonly text: string;
      /** Present when the run reached a limit and `earlyStopping`, or maxToolCalls's final call, ended it. */
      readonly stopped?: EarlyStop;
    })
  | (ChainRunData & { readonly status: 'failed'; readonly failure: ChainFailure });

/** Requests the machine sends to its `effects` actor. */
export type ChainEffectRequest =
  | { readonly type: 'callModel'; readonly input: CallModelInput }
  | { readonly type: 'executeTools'; readonly input: ExecuteToolsInput }
  | { readonly type: 'validateResult'; readonly input: ValidateResultInput }
  /** Abort what is in flight and drop its late answers: the machine has moved on. */
  | { readonly type: 'cancel'; readonly reason: StopLimit }
  /** A call of the tool step was decided (SPEC H2): run it, or answer it as not approved. */
  | { readonly type: 'decide'; readonly decision: ApprovalDecision };

/** Events the chain reacts to: the effects' answers, and ABORT, APPROVE, REJECT from outside. */
export type ChainEvent =
  | { readonly type: 'ABORT'; readonly reason?: string }
  /** SPEC H2: the host asks, and a deadline passes; APPROVE / REJECT from outside. */
  | ApprovalEvent
  | { readonly type: 'callModel.done'; readonly output: ModelResponse }
  | { readonly type: 'callModel.error'; readonly error: unknown }
  /** One call of the tool step finished: its result, before the step's end (SPEC Q8). */
  | { readonly type: 'executeTools.result'; readonly result: ToolResult }
  | { readonly type: 'executeTools.done'; readonly output: ExecuteToolsOutput }
  | { readonly type: 'executeTools.error'; readonly error: unknown }
  | { readonly type: 'validateResult.done'; readonly output: ValidationOutcome }
  | { readonly type: 'validateResult.error'; readonly error: unknown };

/**
 * What a guard or an action of the chain machine reads: the context, and the event being
 * taken. Implementations in the sibling modules take it, so setup() can name them as they are.
 */
export interface ChainArgs {
  readonly context: ChainContext;
  readonly event: ChainEvent;
}

/** `TMachine` with its output typed `TOutput`: the same statechart, only the type differs. */
export type WithOutput<TMachine, TOutput> =
  TMachine extends StateMachine<
    infer TContext,
    infer TEvent,
    infer TChildren,
    infer TActor,
    infer TAction,
    infer TGuard,
    infer TDelay,
    infer TStateValue,
    infer TTag,
    infer TInput,
    infer _TOutput,
    infer TEmitted,
    infer TMeta,
    infer TSchema
  >
    ? StateMachine<
        TContext,
        TEvent,
        TChildren,
        TActor,
        TAction,
        TGuard,
        TDelay,
        TStateValue,
        TTag,
        TInput,
        TOutput,
        TEmitted,
        TMeta,
        TSchema
      >
    : never;
