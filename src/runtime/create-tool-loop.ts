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
  type ExecuteInput,
  type PlannedRound,
  type PlanOutcome,
  type RespondInput,
  type ResponseOutcome,
  type StopReason,
  type ToolLoopConfig,
  type ToolLoopContext,
  type ToolLoopEffectRequest,
  type ToolLoopEvent,
  type ToolLoopFailure,
  type ToolLoopInput,
  type ToolLoopOutput,
  toolLoopMachine,
} from '../../machines/tool-loop.js';
import { type EffectOutcome, RunJournal } from '../durable/run-journal.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import {
  AbortError,
  ChainError,
  ConfigError,
  InputError,
  ModelError,
  type PartialResult,
  ProtocolError,
  StatecraftError,
  TimeoutError,
  throwIfAborted,
} from '../errors.js';
import { isRecord } from '../is-record.js';
import { linkedController } from '../linked-controller.js';
import type { Message, ToolResult } from '../messages.js';
import { checkModelResponse, modelSource } from '../model/check-response.js';
import { ResponseCollector } from '../model/collect-stream.js';
import type { ModelRequest, ModelResponse, StreamPart } from '../model/language-model.js';
import { responseText } from '../model/language-model.js';
import { inspectorFor } from '../observe/inspect-runs.js';
import {
  type AgentRunObserving,
  childObserving,
  observeAgentRun,
} from '../observe/observe-agent-run.js';
import { observeChildRuns } from '../observe/observe-child-runs.js';
import type { RunObserver } from '../observe/run-observer.js';
import { OptionProblems } from '../options/option-problems.js';
import { type BatchResult, batchSettled } from '../runnable/batch.js';
import { jsonCandidates } from '../structured/extract-json.js';
import { readPlanStream, type StreamedPlan } from '../tool-loop/instant-plan.js';
import type { Plan } from '../tool-loop/plan.js';
import {
  type PlannerContext,
  plannerMessages,
  planResponseFormat,
} from '../tool-loop/planner-context.js';
import type { ToolExecutionRecord } from '../tool-loop/records.js';
import { recordOf } from '../tool-loop/records.js';
import { responseMessages } from '../tool-loop/response-messages.js';
import { Transcript } from '../transcript.js';
import { type Usage, ZERO_USAGE } from '../usage.js';
import { isAsyncIterable } from './async-iterable.js';
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
import { commandCall, executeCommands } from './execute-commands.js';
import { runActor } from './run-actor.js';
import { type RunDetails, RunRecorder, withDetails } from './run-details.js';
import { modelCallError, reasonText } from './run-errors.js';
import { type ToolCallJournal, toolCallJournal } from './tool-call-journal.js';
import { type ToolLoopOptions, toolLoopConfig } from './tool-loop-options.js';

export interface ToolLoopRunInput {
  readonly userInput: string;
  /** A requirement the planner and the final response should meet (SPEC T3). */
  readonly extraRequirement?: string;
}

export interface ToolLoopRunOptions extends DurableRunOptions {
  /** Aborting ends the run with an AbortError; the planner, every running tool and the responder see it. */
  readonly signal?: AbortSignal;
  /** XState's inspection hook, besides the inspectors `inspectRuns` registered. */
  readonly inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Told of this run as it happens (SPEC X4), besides the observers `observeRuns` registered. */
  readonly observers?: RunObserver | readonly RunObserver[];
  /** The run that started this one, for observers' tree of runs (a Runnable's RunConfig has it). */
  readonly parentRunId?: string;
}

export interface ToolLoopResult {
  readonly status: 'done';
  /** The final response's text; undefined when the loop makes none (`respond: false`). */
  readonly answer: string | undefined;
  /** The final response's result: a chain responder's validated result, else the text. */
  readonly result: unknown;
  readonly stopReason: StopReason;
  /** Rounds executed. */
  readonly rounds: number;
  /** Every round's normalized plan, the last one (which stopped the loop) included. */
  readonly plans: readonly PlannedRound[];
  /** Keyed by purpose (SPEC T8); {} when no tool ran. */
  readonly actionResults: Readonly<Record<string, unknown>>;
  /** The quote-your-sources instruction the response saw; undefined when no tool ran. */
  readonly extraInstruction: string | undefined;
  /** Every execution record, in round and command order. */
  readonly toolLogs: readonly ToolExecutionRecord[];
  /** Tokens spent by the planner and the final response. */
  readonly usage: Usage;
  /** Every model call (compiled request, response, usage, latency) and tool call of the run (SPEC A5). */
  details(): RunDetails;
}

export type ToolLoopStreamEvent =
  | { readonly type: 'state'; readonly state: string }
  | { readonly type: 'round-started'; readonly roundIndex: number }
  | {
      readonly type: 'commands-planned';
      readonly roundIndex: number;
      readonly plan: Plan;
      readonly shortCircuited: boolean;
    }
  | {
      readonly type: 'record';
      readonly roundIndex: number;
      /** The command's position in its round. */
      readonly index: number;
      readonly record: ToolExecutionRecord;
    }
  | { readonly type: 'text-delta'; readonly delta: string }
  | {
      readonly type: 'final';
      readonly output: ToolLoopOutput;
      readonly details: RunDetails;
      /** What `invoke` resolves with; undefined when the run failed (the stream then throws). */
      readonly result: ToolLoopResult | undefined;
    };

/** A failed loop keeps what it did: the records so far, usage, and the machine's output. */
export interface ToolLoopPartialResult extends PartialResult {
  readonly toolLogs: readonly ToolExecutionRecord[];
  /** The machine's output; absent only when the machine itself crashed. */
  readonly output?: ToolLoopOutput;
  /** Every model call and tool call made before the failure (SPEC A5). */
  readonly details: RunDetails;
}

export interface ToolLoop {
  /** The machine with this loop's actors provided: invoke it from your own machines. */
  /** `options.name`, or `'tool-loop'`: how callbacks and run events call it. */
  readonly name: string;
  readonly machine: typeof toolLoopMachine;
  /** The input `machine` expects for a run. */
  input(run: string | ToolLoopRunInput): ToolLoopInput;
  invoke(input: string | ToolLoopRunInput, options?: ToolLoopRunOptions): Promise<ToolLoopResult>;
  /** Every input, in order, at most `concurrency` at a time; settled, so one failure loses nothing (SPEC R1). */
  batch(
    inputs: readonly (string | ToolLoopRunInput)[],
    options?: ToolLoopRunOptions & { readonly concurrency?: number },
  ): Promise<BatchResult<ToolLoopResult>[]>;
  stream(
    input: string | ToolLoopRunInput,
    options?: ToolLoopRunOptions,
  ): AsyncIterable<ToolLoopStreamEvent>;
  /**
   * Resumes a durable run (started with `runId` and `store`) after its process died: replays
   * its journal, answering every finished plan, tool call and response from it, and
   * continues live. Refused like a chain's resume (unknown id, a chain's run, newer format,
   * other options).
   */
  resume(
    runId: string,
    options: Omit<ToolLoopRunOptions, 'runId' | 'store'> & { readonly store: JournalStore },
  ): Promise<ToolLoopResult>;
  /**
   * An actor logic for an app's machine that runs this loop durably in `store`: invoke it
   * with input `{ runId, input }`; restoring the app's machine re-invokes it, and the run
   * resumes from its journal.
   */
  durable(
    store: JournalStore,
    options?: Omit<ToolLoopRunOptions, 'runId' | 'store' | 'signal'>,
  ): PromiseActorLogic<ToolLoopResult, DurableActorInput<string | ToolLoopRunInput>>;
  /**
   * One planning round, normalized, without executing anything. A malformed answer rejects
   * with a ProtocolError at once: `planRetries` applies to runs, not to this probe.
   */
  planOnly(input: string | ToolLoopRunInput, options?: ToolLoopRunOptions): Promise<Plan>;
}

// biome-ignore lint/suspicious/noExplicitAny: any actor system, whatever its actors.
type AnyActorSystem = ActorSystem<any>;
type ToolLoopSnapshot = SnapshotFrom<typeof toolLoopMachine>;

/**
 * Builds a tool loop (SPEC T): validates every option at once, provides the machine's
 * `plan`, `execute` and `respond` actors, and runs it. Whether to plan again, execute, stop
 * or respond is decided by machines/tool-loop.ts; this file performs the work.
 */
export function createToolLoop(options: ToolLoopOptions): ToolLoop {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('options', 'createToolLoop needs an options object');
  }
  // Every problem of the options at once (SPEC Q4), the registry's (`tools`) included.
  const problems = new OptionProblems('createToolLoop');
  const checkedRegistry = problems.check(() => new LocalToolRegistry(options.tools ?? []));
  const config: ToolLoopConfig = toolLoopConfig(options, checkedRegistry?.list() ?? [], problems);
  const registry = checkedRegistry as LocalToolRegistry; // toolLoopConfig threw otherwise
  const specs = registry.specs();
  const { model, planner } = options;
  const responseFormat = planResponseFormat(specs);
  const instant = options.instant ?? true;
  const respond = options.respond ?? model !== undefined;
  // What a run started by invoke(), stream() or planOnly() gives its actors, found by the
  // run's actor system: where the final response's text deltas go (stream()), and the
  // recorder of its model and tool calls (details()). A loop invoked from an app's machine
  // has a recorder only while someone observes runs (SPEC R5, X4), found by the loop actor,
  // the parent of the actors it invokes.
  interface RunHooks {
    readonly recorder: RunRecorder;
    readonly onDelta?: (delta: string) => void;
    /** A durable run's journal: effects are journaled, and replayed on resume. */
    readonly journal?: RunJournal;
  }
  const runs = new WeakMap<AnyActorSystem, RunHooks>();
  const childRuns = new WeakMap<AnyActorRef, RunHooks>();
  const hooksOf = (system: AnyActorSystem, self: AnyActorRef): RunHooks | undefined =>
    (self._parent && childRuns.get(self._parent)) ?? runs.get(system);

  async function plan(
    context: PlannerContext,
    signal: AbortSignal,
    recorder: RunRecorder | undefined,
  ): Promise<PlanOutcome> {
    throwIfAborted(signal);
    if (planner) {
      const answer = await planner(context, { signal });
      if (isAsyncIterable(answer)) {
        // A planner of your own that streams: read early with `instant`, whole without.
        return instant
          ? planOf(await readPlanStream(textParts(answer), () => {}))
          : parsedPlan(await joinText(answer), ZERO_USAGE);
      }
      if (typeof answer === 'string') return parsedPlan(answer, ZERO_USAGE);
      return { raw: answer, usage: ZERO_USAGE, shortCircuited: false };
    }
    if (!model) throw new Error('unreachable: toolLoopConfig requires a model or a planner');
    const request: ModelRequest = {
      messages: Transcript.from(plannerMessages(context)),
      responseFormat,
    };
    const purpose = `plan round ${context.roundIndex + 1}`;
    if (!instant) {
      const call = async () =>
        checkModelResponse(await model.generate(request, { signal }), modelSource(model));
      const response = await (recorder
        ? recorder.modelCall(purpose, request, false, call)
        : call());
      return parsedPlan(responseText(response), response.usage);
    }
    // Our own controller, so deciding early can cancel the provider call without ending the run.
    const { controller: early, unlink } = linkedController(signal);
    const recording = recorder?.startModelCall(purpose, request, true);
    try {
      const streamed = await readPlanStream(model.stream(request, { signal: early.signal }), () =>
        early.abort(DECIDED_EARLY),
      );
      // Checked like any response (SPEC Q3): a usage part of the wrong shape counts zero.
      const answer = checkModelResponse(
        {
          content: [{ type: 'text', text: streamed.text }],
          usage: streamed.usage,
          finishReason: streamed.shortCircuited
            ? { unified: 'other', raw: 'decided on nextAction: response; the rest was not read' }
            : { unified: 'stop', raw: undefined },
        },
        modelSource(model),
      );
      recording?.answered(answer);
      return planOf({ ...streamed, usage: answer.usage });
    } catch (error) {
      recording?.failed(error);
      throw error;
    } finally {
      unlink();
    }
  }

  function execute(
    input: ExecuteInput,
    signal: AbortSignal,
    recorder: RunRecorder | undefined,
    onRecord: (index: number, record: ToolExecutionRecord) => void,
    journal?: ToolCallJournal,
  ): Promise<readonly ToolExecutionRecord[]> {
    return executeCommands(input.commands, {
      registry,
      concurrency: options.concurrency,
      signal,
      idPrefix: roundPrefix(input),
      onRecord,
      ...(journal && { journal }),
      ...(recorder && {
        onCallDone: (call, result, startedAt, endedAt, resumed) =>
          recorder.toolCall(call, result, 'local', startedAt, endedAt, resumed),
      }),
      ...(recorder?.observation && {
        onCallStart: (call, startedAt) => recorder.toolCallStarted(call, 'local', startedAt),
      }),
    });
  }

  async function respondTo(
    input: RespondInput,
    signal: AbortSignal,
    hooks: RunHooks | undefined,
  ): Promise<ResponseOutcome> {
    const { userInput, extraRequirement, convergence } = input;
    if (typeof respond === 'function') {
      const text = await respond(
        {
          userInput,
          extraRequirement,
          actionResults: convergence?.actionResults ?? {},
          extraInstruction: convergence?.extraInstruction,
        },
        { signal },
      );
      return { text: String(text), result: text, usage: ZERO_USAGE };
    }
    const messages = responseMessages(
      userInput,
      extraRequirement,
      convergence,
      options.instructions,
    );
    if (typeof respond === 'object') {
      // A chain responder's run is a child of this loop's run for observers (SPEC X4).
      const observing = childObserving(hooks?.recorder.observation);
      const answer = await respond.invoke({ messages }, { signal, ...observing });
      return { text: answer.text, result: answer.result, usage: answer.usage };
    }
    return respondWithModel(messages, signal, hooks);
  }

  // The one actor a loop's machine invokes: it performs each effect the machine requests and
  // answers with its `.done` / `.error` event (and `execute.record` per finished command).
  // Effects share one controller, aborted only when the loop stops with something in flight:
  // on `cancel` (timeout, ABORT), or when the actor is stopped (the app's machine left the
  // state that runs the loop); late answers are dropped then. A run that ends with nothing in
  // flight aborts nothing, so the signals its finished calls saw stay unaborted, as they were
  // when each effect was an actor of its own.
  const deadlines = new RunDeadlines();
  const effects = fromCallback<ToolLoopEffectRequest>(({ sendBack, receive, system, self }) => {
    const controller = new AbortController();
    setMaxListeners(0, controller.signal); // every running tool listens to it
    const { signal } = controller;
    let inFlight = 0;
    let stopped = false;
    const send = (event: ToolLoopEvent) => {
      if (!stopped) sendBack(event);
    };
    const stop = (reason: AbortError) => {
      stopped = true;
      if (inFlight > 0) controller.abort(reason);
    };
    const hooks = hooksOf(system, self);
    const journal = hooks?.journal;
    let asked = false;
    refuseRestoredRun(self, () => asked, sendBack, 'tool loop');
    type Live = Extract<EffectOutcome, { kind: 'live' }>;
    const answer = (
      type: 'plan' | 'execute' | 'respond',
      start: () => Promise<unknown>,
      live?: Live,
    ) => {
      inFlight++;
      const startedAt = live && performance.now();
      // Journaled as it is delivered (a durable run): the journal's order is the machine's.
      const deliver = (event: ToolLoopEvent) => {
        if (!stopped && live && journal) {
          journal.answered(live.seq, journaledLoopAnswer(event), elapsedMs(startedAt));
        }
        send(event);
      };
      let work: Promise<unknown>;
      try {
        work =
          live && journal
            ? journal.requested(live, type).then(() => {
                // Stopped while its request was written: it does not start.
                throwIfAborted(signal);
                return start();
              })
            : start();
      } catch (error) {
        work = Promise.reject(error);
      }
      work.then(
        (output) => {
          inFlight--;
          deliver({ type: `${type}.done`, output } as ToolLoopEvent);
        },
        (error: unknown) => {
          inFlight--;
          deliver({ type: `${type}.error`, error } as ToolLoopEvent);
        },
      );
    };
    const perform = (request: LoopEffect, live?: Live) => {
      switch (request.type) {
        case 'plan':
          return answer('plan', () => plan(request.input, signal, hooks?.recorder), live);
        case 'execute': {
          const roundJournal = live && journal && toolCallJournal(journal, live.seq, live.calls);
          return answer(
            'execute',
            () =>
              execute(
                request.input,
                signal,
                hooks?.recorder,
                (index, record) => send({ type: 'execute.record', index, record }),
                roundJournal,
              ),
            live,
          );
        }
        case 'respond':
          return answer('respond', () => respondTo(request.input, signal, hooks), live);
      }
    };
    const journaledEffects: JournaledEffects<LoopEffect> | undefined = journal && {
      journal,
      kind: 'tool-loop',
      sendBack: (event) => send(event as ToolLoopEvent),
      timerEvent: LOOP_TIMEOUT_EVENT,
      describe: (request) => LOOP_EFFECT_NAMES[request.type],
      live: (request, outcome) => perform(request, outcome),
      replay: (request, outcome) => {
        const recorder = hooks?.recorder;
        if (recorder) recordReplayedModelCall(request, outcome, recorder);
        for (const event of replayedLoopEvents(request, outcome, recorder)) send(event);
      },
    };
    receive((request) => {
      asked = true;
      if (request.type === 'cancel') {
        if (request.reason === 'timeout') journal?.timerFired('loopTimeout');
        return stop(request.reason === 'timeout' ? LOOP_TIMED_OUT : LOOP_ABORTED);
      }
      if (journaledEffects) return performJournaled(journaledEffects, request);
      return perform(request);
    });
    return () => stop(LOOP_LEFT);
  });

  /**
   * A plan or response the model gave before the crash, in details() again (marked replayed),
   * as the live call recorded it: the request rebuilt from the machine's input, the answer
   * from the journal (a plan as its JSON, the response as its text).
   */
  function recordReplayedModelCall(
    request: LoopEffect,
    outcome: Extract<EffectOutcome, { kind: 'replayed' }>,
    recorder: RunRecorder,
  ): void {
    const answer = outcome.answers[0] as ToolLoopEvent;
    const reply = (text: string, usage: Usage): ModelResponse => ({
      content: [{ type: 'text', text }],
      usage,
      finishReason: { unified: 'stop', raw: undefined },
    });
    if (request.type === 'plan' && answer.type === 'plan.done' && model && !planner) {
      const messages = Transcript.from(plannerMessages(request.input));
      const text = JSON.stringify(answer.output.raw) ?? '';
      recorder.replayedModelCall(
        `plan round ${request.input.roundIndex + 1}`,
        { messages, responseFormat },
        reply(text, answer.output.usage),
        outcome.ms,
      );
    }
    if (request.type === 'respond' && answer.type === 'respond.done' && respond === true) {
      const { userInput, extraRequirement, convergence } = request.input;
      const messages = responseMessages(
        userInput,
        extraRequirement,
        convergence,
        options.instructions,
      );
      recorder.replayedModelCall(
        'respond',
        { messages: Transcript.from(messages) },
        reply(answer.output.text, answer.output.usage),
        outcome.ms,
      );
    }
  }

  async function respondWithModel(
    messages: Message[],
    signal: AbortSignal,
    hooks: RunHooks | undefined,
  ): Promise<ResponseOutcome> {
    if (!model) throw new Error('unreachable: toolLoopConfig requires a model to respond with');
    const request: ModelRequest = { messages: Transcript.from(messages) };
    const onDelta = hooks?.onDelta;
    const call = async () => {
      if (!onDelta) {
        return checkModelResponse(await model.generate(request, { signal }), modelSource(model));
      }
      const collector = new ResponseCollector();
      for await (const part of model.stream(request, { signal })) {
        if (part.type === 'text-delta') onDelta(part.delta);
        collector.add(part);
      }
      return checkModelResponse(collector.response(), modelSource(model));
    };
    const response = await (hooks
      ? hooks.recorder.modelCall('respond', request, onDelta !== undefined, call)
      : call());
    const text = responseText(response);
    return { text, result: text, usage: response.usage };
  }

  const observedAgent = {
    name: options.name ?? 'tool-loop',
    kind: 'tool-loop',
    machine: toolLoopMachine.provide({
      actors: { effects },
      delays: {
        // A durable run's timeout counts from its journaled start, across restarts.
        loopTimeout: ({ context }) => deadlines.delay(context.config, context.config.timeout ?? 0),
      },
    }) as typeof toolLoopMachine,
    model,
  } as const;
  const machine = observeChildRuns(observedAgent.machine, observedAgent, {
    runInput: loopRunInput,
    begin(actor, observation) {
      const recorder = new RunRecorder(observation);
      childRuns.set(actor, { recorder });
      return (end) => {
        childRuns.delete(actor);
        recorder.finish();
        if (end.how === 'done') {
          const output = end.output as ToolLoopOutput;
          if (output.status === 'failed') errorOf(output, recorder);
          else settle(output, recorder);
          return;
        }
        const context = end.context as ToolLoopContext | undefined;
        const partial: ToolLoopPartialResult | undefined = context && {
          transcript: [],
          usage: context.usage,
          toolLogs: context.donePlans,
          details: recorder.details(),
        };
        const error =
          end.how === 'stopped'
            ? new AbortError(
                'The tool loop was stopped before it finished: the machine that invoked it left the state that runs it',
                { ...(partial && { partial }) },
              )
            : new ChainError(
                `The tool loop machine failed: ${end.error instanceof Error ? end.error.message : String(end.error)}`,
                { cause: end.error, ...(partial && { partial }) },
              );
        observation.failed(error, context?.usage);
      };
    },
  });

  function input(run: string | ToolLoopRunInput, runConfig = config): ToolLoopInput {
    const runInput = typeof run === 'string' ? { userInput: run } : run;
    if (
      typeof runInput !== 'object' ||
      runInput === null ||
      typeof runInput.userInput !== 'string'
    ) {
      throw new InputError(
        `tool loop '${options.name ?? 'tool-loop'}': input must be a string, or { userInput: string, extraRequirement?: string }; got ${runInput === null ? 'null' : typeof runInput}`,
      );
    }
    if (runInput.extraRequirement !== undefined && typeof runInput.extraRequirement !== 'string') {
      throw new InputError(
        `tool loop '${options.name ?? 'tool-loop'}': input.extraRequirement must be a string`,
      );
    }
    return {
      config: runConfig,
      userInput: runInput.userInput,
      ...(runInput.extraRequirement !== undefined && {
        extraRequirement: runInput.extraRequirement,
      }),
      availableTools: specs,
    };
  }

  async function run(
    loopInput: ToolLoopInput,
    runOptions: ToolLoopRunOptions,
    recorder: RunRecorder,
    onDelta?: (delta: string) => void,
    onSnapshot?: (snapshot: ToolLoopSnapshot) => void,
    journal?: RunJournal,
  ): Promise<ToolLoopOutput> {
    const { signal } = runOptions;
    // Cancelled before it began: no planner, tool or response call is made. A durable run
    // goes through its machine, so that its journal holds the ABORT a replay will meet.
    if (signal?.aborted && !journal) return cancelledBeforeStart(signal);
    const inspect = inspectorFor(runOptions.inspect);
    const actor = createActor(machine, {
      input: journal
        ? { ...loopInput, config: deadlines.configFor(loopInput.config, journal) }
        : loopInput,
      ...(inspect && { inspect }),
    });
    runs.set(actor.system, { recorder, ...(onDelta && { onDelta }), ...(journal && { journal }) });
    // Observers see every macrostep; unobserved runs subscribe only when streamed, as before.
    const { observation } = recorder;
    const observedSnapshot = observation
      ? (snapshot: ToolLoopSnapshot) => {
          onSnapshot?.(snapshot);
          observation.state(snapshot.value, snapshot.context);
        }
      : onSnapshot;
    let output: ToolLoopOutput;
    try {
      output = journal
        ? await runJournaled(actor, journal, { signal, onSnapshot: observedSnapshot })
        : await runActor(actor, { signal, onSnapshot: observedSnapshot });
    } catch (error) {
      if (isJournalProblem(error)) {
        observation?.failed(error);
        throw error;
      }
      // The machine itself threw (a bug, or a provided action that failed).
      const { context } = actor.getSnapshot();
      const partial: ToolLoopPartialResult = {
        transcript: [],
        usage: context.usage,
        toolLogs: context.donePlans,
        details: recorder.details(),
      };
      const failure = new ChainError(
        `The tool loop machine failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error, partial },
      );
      observation?.failed(failure, context.usage);
      throw failure;
    } finally {
      actor.stop();
      recorder.finish();
    }
    await journal?.end(output.status === 'failed' ? 'failed' : 'succeeded');
    return output;
  }

  const liveRuns = new LiveRuns<ToolLoopOutput>();

  /** A durable invoke() or stream(): its journal begun, or the run it names attached to. */
  function durableRun(
    durable: DurableRun,
    loopInput: ToolLoopInput,
    runOptions: ToolLoopRunOptions,
    recorder: RunRecorder,
    onDelta?: (delta: string) => void,
    onSnapshot?: (snapshot: ToolLoopSnapshot) => void,
  ): LiveRun<ToolLoopOutput> {
    return liveRuns.run(durable, async () => {
      const journal = await openJournal(durable, 'tool-loop', loopRunInput(loopInput), config);
      const output = await run(loopInput, runOptions, recorder, onDelta, onSnapshot, journal);
      return { output, recorder };
    });
  }

  /** What a durable run resolves with: its own, or the one it attached to (observed by its starter). */
  async function settleLive(live: LiveRun<ToolLoopOutput>): Promise<ToolLoopResult> {
    const { output, recorder } = await live.ended;
    return settle(output, recorder, !live.attached);
  }

  /**
   * A run's recorder and machine input. Observers (SPEC X4) see the run start here, and fail
   * when its input is invalid.
   */
  function startRun(
    runInput: string | ToolLoopRunInput,
    runOptions: AgentRunObserving,
    runConfig?: ToolLoopConfig,
  ): { recorder: RunRecorder; loopInput: ToolLoopInput } {
    const recorder = new RunRecorder(observeAgentRun(runOptions, observedAgent, runInput));
    try {
      return { recorder, loopInput: input(runInput, runConfig) };
    } catch (error) {
      recorder.observation?.failed(error);
      throw error;
    }
  }

  async function invoke(
    runInput: string | ToolLoopRunInput,
    runOptions: ToolLoopRunOptions = {},
  ): Promise<ToolLoopResult> {
    const { recorder, loopInput } = startRun(runInput, runOptions);
    const durable = durableOptionsOf(runOptions, `tool loop '${observedAgent.name}'`);
    if (!durable) return settle(await run(loopInput, runOptions, recorder), recorder);
    return settleLive(durableRun(durable, loopInput, runOptions, recorder));
  }

  async function resume(
    runId: string,
    runOptions: Omit<ToolLoopRunOptions, 'runId' | 'store'> & { readonly store: JournalStore },
  ): Promise<ToolLoopResult> {
    const durable = durableOptionsOf({ ...runOptions, runId }, `tool loop '${observedAgent.name}'`);
    if (!durable) throw new ConfigError('store', 'resume(runId, { store }) needs the store');
    return settleLive(
      liveRuns.run(durable, async () => {
        const journal = await RunJournal.reopen(durable.store, runId, 'tool-loop', config);
        const { recorder, loopInput } = startRun(journal.input as ToolLoopRunInput, runOptions);
        const output = await run(loopInput, runOptions, recorder, undefined, undefined, journal);
        return { output, recorder };
      }),
    );
  }

  return {
    name: options.name ?? 'tool-loop',
    machine,
    input,
    invoke,
    resume,
    durable: (store, durableOptions = {}) =>
      durableActor(observedAgent.name, (runInput: string | ToolLoopRunInput, runId, signal) =>
        invoke(runInput, { ...durableOptions, runId, store, signal }),
      ),
    batch: (inputs, options) => batchSettled(inputs, options, invoke),
    stream(runInput, runOptions = {}) {
      const { recorder, loopInput } = startRun(runInput, runOptions);
      // Breaking out of the loop stops the run: nobody would read what it spends tokens on.
      const { controller: stop, unlink } = linkedController(runOptions.signal);
      const queue = new EventQueue<ToolLoopStreamEvent>(() =>
        stop.abort('the stream was closed by its reader'),
      );
      let last: { state: string; plans: number; records: number; round: number } | undefined;
      const onSnapshot = (snapshot: ToolLoopSnapshot) => {
        const { context } = snapshot;
        const state = stateName(snapshot.value);
        for (const planned of context.plans.slice(last?.plans ?? 0)) {
          queue.push({ type: 'commands-planned', ...planned });
        }
        // A round's records reset when it ends; its finished records were streamed as they came.
        const seen = last && last.round === context.roundIndex ? last.records : 0;
        for (const { index, record } of context.roundRecords.slice(seen)) {
          queue.push({ type: 'record', roundIndex: context.roundIndex, index, record });
        }
        if (state !== last?.state) {
          if (state === 'running.planning' && context.planAttempts === 0) {
            queue.push({ type: 'round-started', roundIndex: context.roundIndex });
          }
          queue.push({ type: 'state', state });
        }
        last = {
          state,
          plans: context.plans.length,
          records: context.roundRecords.length,
          round: context.roundIndex,
        };
      };
      const onDelta = (delta: string) => queue.push({ type: 'text-delta', delta });
      const streamOptions = { ...runOptions, signal: stop.signal };
      let settledBy = recorder;
      let observe = true;
      const output = (async () => {
        const durable = durableOptionsOf(runOptions, `tool loop '${observedAgent.name}'`);
        if (!durable) return run(loopInput, streamOptions, recorder, onDelta, onSnapshot);
        // Attached to a run this process is making: its final event only.
        const live = durableRun(durable, loopInput, streamOptions, recorder, onDelta, onSnapshot);
        const ended = await live.ended;
        settledBy = ended.recorder;
        observe = !live.attached;
        return ended.output;
      })();
      queue.endWith(
        output,
        (output) => ({
          type: 'final',
          output,
          details: settledBy.details(),
          result: output.status === 'failed' ? undefined : settle(output, settledBy, observe),
        }),
        (output) => (output.status === 'failed' ? errorOf(output, settledBy, observe) : undefined),
        unlink,
      );
      return queue;
    },
    async planOnly(runInput, runOptions = {}) {
      if (runOptions.runId !== undefined || runOptions.store !== undefined) {
        throw new ConfigError(
          runOptions.runId !== undefined ? 'runId' : 'store',
          'planOnly() is a probe that executes nothing: it is not journaled; drop runId and store',
        );
      }
      // The same machine, told to stop after its first plan: the same stop conditions,
      // retries, timeout and errors as a run.
      const { recorder, loopInput } = startRun(runInput, runOptions, {
        ...config,
        planOnly: true,
        respond: false,
      });
      const output = await run(loopInput, runOptions, recorder);
      if (output.status === 'failed') throw errorOf(output, recorder);
      const plan = output.plans[0]?.plan ?? { nextAction: 'response', executionCommands: [] };
      recorder.observation?.succeeded(plan, output.usage);
      return plan;
    },
  };
}

/** What observers are told a loop actor an app's machine invoked started with: invoke()'s input shape. */
function loopRunInput(machineInput: unknown): unknown {
  if (typeof machineInput !== 'object' || machineInput === null) return machineInput;
  const { userInput, extraRequirement } = machineInput as Partial<ToolLoopInput>;
  return { userInput, ...(extraRequirement !== undefined && { extraRequirement }) };
}

/** The effects a loop's machine asks for (everything but `cancel`). */
type LoopEffect = Exclude<ToolLoopEffectRequest, { type: 'cancel' }>;

/** What a mismatch calls each effect of the loop. */
const LOOP_EFFECT_NAMES = {
  plan: 'plan',
  execute: 'round of tool calls',
  respond: 'response',
} as const;

/** The event the machine gets when the loop's timeout fires: a journaled firing is replayed as it. */
const LOOP_TIMEOUT_EVENT = delayedEventType(toolLoopMachine, 'loopTimeout');

/** The prefix of a round's call ids: `round<n>`, so a call's id is `round<n>_<index>`. */
function roundPrefix(input: ExecuteInput): string {
  return `round${input.roundIndex + 1}`;
}

/**
 * A loop's answer as journaled: a round's records are journaled command by command (`result`
 * entries, see executeCommands), so its `execute.done` keeps none; replayedLoopEvents puts
 * them back.
 */
function journaledLoopAnswer(event: ToolLoopEvent): unknown {
  return event.type === 'execute.done' ? { type: event.type } : event;
}

/**
 * The events a finished effect sent the machine, from the journal: a round's records in the
 * order they finished, then its `execute.done` with them in command order; recorded for
 * details() as replayed.
 */
function replayedLoopEvents(
  request: LoopEffect,
  outcome: Extract<EffectOutcome, { kind: 'replayed' }>,
  recorder: RunRecorder | undefined,
): ToolLoopEvent[] {
  const answer = outcome.answers[0] as ToolLoopEvent;
  if (request.type !== 'execute' || answer.type !== 'execute.done') return [answer];
  const prefix = roundPrefix(request.input);
  const { commands } = request.input;
  const records: ToolExecutionRecord[] = [];
  const events: ToolLoopEvent[] = [];
  for (const call of outcome.calls) {
    const index = Number(call.callId.slice(prefix.length + 1));
    const command = commands[index];
    if (!call.finished || command === undefined) continue;
    const result = call.result as ToolResult;
    const now = performance.now();
    recorder?.toolCall(
      commandCall(prefix, command, index),
      result,
      'local',
      now,
      now + (call.ms ?? 0),
      {
        replayed: true,
      },
    );
    const record = recordOf(command, result);
    records[index] = record;
    events.push({ type: 'execute.record', index, record });
  }
  events.push({ type: 'execute.done', output: records });
  return events;
}

/** Why a planner stream was cancelled when it decided early; not an error of the run. */
const DECIDED_EARLY = new AbortError('The plan was decided from its first field');
/** The abort reasons what is in flight sees when the loop stops before it finishes. */
const LOOP_LEFT = new AbortError('The tool loop stopped before this call finished');
const LOOP_TIMED_OUT = new AbortError(
  'The tool loop reached its timeout before this call finished',
);
const LOOP_ABORTED = new AbortError('The tool loop was aborted before this call finished');

/** A plan read from a stream: decided early, or parsed from the whole text. */
function planOf(streamed: StreamedPlan): PlanOutcome {
  if (streamed.shortCircuited) {
    return { raw: { nextAction: 'response' }, usage: streamed.usage, shortCircuited: true };
  }
  return parsedPlan(streamed.text, streamed.usage);
}

/** The first JSON object in a planner's text; a described error when there is none. */
function parsedPlan(text: string, usage: Usage): PlanOutcome {
  for (const candidate of jsonCandidates(text)) {
    if (isRecord(candidate)) return { raw: candidate, usage, shortCircuited: false };
  }
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  return {
    raw: undefined,
    error: `Your answer held no JSON object. It began: ${JSON.stringify(shown)}. Answer with the plan as one JSON object.`,
    usage,
    shortCircuited: false,
  };
}

/** The output of a run cancelled before it started: failed, having done nothing. */
function cancelledBeforeStart(signal: AbortSignal): ToolLoopOutput {
  const reason = reasonText(signal.reason);
  return {
    status: 'failed',
    failure: {
      code: 'ABORTED',
      message: reason ? `The run was cancelled: ${reason}` : 'The run was cancelled',
    },
    rounds: 0,
    plans: [],
    toolLogs: [],
    usage: ZERO_USAGE,
  };
}

async function joinText(chunks: AsyncIterable<unknown>): Promise<string> {
  let text = '';
  for await (const chunk of chunks) text += String(chunk);
  return text;
}

async function* textParts(chunks: AsyncIterable<unknown>): AsyncIterable<StreamPart> {
  for await (const chunk of chunks) yield { type: 'text-delta', delta: String(chunk) };
}

function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  const [parent, child] = Object.entries(value as Record<string, unknown>)[0] ?? [];
  return child === undefined ? String(parent) : `${parent}.${stateName(child)}`;
}

function settle(output: ToolLoopOutput, recorder: RunRecorder, observe = true): ToolLoopResult {
  if (output.status === 'failed') throw errorOf(output, recorder, observe);
  const settled: ToolLoopResult = withDetails(
    {
      status: 'done',
      answer: output.response?.text,
      result: output.response?.result,
      stopReason: output.stopReason,
      rounds: output.rounds,
      plans: output.plans,
      actionResults: output.convergence?.actionResults ?? {},
      extraInstruction: output.convergence?.extraInstruction,
      toolLogs: output.toolLogs,
      usage: output.usage,
    },
    recorder,
  );
  if (observe) recorder.observation?.succeeded(settled, output.usage);
  return settled;
}

/** Maps a failure to its error class, carrying the records so far. */
function errorOf(
  output: Extract<ToolLoopOutput, { status: 'failed' }>,
  recorder: RunRecorder,
  observe = true,
): StatecraftError {
  const { failure } = output;
  const partial: ToolLoopPartialResult = {
    transcript: [],
    usage: output.usage,
    toolLogs: output.toolLogs,
    output,
    details: recorder.details(),
  };
  const options = { partial, ...(failure.cause !== undefined && { cause: failure.cause }) };
  const error = loopErrorOf(failure, options);
  if (observe) recorder.observation?.failed(error, output.usage);
  return error;
}

function loopErrorOf(
  failure: ToolLoopFailure,
  options: { partial: ToolLoopPartialResult; cause?: unknown },
): StatecraftError {
  switch (failure.code) {
    case 'TIMEOUT':
      return new TimeoutError(failure.limit ?? Number.NaN, failure.message, options);
    case 'ABORTED':
      return new AbortError(failure.message, options);
    case 'PROTOCOL_ERROR':
      return new ProtocolError(failure.message, options);
    case 'CHAIN_ERROR':
      return new ChainError(failure.message, options);
    case 'MODEL_ERROR':
      return callError(failure, options);
  }
}

/** A failed planner or responder; a chain responder's own error (e.g. its limits) is the cause. */
function callError(
  failure: ToolLoopFailure,
  options: { partial: ToolLoopPartialResult; cause?: unknown },
): StatecraftError {
  const { cause } = failure;
  if (
    StatecraftError.isInstance(cause) &&
    !AbortError.isInstance(cause) &&
    !ModelError.isInstance(cause)
  ) {
    return new ChainError(failure.message, options);
  }
  return modelCallError(failure.message, cause, options);
}
