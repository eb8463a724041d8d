import { setMaxListeners } from 'node:events';
import type { SnapshotFrom } from 'xstate';
import type { chainMachine } from '../../machines/chain.js';
import type { ApprovalRunOptions } from '../approvals/approval.js';
import type { RunJournal } from '../durable/run-journal.js';
import { AbortError } from '../errors.js';
import { RunRecorder } from '../host/run-details.js';
import type { ToolCall } from '../messages.js';
import type { StreamPart } from '../model/language-model.js';
import type { ApprovalGate } from '../tool-calls/approval-gate.js';
import type { LocalToolRegistry } from '../tool-calls/local-registry.js';
import { approvalGate } from '../tool-calls/run-approvals.js';
import { RunTools } from '../tool-calls/run-tools.js';
import { type ToolCallHooks, ToolHooks } from '../tools/hooks.js';
import type { RemoteToolExecutor } from '../tools/remote-executor.js';
import type { ChainOptions } from './options.js';

export type ChainSnapshot = SnapshotFrom<typeof chainMachine>;
/** Where a streamed run's model parts go (stream()), with the generation they belong to. */
export type PartListener = (part: StreamPart, iteration: number) => void;

// What a run owns besides its JSON context: its tools (open streams), the controller that
// aborts its effects, and where its text deltas go (stream()). Found by the run's actor
// system; run() creates them and disposes of them however the run ends, since XState does
// not stop an errored actor's children.
export interface ChainRunResources {
  readonly controller: AbortController;
  readonly tools: RunTools;
  readonly onPart: PartListener | undefined;
  /** Every model call and tool call of the run, for `details()` (SPEC A5). */
  readonly recorder: RunRecorder;
  /** A durable run's journal: effects are journaled, and replayed on resume. */
  readonly journal: RunJournal | undefined;
  /** Which calls wait for a person (SPEC H2); undefined when no tool needs approval. */
  readonly approvals: ApprovalGate | undefined;
}

/** What a chain's runs' tools are made of: its registry, its remote, its tool options. */
export interface ChainToolSetup {
  readonly local: LocalToolRegistry;
  /** Read at every model call and tool step: connect() takes effect in running runs too. */
  readonly remote: () => RemoteToolExecutor | undefined;
  readonly options: Pick<
    ChainOptions<unknown>,
    | 'toolConcurrency'
    | 'toolTimeoutMs'
    | 'streamBatchSize'
    | 'invalidToolCall'
    | 'approvalTimeoutMs'
  >;
  /** The chain's beforeToolCall / afterToolCall (SPEC H1): every run's, before its own. */
  readonly hooks: ToolCallHooks;
}

/** A run's resources, its tools recording into `recorder`. */
export function chainRunResources(
  setup: ChainToolSetup,
  onPart?: PartListener,
  recorder = new RunRecorder(),
  journal?: RunJournal,
  runOptions?: ToolCallHooks & ApprovalRunOptions,
): ChainRunResources {
  const { options } = setup;
  const hooks = ToolHooks.of(setup.hooks, runOptions);
  const approvals = approvalGate(
    setup.local,
    options.approvalTimeoutMs,
    recorder,
    journal,
    runOptions,
  );
  const controller = new AbortController();
  setMaxListeners(0, controller.signal); // every concurrent tool call listens to it
  const tools = new RunTools({
    local: setup.local,
    remote: setup.remote,
    concurrency: options.toolConcurrency,
    timeoutMs: options.toolTimeoutMs,
    streamBatchSize: options.streamBatchSize ?? 5,
    ...(hooks && { hooks }),
    ...(approvals && { approvals }),
    ...(options.invalidToolCall !== undefined && { invalidToolCall: options.invalidToolCall }),
    onCallDone: (done) => recorder.toolCall(done),
    ...(recorder.observation && {
      onCallStart: (call: ToolCall, executor: string, startedAt: number) =>
        recorder.toolCallStarted(call, executor, startedAt),
    }),
  });
  return { controller, tools, onPart, recorder, journal, approvals };
}

/** Ends what a run owns: its effects are aborted, its details end, its streams close. */
export function disposeChainRun(run: ChainRunResources): Promise<void> {
  run.controller.abort(RUN_ENDED);
  run.approvals?.close();
  run.recorder.finish();
  return run.tools.close();
}

/** The abort reason effects see when their run ends first; made once, since stacks are costly. */
const RUN_ENDED = new AbortError('The run ended before this effect finished');
