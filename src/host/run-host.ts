import {
  type AnyActorRef,
  type AnyStateMachine,
  createActor,
  type PromiseActorLogic,
} from 'xstate';
import type { RunKind } from '../durable/journal-entry.js';
import { RunJournal } from '../durable/run-journal.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import { AbortError, ChainError, ConfigError, type StatecraftError } from '../errors.js';
import { linkedController } from '../linked-controller.js';
import { inspectorFor } from '../observe/inspect-runs.js';
import {
  type AgentRunObserving,
  type ObservedAgent,
  observeAgentRun,
} from '../observe/observe-agent-run.js';
import { type ChildRunEnd, observeChildRuns } from '../observe/observe-child-runs.js';
import { type BatchOptions, type BatchResult, batchSettled } from '../run-config/batch.js';
import {
  type DurableActorInput,
  type DurableRun,
  type DurableRunOptions,
  delayedEventType,
  durableActor,
  durableOptionsOf,
  isJournalProblem,
  isStoreFault,
  type LiveRun,
  LiveRuns,
  openJournal,
  RunDeadlines,
  runJournaled,
  withPartialRun,
} from './durable-run.js';
import { type EffectsHost, effectsActor } from './effects-actor.js';
import { EventQueue } from './event-queue.js';
import { runActor } from './run-actor.js';
import { type RunDetails, RunRecorder } from './run-details.js';
import {
  type FailedOutput,
  type HostedRunOptions,
  machineFailed,
  type RunKindSpec,
  type RunTypes,
  type SucceededOutput,
} from './run-kind.js';
import { checkRunOptions } from './run-options.js';
import { type AnyActorSystem, RunRegistry } from './run-registry.js';

// One run host per chain or tool loop (createChain, createToolLoop): what a run has besides
// its JSON context is kept here, the same for both kinds: the resources its effects find
// (RunRegistry), the abort signal, the recorder of its details and observations, the stream
// queue, the snapshots observers see, and a durable run's journal. The kind says what its
// machine, input, resources, results and errors are (RunKindSpec); its machine decides what
// happens in the run.

/** A run about to start: its recorder (observers have heard of it), and its machine's input. */
export interface RunStart<K extends RunTypes> {
  readonly recorder: RunRecorder;
  /** The machine's input; checked here when the kind does not check it first. */
  input(): K['input'];
}

/** Runs machines of one kind: invoke, stream, resume, batch and durable actors. */
export class RunHost<K extends RunTypes> implements EffectsHost<K['resources']> {
  readonly #kind: RunKindSpec<K>;
  readonly #registry = new RunRegistry<K['resources']>();
  readonly #liveRuns = new LiveRuns<K['output']>();
  // A durable run's deadline counts from its journaled start, across restarts. One machine
  // serves every run (a machine made per run cost a durable step ~14 µs).
  readonly #deadlines = new RunDeadlines();
  /** The kind as observers see it: its name, its machine (provided), its model. */
  readonly #agent: ObservedAgent;
  readonly noun: 'chain' | 'tool loop';
  readonly journalKind: RunKind;
  readonly timerEvent: string;
  /** The kind's machine with its effects provided, its child runs observed (SPEC R5, X4). */
  readonly machine: AnyStateMachine;

  constructor(kind: RunKindSpec<K>) {
    this.#kind = kind;
    this.noun = kind.noun;
    this.journalKind = kind.kind;
    const { deadline } = kind;
    // The event the machine gets when its deadline fires: a journaled firing is replayed as it.
    this.timerEvent = delayedEventType(kind.machine, deadline.delay);
    const deadlines = this.#deadlines;
    this.#agent = {
      name: kind.name,
      kind: kind.kind,
      machine: kind.machine.provide({
        actors: { effects: effectsActor(this, kind.effects) },
        delays: {
          [deadline.delay]: ({ context }: { context: { config: K['input']['config'] } }) =>
            deadlines.delay(context.config, deadline.limitMs(context.config)),
        },
      }),
      model: kind.model,
    };
    this.machine = observeChildRuns(this.#agent.machine, this.#agent, {
      runInput: kind.runInput,
      begin: (actor, observation) =>
        this.#beginChildRun(actor, new RunRecorder(observation, kind.price)),
    });
  }

  get name(): string {
    return this.#kind.name;
  }

  /** The resources of the run whose effects actor is `self` (see RunRegistry). */
  resourcesOf(system: AnyActorSystem, self: AnyActorRef): K['resources'] {
    return this.#registry.find(system, self, this.#kind.childResources);
  }

  /** A run an app's machine invoked starts; what it returns reports its end, once. */
  #beginChildRun(actor: AnyActorRef, recorder: RunRecorder) {
    this.#registry.registerChild(actor, recorder);
    return (end: ChildRunEnd) => {
      this.#registry.forgetChild(actor);
      recorder.finish();
      if (end.how === 'done') {
        const output = end.output as K['output'];
        if (isFailed<K>(output)) this.errorOf(output, recorder);
        else this.settle(output, recorder);
        return;
      }
      const context = end.context as K['snapshot']['context'] | undefined;
      if (end.how === 'crashed' && context) {
        const crashed = this.#kind.crashed(end.error, context, recorder);
        if ('output' in crashed) this.errorOf(crashed.output, recorder);
        else {
          recorder.observation?.failed(
            crashed.error,
            context.usage,
            recorder.costOf(context.usage),
          );
        }
        return;
      }
      const partial = context && this.#kind.partial(context, recorder);
      const error =
        end.how === 'stopped'
          ? new AbortError(
              `The ${this.noun} was stopped before it finished: the machine that invoked it left the state that runs it`,
              { ...(partial && { partial }) },
            )
          : new ChainError(machineFailed(this.noun, end.error), {
              cause: end.error,
              ...(partial && { partial }),
            });
      recorder.observation?.failed(
        error,
        context?.usage,
        context && recorder.costOf(context.usage),
      );
    };
  }

  /**
   * A run's recorder, observed when anyone observes runs (SPEC X4): the run starts here. A
   * kind that checks its input first checks it here too (observers hear of a bad one).
   */
  start(
    runInput: K['runInput'],
    runOptions: AgentRunObserving,
    config?: K['input']['config'],
  ): RunStart<K> {
    const recorder = new RunRecorder(
      observeAgentRun(runOptions, this.#agent, runInput),
      this.#kind.price,
    );
    if (!this.#kind.checksInputFirst) {
      return { recorder, input: () => this.#inputOf(runInput, recorder, config) };
    }
    const input = this.#inputOf(runInput, recorder, config);
    return { recorder, input: () => input };
  }

  #inputOf(
    runInput: K['runInput'],
    recorder: RunRecorder,
    config: K['input']['config'] | undefined,
  ): K['input'] {
    try {
      return this.#kind.input(runInput, config);
    } catch (error) {
      recorder.observation?.failed(error);
      throw error;
    }
  }

  /**
   * The journal's own work (opening, ending): a journal that cannot be opened or ended (a
   * refused run id, a store that cannot write) is the run's failure for its observers.
   */
  async #journalWork<R>(recorder: RunRecorder, work: () => Promise<R>): Promise<R> {
    try {
      return await work();
    } catch (error) {
      recorder.observation?.failed(error);
      throw error;
    }
  }

  /**
   * Runs the machine once: creates its actor, registers the run's resources for its effects,
   * shows observers every snapshot, and disposes of the resources however the run ends. A
   * durable run goes through its journal, ended here with the run.
   */
  async run(
    recorder: RunRecorder,
    input: K['input'],
    runOptions: HostedRunOptions,
    listener?: K['listener'],
    onSnapshot?: (snapshot: K['snapshot']) => void,
    journal?: RunJournal,
  ): Promise<K['output']> {
    const kind = this.#kind;
    const { signal } = runOptions;
    // Cancelled before it began: no effect is performed (a tool loop's planner, tools and
    // responder are not called). A durable run goes through its machine, so that its journal
    // holds the ABORT a replay will meet.
    if (signal?.aborted && !journal && kind.cancelledBeforeStart) {
      recorder.finish(); // its details() are read later, and must not go on counting time
      return kind.cancelledBeforeStart(signal);
    }
    const inspect = inspectorFor(runOptions.inspect);
    const actor = createActor(this.machine, {
      input: journal
        ? { ...input, config: this.#deadlines.configFor(input.config, journal) }
        : input,
      ...(inspect && { inspect }),
    });
    let resources: K['resources'];
    try {
      resources = kind.resources(recorder, listener, journal, runOptions);
    } catch (error) {
      // Run options the run cannot take (an approve that is no function): nothing ran, and
      // the run's journal is let go for a run that can.
      recorder.observation?.failed(error);
      await journal?.close();
      throw error;
    }
    this.#registry.register(actor.system, resources);
    // Observers see every macrostep; unobserved runs subscribe only when streamed, as before.
    const { observation } = recorder;
    const observedSnapshot = observation
      ? (snapshot: K['snapshot']) => {
          onSnapshot?.(snapshot);
          observation.state(snapshot.value, snapshot.context);
        }
      : onSnapshot;
    let output: K['output'];
    try {
      try {
        output = journal
          ? await runJournaled(actor, journal, { signal, onSnapshot: observedSnapshot })
          : await runActor(actor, { signal, onSnapshot: observedSnapshot });
      } catch (error) {
        if (isJournalProblem(error)) {
          const failed = withPartialRun(error, () =>
            kind.partial(actor.getSnapshot().context, recorder),
          );
          observation?.failed(failed);
          throw failed;
        }
        const { context } = actor.getSnapshot();
        const crashed = kind.crashed(error, context, recorder);
        if ('error' in crashed) {
          observation?.failed(crashed.error, context.usage, recorder.costOf(context.usage));
          throw crashed.error;
        }
        output = crashed.output;
      }
      if (journal) {
        const status = isFailed<K>(output) ? 'failed' : 'succeeded';
        // The run is over, but its end is not on record: the caller learns that, with the
        // run as it ended; resumed once the store works, it replays to the same end.
        await this.#journalWork(recorder, () =>
          journal.end(status).catch((error: unknown) => {
            throw withPartialRun(error, () => kind.partial(actor.getSnapshot().context, recorder));
          }),
        );
      }
    } finally {
      // A durable run that disagreed with its journal is left waiting: stopped here.
      actor.stop();
      recorder.finish();
      if (kind.dispose) await kind.dispose(resources);
      // However the run ended, another process may now take it over (`end` did, if it ran).
      await journal?.close();
    }
    return output;
  }

  /** A durable run: its journal begun, or the run its id names attached to. */
  #durableRun(
    durable: DurableRun,
    start: RunStart<K>,
    runOptions: HostedRunOptions,
    listener?: K['listener'],
    onSnapshot?: (snapshot: K['snapshot']) => void,
  ): LiveRun<K['output']> {
    const { recorder } = start;
    return this.#liveRuns.run(durable, async () => {
      const input = start.input();
      const kind = this.#kind;
      const journal = await this.#journalWork(recorder, () =>
        openJournal(
          durable,
          kind.kind,
          kind.runInput(input),
          kind.config,
          kind.journalFields ?? kind.config,
        ),
      ).catch((error: unknown) => {
        // The run ends here: its details stop counting time.
        recorder.finish();
        // The store failed as the run began (its start entry): the run as it stood then, its
        // input and nothing done, is the partial run a store's fault carries.
        throw isStoreFault(error)
          ? withPartialRun(error, () =>
              kind.partial(createActor(this.machine, { input }).getSnapshot().context, recorder),
            )
          : error;
      });
      const output = await this.run(recorder, input, runOptions, listener, onSnapshot, journal);
      return { output, recorder };
    });
  }

  /** What a durable invoke() or resume() resolves with: its own run's, or the one it attached to. */
  async #settleLive(live: LiveRun<K['output']>): Promise<K['result']> {
    const { output, recorder } = await live.ended;
    // Observers were told of the run by whoever started it.
    return this.settle(output, recorder, !live.attached);
  }

  /** The result of a succeeded run, or the typed error of a failed one (with the partial run). */
  settle(output: K['output'], recorder: RunRecorder, observe = true): K['result'] {
    if (isFailed<K>(output)) throw this.errorOf(output, recorder, observe);
    const result = this.#kind.result(output as SucceededOutput<K>, recorder);
    if (observe) {
      recorder.observation?.succeeded(result, output.usage, recorder.costOf(output.usage));
    }
    return result;
  }

  errorOf(output: FailedOutput<K>, recorder: RunRecorder, observe = true): StatecraftError {
    const error = this.#kind.error(output, recorder);
    if (observe) recorder.observation?.failed(error, output.usage, recorder.costOf(output.usage));
    return error;
  }

  #durableOf(runOptions: DurableRunOptions): DurableRun | undefined {
    return durableOptionsOf(runOptions, `${this.noun} '${this.name}'`);
  }

  /** How run options' problems name the agent: `chain 'triage'`. */
  get #what(): string {
    return `${this.noun} '${this.name}'`;
  }

  invoke = async (
    runInput: K['runInput'],
    runOptions: K['runOptions'] = {},
  ): Promise<K['result']> => {
    checkRunOptions(runOptions, 'invoke', this.#what);
    const start = this.start(runInput, runOptions);
    const durable = this.#durableOf(runOptions);
    if (!durable) {
      const output = await this.run(start.recorder, start.input(), runOptions);
      return this.settle(output, start.recorder);
    }
    return this.#settleLive(this.#durableRun(durable, start, runOptions));
  };

  resume = async (
    runId: string,
    runOptions: Omit<K['runOptions'], 'runId' | 'store'> & { readonly store: JournalStore },
  ): Promise<K['result']> => {
    checkRunOptions(runOptions, 'resume', this.#what);
    const durable = this.#durableOf({ ...runOptions, runId });
    if (!durable) throw new ConfigError('store', 'resume(runId, { store }) needs the store');
    const kind = this.#kind;
    return this.#settleLive(
      this.#liveRuns.run(durable, async () => {
        const journal = await RunJournal.reopen(
          durable.store,
          runId,
          kind.kind,
          kind.config,
          kind.journalFields ?? kind.config,
        );
        let started: { readonly recorder: RunRecorder; readonly input: K['input'] };
        try {
          const { recorder, input } = this.start(journal.input as K['runInput'], runOptions);
          started = { recorder, input: input() };
        } catch (error) {
          await journal.close(); // a journal whose input is refused: let the run go
          throw error;
        }
        const { recorder, input } = started;
        const output = await this.run(recorder, input, runOptions, undefined, undefined, journal);
        return { output, recorder };
      }),
    );
  };

  /**
   * An actor logic for an app's machine that makes the run `{ runId, input }` durably in
   * `store`. It ends as the kind's machine does: with the machine's output, a failed run
   * included (`status: 'failed'`), so an app's `onDone` reads a run the same way whichever
   * it invokes. It rejects (the app's `onError`) only when this process could not bring the
   * run to an end: input it cannot start, a journal that cannot be written or read or that
   * disagrees with the run, a run parked for approval (see durableActor).
   */
  durable = (
    store: JournalStore,
    durableOptions?: Omit<K['runOptions'], 'runId' | 'store' | 'signal'>,
  ): PromiseActorLogic<K['output'], DurableActorInput<K['runInput']>> => {
    // Checked now, where the app's machine is built, not when it first invokes the actor.
    checkRunOptions(durableOptions, 'durable', this.#what, store);
    return durableActor(this.name, (runInput: K['runInput'], runId, signal) =>
      this.#durableOutput(runInput, {
        ...durableOptions,
        runId,
        store,
        signal,
      } as K['runOptions']),
    );
  };

  /** A durable run to its end, as its machine's output; observers are told as invoke() tells them. */
  async #durableOutput(runInput: K['runInput'], runOptions: K['runOptions']): Promise<K['output']> {
    const start = this.start(runInput, runOptions);
    const durable = this.#durableOf(runOptions) as DurableRun;
    const live = this.#durableRun(durable, start, runOptions);
    const { output, recorder } = await live.ended;
    // Observers were told of the run by whoever started it (an attached run: not again).
    const observe = !live.attached;
    if (isFailed<K>(output)) this.errorOf(output, recorder, observe);
    else this.settle(output, recorder, observe);
    return output;
  }

  batch = (
    inputs: readonly K['runInput'][],
    batchOptions?: K['runOptions'] & BatchOptions,
  ): Promise<BatchResult<K['result']>[]> => {
    try {
      checkRunOptions(batchOptions, 'batch', this.#what);
    } catch (error) {
      return Promise.reject(error);
    }
    return batchSettled(inputs, batchOptions, (runInput, config) =>
      this.invoke(runInput, config as K['runOptions']),
    );
  };

  stream = (
    runInput: K['runInput'],
    runOptions: K['runOptions'] = {},
  ): AsyncIterable<K['event']> => {
    checkRunOptions(runOptions, 'stream', this.#what);
    const start = this.start(runInput, runOptions);
    // Breaking out of the loop stops the run: nobody would read what it spends tokens on.
    const { controller: stop, unlink } = linkedController(runOptions.signal);
    const queue = new EventQueue<K['event']>(() =>
      stop.abort('the stream was closed by its reader'),
    );
    const { onSnapshot, listener } = this.#kind.streamEvents(queue);
    const streamOptions = { ...runOptions, signal: stop.signal };
    let settledBy = start.recorder;
    let observe = true;
    const output = (async () => {
      const durable = this.#durableOf(runOptions);
      if (!durable) {
        return this.run(start.recorder, start.input(), streamOptions, listener, onSnapshot);
      }
      // Attached to a run this process is making: its final event only.
      const live = this.#durableRun(durable, start, streamOptions, listener, onSnapshot);
      const ended = await live.ended;
      settledBy = ended.recorder;
      observe = !live.attached;
      return ended.output;
    })();
    queue.endWith(
      output,
      (output): K['event'] =>
        ({
          type: 'final',
          output,
          details: settledBy.details(),
          result: isFailed<K>(output) ? undefined : this.settle(output, settledBy, observe),
        }) satisfies FinalEvent<K>,
      (output) => (isFailed<K>(output) ? this.errorOf(output, settledBy, observe) : undefined),
      unlink,
    );
    return queue;
  };
}

/** The last event of every stream: the run's output, details, and result (undefined: failed). */
interface FinalEvent<K extends RunTypes> {
  readonly type: 'final';
  readonly output: K['output'];
  readonly details: RunDetails;
  readonly result: K['result'] | undefined;
}

function isFailed<K extends RunTypes>(output: K['output']): output is FailedOutput<K> {
  return output.status === 'failed';
}
