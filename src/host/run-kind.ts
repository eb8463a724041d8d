import type { AnyStateMachine, InspectionEvent, Observer } from 'xstate';
import type { ApprovalRunOptions } from '../approvals/approval.js';
import type { ModelPrice } from '../cost.js';
import type { RunKind } from '../durable/journal-entry.js';
import type { RunJournal } from '../durable/run-journal.js';
import type { PartialResult, StatecraftError } from '../errors.js';
import type { LanguageModel } from '../model/language-model.js';
import type { AgentRunObserving } from '../observe/observe-agent-run.js';
import type { ToolCallHooks } from '../tools/hooks.js';
import type { Usage } from '../usage.js';
import type { DurableRunOptions } from './durable-run.js';
import type { EffectRequest, EffectsKind } from './effects-actor.js';
import type { EventQueue } from './event-queue.js';
import type { RunRecorder } from './run-details.js';

// What a kind of run (chain, tool loop) gives the run host (run-host.ts): the types its runs
// are made of, and what the host cannot know: its machine, input, resources, effects,
// results and errors. Each kind's is wired in its create function (createChain,
// createToolLoop) from modules of its own.

/** The types one kind of run is made of. */
export interface RunTypes {
  /** What invoke() and stream() take. */
  readonly runInput: unknown;
  readonly runOptions: HostedRunOptions;
  /** The machine's input; its config is the run's. */
  readonly input: { readonly config: object };
  /** The machine's output. */
  readonly output: { readonly status: string; readonly usage: Usage };
  /** What invoke() resolves with. */
  readonly result: object;
  /** What stream() yields; its last event is `final`. */
  readonly event: unknown;
  /** What a run owns besides its JSON context, for its effects actor. */
  readonly resources: unknown;
  /** Where a streamed run's text deltas go. */
  readonly listener: unknown;
  readonly snapshot: { readonly value: unknown; readonly context: { readonly usage: Usage } };
  /** What the machine asks its effects actor for. */
  readonly request: EffectRequest;
}

/** The options every run takes (ChainRunOptions, ToolLoopRunOptions). */
export interface HostedRunOptions
  extends DurableRunOptions,
    AgentRunObserving,
    ToolCallHooks,
    ApprovalRunOptions {
  readonly signal?: AbortSignal;
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
}

export type FailedOutput<K extends RunTypes> = Extract<K['output'], { status: 'failed' }>;
export type SucceededOutput<K extends RunTypes> = Exclude<K['output'], { status: 'failed' }>;

/**
 * What a run whose machine threw (a bug, or a provided action that failed) ends as: a failed
 * output, settled like any, or an error its run fails with.
 */
export type CrashedRun<Failed> = { readonly output: Failed } | { readonly error: StatecraftError };

/** What runs of one kind are made of: what the run host cannot know. */
export interface RunKindSpec<K extends RunTypes> {
  /** How journals and observers call the kind. */
  readonly kind: RunKind;
  /** How messages call it: `chain '<name>'`, `tool loop '<name>'`. */
  readonly noun: 'chain' | 'tool loop';
  /** `options.name`, or the kind's default: how callbacks and run events call it. */
  readonly name: string;
  readonly model: LanguageModel | undefined;
  /** The model's prices, when runs are priced (SPEC H3): recorders record each call's cost. */
  readonly price?: ModelPrice;
  /** What a journal's run is started with besides its input: resumed with other options, refused. */
  readonly config: object;
  /**
   * The run's setup as its journal notes it field by field, to say which option changed when
   * a resumed run differs; default: `config`. More than config is fine (it is not hashed into
   * the check): the tool loop adds its tools, which its config does not hold.
   */
  readonly journalFields?: object;
  /** The kind's machine, before its effects and its deadline are provided. */
  readonly machine: AnyStateMachine;
  /** The delay that ends a run at its time limit, and that limit, from the run's config. */
  readonly deadline: {
    readonly delay: string;
    limitMs(config: K['input']['config']): number;
  };
  /** What its effects actor does (see effectsActor). */
  readonly effects: EffectsKind<K['request'], K['resources']>;
  /**
   * When a run's input is checked (after its options, which every entry checks first):
   * before anything else (the tool loop: stream() throws at once), or as the run starts (the
   * chain: the stream's iteration throws).
   */
  readonly checksInputFirst: boolean;
  /** The machine's input for `runInput` (InputError when it is not one), with `config` if given. */
  input(runInput: K['runInput'], config?: K['input']['config']): K['input'];
  /** What observers and journals are told a run started with: invoke()'s input shape. */
  runInput(machineInput: unknown): unknown;
  /** A run's resources, made as it starts; `listener` when it is streamed. */
  resources(
    recorder: RunRecorder,
    listener: K['listener'] | undefined,
    journal: RunJournal | undefined,
    runOptions: HostedRunOptions,
  ): K['resources'];
  /**
   * The resources of a run an app's machine invoked, made by its effects actor: it records
   * into `recorder` while observed.
   */
  childResources(recorder: RunRecorder | undefined): K['resources'];
  /**
   * Ends what a run owns besides its recorder, however it ended (XState does not stop an
   * errored actor's children); none when its effects actor owns the rest.
   */
  dispose?(resources: K['resources']): Promise<void>;
  /** The output of a run its caller cancelled before it started, when the kind skips the machine then. */
  cancelledBeforeStart?(signal: AbortSignal): K['output'];
  /** What a run whose machine threw ends as, from the context it had. */
  crashed(
    error: unknown,
    context: K['snapshot']['context'],
    recorder: RunRecorder,
  ): CrashedRun<FailedOutput<K>>;
  /** What a run an app's machine invoked had done when it was stopped: its error's partial run. */
  partial(context: K['snapshot']['context'], recorder: RunRecorder): PartialResult;
  /** A succeeded run's result, details() included. */
  result(output: SucceededOutput<K>, recorder: RunRecorder): K['result'];
  /** A failed run's error, the partial run with it. */
  error(output: FailedOutput<K>, recorder: RunRecorder): StatecraftError;
  /** The events stream() pushes as the run goes: from its snapshots, and from its listener. */
  streamEvents(queue: EventQueue<K['event']>): {
    readonly onSnapshot: (snapshot: K['snapshot']) => void;
    readonly listener: K['listener'];
  };
}

/** The message of a run whose machine threw: `The chain machine failed: …`. */
export function machineFailed(noun: 'chain' | 'tool loop', error: unknown): string {
  return `The ${noun} machine failed: ${error instanceof Error ? error.message : String(error)}`;
}
