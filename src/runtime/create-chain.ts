import { setMaxListeners } from 'node:events';
import {
  type ActorSystem,
  type AnyActorRef,
  createActor,
  fromCallback,
  type InspectionEvent,
  type Observer,
  type PromiseActorLogic,
  type SnapshotFrom,
} from 'xstate';
import { LocalToolRegistry } from '../../adapters/tools/local-registry.js';
import {
  type CallModelInput,
  type ChainConfig,
  type ChainContext,
  type ChainEffectRequest,
  type ChainEvent,
  type ChainInput,
  type ChainMachine,
  type ChainOutput,
  type ChainStep,
  chainMachine,
  type ValidationOutcome,
} from '../../machines/chain.js';
import { brokenRunOutput } from '../../machines/chain-output.js';
import type { EarlyStop, IntermediateStep } from '../../machines/early-stopping.js';
import type { MutationLog } from '../compile/compile-turn.js';
import type { EffectOutcome } from '../durable/run-journal.js';
import { RunJournal } from '../durable/run-journal.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import {
  AbortError,
  ChainError,
  ConfigError,
  type PartialResult,
  ProtocolError,
  type StatecraftError,
  TimeoutError,
  TokenLimitError,
  throwIfAborted,
} from '../errors.js';
import { isRecord } from '../is-record.js';
import { linkedController } from '../linked-controller.js';
import {
  failedToolResult,
  type Message,
  type ToolCall,
  type ToolResult,
  userMessage,
} from '../messages.js';
import { checkModelResponse, modelSource } from '../model/check-response.js';
import { ResponseCollector } from '../model/collect-stream.js';
import type {
  JsonSchema,
  ModelRequest,
  ResponseFormat,
  StreamPart,
} from '../model/language-model.js';
import { inspectorFor } from '../observe/inspect-runs.js';
import { type AgentRunObserving, observeAgentRun } from '../observe/observe-agent-run.js';
import { observeChildRuns } from '../observe/observe-child-runs.js';
import type { RunObserver } from '../observe/run-observer.js';
import { OptionProblems } from '../options/option-problems.js';
import { type BatchResult, batchSettled } from '../runnable/batch.js';
import { jsonCandidates } from '../structured/extract-json.js';
import {
  anyJson,
  type StandardSchema,
  type StructuredOutput,
  structuredOutput,
} from '../structured/output-schema.js';
import type { RemoteToolExecutor } from '../tools/remote-executor.js';
import { ToolCollisionError } from '../tools/tool-collision.js';
import type { Usage } from '../usage.js';
import { type ChainOptions, chainConfig } from './chain-options.js';
import {
  type DurableActorInput,
  type DurableRun,
  type DurableRunOptions,
  delayedEventType,
  durableActor,
  durableOptionsOf,
  elapsedMs,
  isJournalProblem,
  type JournaledEffects,
  type LiveRun,
  LiveRuns,
  openJournal,
  performJournaled,
  RunDeadlines,
  refuseRestoredRun,
  runJournaled,
} from './durable-run.js';
import { EventQueue } from './event-queue.js';
import { runActor } from './run-actor.js';
import { type RunDetails, RunRecorder, withDetails } from './run-details.js';
import { modelCallError } from './run-errors.js';
import { checkedRunInput } from './run-input.js';
import { RunTools } from './run-tools.js';
import { toolCallJournal } from './tool-call-journal.js';

export interface ChainRunInput {
  /** The conversation so far; usually one user message. */
  readonly messages: readonly Message[];
  /** What earlier chains cached (SPEC C9). */
  readonly intermediateResults?: Readonly<Record<string, unknown>>;
}

export interface ChainRunOptions extends DurableRunOptions {
  /** Aborting ends the run in `failed` with an AbortError; the model call and every tool see it. */
  readonly signal?: AbortSignal;
  /** XState's inspection hook: pass `createBrowserInspector().inspect` or any observer; `inspectRuns` adds more. */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Told of this run as it happens (SPEC X4), besides the observers `observeRuns` registered. */
  readonly observers?: RunObserver | readonly RunObserver[];
  /** The run that started this one, for observers' tree of runs (a Runnable's RunConfig has it). */
  readonly parentRunId?: string;
}

export interface ChainResult<T> {
  readonly status: 'succeeded';
  /** The validated result: the parsed JSON with an outputSchema, else the answer text. */
  readonly result: T;
  readonly text: string;
  readonly transcript: readonly Message[];
  readonly usage: Usage;
  readonly iterations: number;
  readonly steps: readonly ChainStep[];
  /** Every tool call with the result the model got, in call order (LangChain's intermediate_steps). */
  readonly intermediateSteps: readonly IntermediateStep[];
  /** Present when the run reached a limit and `earlyStopping` ended it: which one, and how. */
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
  | {
      readonly type: 'final';
      readonly output: ChainOutput;
      readonly details: RunDetails;
      /** What `invoke` resolves with; undefined when the run failed (the stream then throws). */
      readonly result: ChainResult<T> | undefined;
    };

/** Fatal chain errors keep the whole partial run: transcript, usage and steps. */
export interface ChainPartialResult extends PartialResult {
  readonly steps: readonly ChainStep[];
  /** The tool calls the run made before it failed, with their results. */
  readonly intermediateSteps: readonly IntermediateStep[];
  readonly output: ChainOutput;
  /** Every model call and tool call made before the failure (SPEC A5). */
  readonly details: RunDetails;
}

// biome-ignore lint/suspicious/noExplicitAny: any actor system, whatever its actors.
type AnyActorSystem = ActorSystem<any>;
type ChainSnapshot = SnapshotFrom<typeof chainMachine>;
type PartListener = (part: StreamPart, iteration: number) => void;

export interface Chain<T> {
  /** `options.name`, or `'chain'`: how callbacks and run events call it. */
  readonly name: string;
  /** The machine with this chain's actors provided: invoke it from your own machines; its output's `result` is a T. */
  readonly machine: ChainMachine<T>;
  /** The input `machine` expects for a run: your messages plus this chain's config. */
  input(run: string | ChainRunInput): ChainInput;
  invoke(input: string | ChainRunInput, options?: ChainRunOptions): Promise<ChainResult<T>>;
  /** Every input, in order, at most `concurrency` at a time; settled, so one failure loses nothing (SPEC R1). */
  batch(
    inputs: readonly (string | ChainRunInput)[],
    options?: ChainRunOptions & { readonly concurrency?: number },
  ): Promise<BatchResult<ChainResult<T>>[]>;
  stream(
    input: string | ChainRunInput,
    options?: ChainRunOptions,
  ): AsyncIterable<ChainStreamEvent<T>>;
  /**
   * Resumes a durable run (one started with `runId` and `store`) after its process died:
   * replays its journal through the machine, answering every finished model and tool call
   * from it, and continues live from there. A run that had ended settles as it did, making
   * no call. Unknown ids, a tool loop's run, a journal of a newer format or other options
   * than the run started with are refused with a JournalError / JournalMismatchError.
   */
  resume(
    runId: string,
    options: Omit<ChainRunOptions, 'runId' | 'store'> & { readonly store: JournalStore },
  ): Promise<ChainResult<T>>;
  /**
   * An actor logic for an app's machine that runs this chain durably in `store`: invoke it
   * with input `{ runId, input }`. Restoring the app's machine from a snapshot re-invokes it,
   * and the run resumes from its journal (`chain.machine` cannot be resumed so: restored in
   * the middle of a run it fails with an AbortError saying to use this).
   */
  durable<Result extends ChainResult<T> = ChainResult<T>>(
    store: JournalStore,
    options?: Omit<ChainRunOptions, 'runId' | 'store' | 'signal'>,
  ): PromiseActorLogic<Result, DurableActorInput<string | ChainRunInput>>;
  /** Routes tool calls to a remote executor first (SPEC C10), from the next model call on, in running runs too. */
  connect(remote: RemoteToolExecutor): void;
  disconnect(): void;
}

/**
 * Builds a chain (SPEC C): validates every option at once (ConfigError naming it), provides
 * the chain machine's effects, and runs it. What happens next (think, run tools, warn,
 * correct, stop) is decided by machines/chain.ts; this file only performs the effects, and
 * words the corrections that validation sends back.
 */
export function createChain<T>(
  options: ChainOptions<T> & { readonly outputSchema: StandardSchema<T> },
): Chain<T>;
/** A JSON Schema or a JSON response format: the result is parsed JSON of no static type. */
export function createChain(
  options: ChainOptions<unknown> &
    (
      | { readonly outputSchema: JsonSchema }
      | { readonly responseFormat: { readonly type: 'json_object' | 'json_schema' } }
    ),
): Chain<unknown>;
/** No structured output: the result is the answer's text. */
export function createChain(options: ChainOptions<string>): Chain<string>;
/** Any options, with the result type stated: `createChain<Invoice>({ outputSchema: jsonSchema })`. */
export function createChain<T>(options: ChainOptions<T>): Chain<T>;
export function createChain<T>(options: ChainOptions<T>): Chain<T> {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'createChain needs an options object with at least a model');
  }
  // Every problem of the options is reported at once (SPEC Q4): the registry's (`tools`: an
  // array of defined tools, unique names), the schema's, and every other option's.
  const problems = new OptionProblems('createChain');
  const checkedLocal = problems.check(() => new LocalToolRegistry(options.tools ?? []));
  // SPEC C6: the schema an answer is checked against comes from outputSchema, or else from a
  // json_schema responseFormat; json_object only requires the answer to hold JSON.
  const format = options.responseFormat;
  const structured: StructuredOutput | undefined = problems.check(() =>
    options.outputSchema
      ? structuredOutput(options.outputSchema)
      : // A schema that is not an object is chainConfig's to report, as responseFormat.schema.
        format?.type === 'json_schema' && isRecord(format.schema)
        ? structuredOutput(format.schema, format.name)
        : format?.type === 'json_object'
          ? anyJson
          : undefined,
  );
  const config: ChainConfig = chainConfig(
    options as ChainOptions<unknown>,
    checkedLocal?.list() ?? [],
    problems, // throws every problem found, these two's included
  );
  const local = checkedLocal as LocalToolRegistry;
  const responseFormat: ResponseFormat | undefined =
    options.responseFormat ?? structured?.responseFormat;
  const { model } = options;
  const source = modelSource(model);
  let remote = options.remote;

  // What a run owns besides its JSON context: its tools (open streams), the controller that
  // aborts its effects, and where its text deltas go (stream()). Found by the run's actor
  // system; run() creates them and disposes of them however the run ends, since XState does
  // not stop an errored actor's children.
  interface RunResources {
    readonly controller: AbortController;
    readonly tools: RunTools;
    readonly onPart: PartListener | undefined;
    /** Every model call and tool call of the run, for `details()` (SPEC A5). */
    readonly recorder: RunRecorder;
    /** A durable run's journal: effects are journaled, and replayed on resume. */
    readonly journal: RunJournal | undefined;
  }
  const resources = new WeakMap<AnyActorSystem, RunResources>();
  /** The recorders of runs an app's machine invoked, by the chain actor (SPEC R5, X4). */
  const childRuns = new WeakMap<AnyActorRef, RunRecorder>();
  const newResources = (
    onPart?: PartListener,
    recorder = new RunRecorder(),
    journal?: RunJournal,
  ): RunResources => {
    const controller = new AbortController();
    setMaxListeners(0, controller.signal); // every concurrent tool call listens to it
    const tools = new RunTools({
      local,
      remote: () => remote,
      concurrency: options.toolConcurrency,
      timeoutMs: options.toolTimeoutMs,
      streamBatchSize: options.streamBatchSize ?? 5,
      onCallDone: (done) =>
        recorder.toolCall(
          done.call,
          done.result,
          done.executor,
          done.startedAt,
          done.endedAt,
          done.resumed,
        ),
      ...(recorder.observation && {
        onCallStart: (call: ToolCall, executor: string, startedAt: number) =>
          recorder.toolCallStarted(call, executor, startedAt),
      }),
    });
    return { controller, tools, onPart, recorder, journal };
  };
  const dispose = (run: RunResources) => {
    run.controller.abort(RUN_ENDED);
    run.recorder.finish();
    return run.tools.close();
  };

  async function callModel(
    input: CallModelInput,
    run: RunResources,
    signal: AbortSignal,
    reissued = false,
  ) {
    const specs = await run.tools.specs(signal);
    const request: ModelRequest = {
      ...options.modelSettings,
      messages: input.messages,
      // The final call of earlyStopping 'generate' must answer: its tools are listed but not
      // callable. Listed, because the transcript holds tool calls and results, and some
      // providers (Anthropic) refuse those in a request that defines no tools.
      ...(specs.length && { tools: specs }),
      ...(specs.length && input.final && { toolChoice: 'none' as const }),
      ...(responseFormat && { responseFormat }),
    };
    const { onPart } = run;
    const label = modelCallLabel(input);
    const resumed = reissued ? { possiblyRepeated: true as const } : undefined;
    return run.recorder.modelCall(
      label,
      request,
      onPart !== undefined,
      async () => {
        // Checked at the boundary (SPEC Q3): a malformed response is a ModelError here, and a
        // missing usage counts zero, instead of a TypeError deep in the machine.
        if (!onPart) return checkModelResponse(await model.generate(request, { signal }), source);
        const collector = new ResponseCollector();
        for await (const part of model.stream(request, { signal })) {
          onPart(part, input.iteration);
          collector.add(part);
        }
        return checkModelResponse(collector.response(), source);
      },
      resumed,
    );
  }

  /** A finished effect's journaled answer, as the machine gets it; recorded for details(). */
  function replayedAnswer(
    request: Exclude<ChainEffectRequest, { type: 'cancel' }>,
    outcome: Extract<EffectOutcome, { kind: 'replayed' }>,
    run: RunResources,
  ): ChainEvent {
    // A chain's effect answers once.
    const event = outcome.answers[0] as ChainEvent;
    if (request.type === 'callModel' && event.type === 'callModel.done') {
      const request_: ModelRequest = { ...options.modelSettings, messages: request.input.messages };
      run.recorder.replayedModelCall(
        modelCallLabel(request.input),
        request_,
        event.output,
        outcome.ms,
      );
    }
    if (request.type !== 'executeTools' || event.type !== 'executeTools.done') return event;
    const byId = new Map(outcome.calls.map((call) => [call.callId, call]));
    const results = request.input.calls.map((call) => {
      const known = byId.get(call.id);
      const result = known?.finished
        ? (known.result as ToolResult)
        : failedToolResult(call, `The run's journal holds no result for call ${call.id}.`);
      const now = performance.now();
      run.recorder.toolCall(call, result, known?.executor ?? 'local', now, now + (known?.ms ?? 0), {
        replayed: true,
      });
      return result;
    });
    const output = { ...event.output, results };
    run.tools.replayed(request.input.calls, output);
    return { type: event.type, output };
  }

  // The one actor a run's machine invokes: it performs each effect the machine requests and
  // answers with its `.done` / `.error` event. It owns the run's tools (open streams) and an
  // AbortController that stopping the run (final state, ABORT) aborts. Effects run under a
  // controller of their own, linked to the run's, that `cancel` (maxExecutionTime) aborts and
  // replaces: what was in flight is aborted, its answers, which the machine no longer waits
  // for, are dropped, and what the machine asks next runs under the new one (streams opened
  // before are aborted too: no step reads them after a stop). One controller per cancel, not
  // per effect: two AbortControllers a step cost the bench's chain step ~30 µs of ~150.
  const deadlines = new RunDeadlines();
  const effects = fromCallback<ChainEffectRequest>(({ sendBack, receive, system, self }) => {
    // A chain invoked from an app's machine has no run() around it: it owns its resources,
    // and records into the observed run its chain actor (this actor's parent) reports as.
    const owned = resources.get(system)
      ? undefined
      : newResources(undefined, self._parent && childRuns.get(self._parent));
    const run = (resources.get(system) ?? owned) as RunResources;
    const { controller, tools, journal } = run;
    let asked = false;
    refuseRestoredRun(self, () => asked, sendBack, 'chain');
    let current = linkedController(controller.signal).controller;
    type Live = Extract<EffectOutcome, { kind: 'live' }>;
    const answer = (
      type: Exclude<ChainEffectRequest['type'], 'cancel'>,
      work: (signal: AbortSignal) => Promise<unknown>,
      live?: Live,
    ) => {
      const { signal } = current;
      const startedAt = live && performance.now();
      const settle = (event: ChainEvent) => {
        if (signal.aborted) return;
        // Journaled as it is delivered: the journal's order is the order the machine saw.
        if (live && journal) {
          journal.answered(live.seq, journaledAnswer(event), elapsedMs(startedAt));
        }
        sendBack(event);
      };
      const journaled =
        live && journal
          ? async (signal: AbortSignal) => {
              await journal.requested(live, type);
              // Cancelled while its request was written: it does not start.
              throwIfAborted(signal);
              return work(signal);
            }
          : work;
      journaled(signal).then(
        (output) => settle({ type: `${type}.done`, output } as ChainEvent),
        (error: unknown) => settle({ type: `${type}.error`, error } as ChainEvent),
      );
    };
    const perform = (request: Exclude<ChainEffectRequest, { type: 'cancel' }>, live?: Live) => {
      switch (request.type) {
        case 'callModel':
          return answer(
            'callModel',
            (signal) => callModel(request.input, run, signal, live?.reissued),
            live,
          );
        case 'executeTools': {
          const stepJournal = live && journal && toolCallJournal(journal, live.seq, live.calls);
          return answer(
            'executeTools',
            (signal) =>
              tools.execute(request.input.calls, signal, request.input.directCallId, stepJournal),
            live,
          );
        }
        case 'validateResult':
          return answer('validateResult', () => validate(request.input.text), live);
      }
    };
    const journaledEffects:
      | JournaledEffects<Exclude<ChainEffectRequest, { type: 'cancel' }>>
      | undefined = journal && {
      journal,
      kind: 'chain',
      sendBack: sendBack as JournaledEffects<ChainEffectRequest & { input: unknown }>['sendBack'],
      timerEvent: MAX_EXECUTION_TIME_EVENT,
      describe: (request) => EFFECT_NAMES[request.type],
      live: (request, outcome) => perform(request, outcome),
      replay: (request, outcome) => sendBack(replayedAnswer(request, outcome, run)),
    };
    receive((request) => {
      asked = true;
      if (request.type === 'cancel') {
        // Only the deadline cancels a chain's effects: journaled as the timer firing.
        journal?.timerFired('maxExecutionTime');
        current.abort(new AbortError(`Cancelled: the run reached ${request.reason}`));
        current = linkedController(controller.signal).controller;
        return;
      }
      if (journaledEffects) return performJournaled(journaledEffects, request);
      return perform(request);
    });
    return () => {
      void dispose(run);
    };
  });

  const observedAgent = {
    name: options.name ?? 'chain',
    kind: 'chain',
    machine: chainMachine.provide({
      actors: { effects },
      delays: {
        // A durable run's deadline counts from its journaled start, across restarts. One
        // machine serves every run (a machine made per run cost a durable step ~14 µs).
        maxExecutionTime: ({ context }) =>
          deadlines.delay(context.config, context.config.maxExecutionTime ?? 0),
      },
    }) as ChainMachine<T>,
    model,
  } as const;
  const machine = observeChildRuns(observedAgent.machine, observedAgent, {
    runInput: chainRunInput,
    begin(actor, observation) {
      const recorder = new RunRecorder(observation);
      childRuns.set(actor, recorder);
      return (end) => {
        childRuns.delete(actor);
        recorder.finish();
        if (end.how === 'done') {
          const output = end.output as ChainOutput;
          if (output.status === 'failed') errorOf(output, recorder);
          else settle(output, recorder);
          return;
        }
        const context = end.context as ChainContext | undefined;
        if (end.how === 'crashed' && context) {
          errorOf(brokenRunOutput(context, machineFailed(end.error), end.error), recorder);
          return;
        }
        const output = context && brokenRunOutput(context, 'stopped', undefined);
        const partial = output && {
          transcript: output.transcript.toArray(),
          usage: output.usage,
          steps: output.steps,
          details: recorder.details(),
        };
        const error =
          end.how === 'stopped'
            ? new AbortError(
                'The chain was stopped before it finished: the machine that invoked it left the state that runs it',
                { ...(partial && { partial }) },
              )
            : new ChainError(machineFailed(end.error), { cause: end.error });
        observation.failed(error, context?.usage);
      };
    },
  });

  async function validate(text: string): Promise<ValidationOutcome> {
    let value: unknown = text;
    if (structured) {
      // The first JSON value in the answer that passes the schema; else the first one's errors.
      let firstIssues: string[] | undefined;
      let found = false;
      for (const candidate of jsonCandidates(text)) {
        const checked = await structured.validate(candidate);
        if (checked.ok) {
          value = checked.value;
          found = true;
          break;
        }
        firstIssues ??= checked.issues;
      }
      if (!found && !firstIssues) {
        return {
          ok: false,
          message:
            'Your answer contains no JSON value. Answer with only the JSON value the schema describes.',
        };
      }
      if (!found) {
        return {
          ok: false,
          message: `Your JSON does not match the schema:\n${(firstIssues ?? []).map((i) => `- ${i}`).join('\n')}\nAnswer again with corrected JSON only.`,
        };
      }
    }
    if (options.validateResult) {
      const verdict = await options.validateResult(value as T);
      if (!verdict.ok) return { ok: false, message: verdict.message };
    }
    return { ok: true, value };
  }

  function input(run: string | ChainRunInput): ChainInput {
    const runInput =
      typeof run === 'string'
        ? { messages: [userMessage(run)] }
        : checkedRunInput(run, `chain '${options.name ?? 'chain'}'`);
    return {
      config,
      messages: runInput.messages,
      ...(runInput.intermediateResults && { intermediateResults: runInput.intermediateResults }),
    };
  }

  async function run(
    runInput: string | ChainRunInput,
    runOptions: ChainRunOptions,
    recorder: RunRecorder,
    onPart?: PartListener,
    onSnapshot?: (snapshot: ChainSnapshot) => void,
    openJournal?: (machineInput: ChainInput) => Promise<RunJournal>,
  ): Promise<ChainOutput> {
    const { observation } = recorder;
    let machineInput: ChainInput;
    let journal: RunJournal | undefined;
    try {
      machineInput = input(runInput);
      journal = await openJournal?.(machineInput);
    } catch (error) {
      observation?.failed(error);
      throw error;
    }
    const inspect = inspectorFor(runOptions.inspect);
    const actor = createActor(machine, {
      input: journal
        ? { ...machineInput, config: deadlines.configFor(machineInput.config, journal) }
        : machineInput,
      ...(inspect && { inspect }),
    });
    const runResources = newResources(onPart, recorder, journal);
    resources.set(actor.system, runResources);
    // Observers see every macrostep; unobserved runs subscribe only when streamed, as before.
    const observedSnapshot = observation
      ? (snapshot: ChainSnapshot) => {
          onSnapshot?.(snapshot);
          observation.state(snapshot.value, snapshot.context);
        }
      : onSnapshot;
    if (journal) {
      try {
        let output: ChainOutput;
        try {
          output = await runJournaled(actor, journal, {
            signal: runOptions.signal,
            onSnapshot: observedSnapshot,
          });
        } catch (error) {
          if (isJournalProblem(error)) throw error;
          output = brokenRunOutput(actor.getSnapshot().context, machineFailed(error), error);
        }
        await journal.end(output.status === 'failed' ? 'failed' : 'succeeded');
        return output;
      } catch (error) {
        observation?.failed(error);
        throw error;
      } finally {
        actor.stop();
        await dispose(runResources);
      }
    }
    try {
      return await runActor(actor, { signal: runOptions.signal, onSnapshot: observedSnapshot });
    } catch (error) {
      // The machine itself threw (a bug, or a provided action that failed): a failed run like
      // any other, CHAIN_ERROR, that keeps what the run had done, its last answer included.
      return brokenRunOutput(actor.getSnapshot().context, machineFailed(error), error);
    } finally {
      await dispose(runResources);
    }
  }

  /** A durable run's journal: begun, or attached to when the store holds `runId` already. */
  const journalOpener = (durable: DurableRun) => (machineInput: ChainInput) =>
    openJournal(durable, 'chain', chainRunInput(machineInput), config);
  const liveRuns = new LiveRuns<ChainOutput>();
  const liveRun = liveRuns.run.bind(liveRuns);

  /** What a durable invoke() or resume() resolves with: its own run's, or the one it attached to. */
  async function settleLive(live: LiveRun<ChainOutput>): Promise<ChainResult<T>> {
    const { output, recorder } = await live.ended;
    // Observers were told of the run by whoever started it.
    return settle<T>(output, recorder, !live.attached);
  }

  /** A run's recorder, observed when anyone observes runs (SPEC X4): the run starts here. */
  const recorderFor = (runInput: string | ChainRunInput, runOptions: AgentRunObserving) =>
    new RunRecorder(observeAgentRun(runOptions, observedAgent, runInput));

  async function invoke(
    runInput: string | ChainRunInput,
    runOptions: ChainRunOptions = {},
  ): Promise<ChainResult<T>> {
    const recorder = recorderFor(runInput, runOptions);
    const durable = durableOptionsOf(runOptions, `chain '${observedAgent.name}'`);
    if (!durable) return settle<T>(await run(runInput, runOptions, recorder), recorder);
    return settleLive(
      liveRun(durable, async () => ({
        output: await run(
          runInput,
          runOptions,
          recorder,
          undefined,
          undefined,
          journalOpener(durable),
        ),
        recorder,
      })),
    );
  }

  async function resume(
    runId: string,
    runOptions: Omit<ChainRunOptions, 'runId' | 'store'> & { readonly store: JournalStore },
  ): Promise<ChainResult<T>> {
    const durable = durableOptionsOf({ ...runOptions, runId }, `chain '${observedAgent.name}'`);
    if (!durable) throw new ConfigError('store', 'resume(runId, { store }) needs the store');
    return settleLive(
      liveRun(durable, async () => {
        const journal = await RunJournal.reopen(durable.store, runId, 'chain', config);
        const runInput = journal.input as ChainRunInput;
        const recorder = recorderFor(runInput, runOptions);
        const output = await run(
          runInput,
          runOptions,
          recorder,
          undefined,
          undefined,
          async () => journal,
        );
        return { output, recorder };
      }),
    );
  }

  return {
    name: options.name ?? 'chain',
    machine,
    input,
    invoke,
    resume,
    // The generic Result only keeps Chain<T> assignable to Chain<unknown>; it is ChainResult<T>.
    durable: ((store, durableOptions = {}) =>
      durableActor(observedAgent.name, (runInput: string | ChainRunInput, runId, signal) =>
        invoke(runInput, { ...durableOptions, runId, store, signal }),
      )) as Chain<T>['durable'],
    batch: (inputs, batchOptions) => batchSettled(inputs, batchOptions, invoke),
    stream(runInput, runOptions = {}) {
      // Breaking out of the loop stops the run: nobody would read what it spends tokens on.
      const { controller: stop, unlink } = linkedController(runOptions.signal);
      const queue = new EventQueue<ChainStreamEvent<T>>(() =>
        stop.abort('the stream was closed by its reader'),
      );
      let last:
        | { value: string; steps: number; warned: { iterations: boolean; tokens: boolean } }
        | undefined;
      const onSnapshot = (snapshot: ChainSnapshot) => {
        const { context } = snapshot;
        const value = String(snapshot.value);
        // What happened in the step that just ended comes before the state it led to.
        for (const step of context.steps.slice(last?.steps ?? 0)) {
          for (const result of step.toolResults) queue.push({ type: 'tool-result', result });
        }
        for (const kind of ['iterations', 'tokens'] as const) {
          const warning = context.config.warnings[kind];
          if (warning && context.warned[kind] && !last?.warned[kind]) {
            queue.push({ type: 'warning', kind, text: warning.prompt });
          }
        }
        if (value !== last?.value) {
          queue.push({ type: 'state', state: value });
          if (value === 'doing')
            for (const toolCall of context.toolCalls) queue.push({ type: 'tool-call', toolCall });
        }
        last = { value, steps: context.steps.length, warned: context.warned };
      };
      const onPart = (part: StreamPart, iteration: number) => {
        if (part.type === 'text-delta')
          queue.push({ type: 'text-delta', delta: part.delta, iteration });
      };
      let recorder = recorderFor(runInput, runOptions);
      let observe = true;
      const streamOptions = { ...runOptions, signal: stop.signal };
      const durableRun = async (durable: DurableRun) => {
        const live = liveRun(durable, async () => ({
          output: await run(
            runInput,
            streamOptions,
            recorder,
            onPart,
            onSnapshot,
            journalOpener(durable),
          ),
          recorder,
        }));
        // Attached to a run this process is making: its final event only.
        const ended = await live.ended;
        recorder = ended.recorder;
        observe = !live.attached;
        return ended.output;
      };
      const output = (async () => {
        const durable = durableOptionsOf(runOptions, `chain '${observedAgent.name}'`);
        return durable
          ? durableRun(durable)
          : run(runInput, streamOptions, recorder, onPart, onSnapshot);
      })();
      queue.endWith(
        output,
        (output) => ({
          type: 'final',
          output,
          details: recorder.details(),
          result: output.status === 'failed' ? undefined : settle<T>(output, recorder, observe),
        }),
        (output) => (output.status === 'failed' ? errorOf(output, recorder, observe) : undefined),
        unlink,
      );
      return queue;
    },
    connect(next) {
      if (!next || typeof next.execute !== 'function' || typeof next.listTools !== 'function') {
        throw new TypeError(
          'connect(remote): remote must implement listTools() and execute(call, { signal })',
        );
      }
      remote = next;
    },
    disconnect() {
      remote = undefined;
    },
  };
}

/** What observers are told a chain actor an app's machine invoked started with: invoke()'s input shape. */
function chainRunInput(machineInput: unknown): unknown {
  if (typeof machineInput !== 'object' || machineInput === null) return machineInput;
  const { messages, intermediateResults } = machineInput as Partial<ChainInput>;
  return { messages, ...(intermediateResults && { intermediateResults }) };
}

function machineFailed(error: unknown): string {
  return `The chain machine failed: ${error instanceof Error ? error.message : String(error)}`;
}

/** What a mismatch calls each effect of the chain. */
const EFFECT_NAMES = {
  callModel: 'model call',
  executeTools: 'tool step',
  validateResult: 'validation',
} as const;

/** The event the machine gets when maxExecutionTime fires: a journaled firing is replayed as it. */
const MAX_EXECUTION_TIME_EVENT = delayedEventType(chainMachine, 'maxExecutionTime');

function modelCallLabel(input: CallModelInput): string {
  return `${input.final ? 'final answer, ' : ''}generation ${input.iteration}`;
}

/**
 * A chain's answer as journaled: a tool step's results are journaled call by call (`result`
 * entries, see RunTools), so its answer keeps only the rest; replayedAnswer puts them back.
 */
function journaledAnswer(event: ChainEvent): unknown {
  if (event.type !== 'executeTools.done') return event;
  const { results: _results, ...rest } = event.output;
  return { type: event.type, output: rest };
}

/** The abort reason effects see when their run ends first; made once, since stacks are costly. */
const RUN_ENDED = new AbortError('The run ended before this effect finished');

/** The result of a succeeded run, or the typed error of a failed one (with the partial run). */
function settle<T>(output: ChainOutput, recorder: RunRecorder, observe = true): ChainResult<T> {
  if (output.status === 'failed') throw errorOf(output, recorder, observe);
  const {
    status,
    result,
    text,
    transcript,
    usage,
    iterations,
    steps,
    intermediateSteps,
    stopped,
    mutationLog,
    intermediateResults,
  } = output;
  const settled = withDetails(
    {
      status,
      result: result as T,
      text,
      transcript: transcript.toArray(),
      usage,
      iterations,
      steps,
      intermediateSteps,
      ...(stopped && { stopped }),
      mutationLog,
      intermediateResults,
    },
    recorder,
  );
  if (observe) recorder.observation?.succeeded(settled, usage);
  return settled;
}

/** Maps a failure's code to its error class, carrying the partial run. */
function errorOf(
  output: Extract<ChainOutput, { status: 'failed' }>,
  recorder: RunRecorder,
  observe = true,
): StatecraftError {
  const { failure } = output;
  const partial: ChainPartialResult = {
    transcript: output.transcript.toArray(),
    usage: output.usage,
    steps: output.steps,
    intermediateSteps: output.intermediateSteps,
    output,
    details: recorder.details(),
  };
  const options = { partial, ...(failure.cause !== undefined && { cause: failure.cause }) };
  const error = chainErrorOf(failure, output, options);
  if (observe) recorder.observation?.failed(error, output.usage);
  return error;
}

function chainErrorOf(
  failure: Extract<ChainOutput, { status: 'failed' }>['failure'],
  output: Extract<ChainOutput, { status: 'failed' }>,
  options: { partial: ChainPartialResult; cause?: unknown },
): StatecraftError {
  switch (failure.code) {
    case 'PROTOCOL_ERROR':
      return new ProtocolError(failure.message, options);
    case 'TOKEN_LIMIT':
      return new TokenLimitError(failure.limit ?? Number.NaN, output.usage.totalTokens, options);
    case 'TIMEOUT':
      return new TimeoutError(failure.limit ?? Number.NaN, failure.message, options);
    case 'ABORTED':
      return new AbortError(failure.message, options);
    case 'MODEL_ERROR':
      return modelCallError(failure.message, failure.cause, options);
    case 'CHAIN_ERROR':
      return new ChainError(failure.message, options);
    case 'CONFIG_ERROR':
      return configErrorOf(failure.cause, failure.message, options);
  }
}

/** The configuration error a run failed with, again, now carrying the partial run. */
function configErrorOf(
  cause: unknown,
  message: string,
  options: { partial: ChainPartialResult; cause?: unknown },
): StatecraftError {
  if (ToolCollisionError.isInstance(cause)) {
    return new ToolCollisionError(cause.executor, cause.toolNames, options);
  }
  const option = ConfigError.isInstance(cause) ? cause.option : 'options';
  return Object.assign(new ConfigError(option, message, options), { message });
}
