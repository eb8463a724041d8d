import type { PromiseActorLogic } from 'xstate';
import type { ChainInput, ChainMachine, ChainOutput } from '../../machines/chain.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import type { DurableActorInput } from '../host/durable-run.js';
import type { BatchResult } from '../run-config/batch.js';
import type { RemoteToolExecutor } from '../tools/remote-executor.js';
import type { ChainResult, ChainRunInput, ChainRunOptions, ChainStreamEvent } from './run-types.js';

// What createChain returns, in its own module: code that takes a chain (Runnables, a tool
// loop's responder, tests) reads the type here and never imports the factory for it.

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
   *
   * It ends like `chain.machine`: `onDone` with the machine's output, whether the run
   * succeeded or failed (`output.status === 'failed'`, read it with `runFailure(output)`);
   * `onError` only when the run could not be brought to an end in this process (bad input,
   * a journal that cannot be written or read or disagrees with the run, a run parked for an
   * approval): it can be resumed.
   */
  durable<Output extends ChainOutput<T> = ChainOutput<T>>(
    store: JournalStore,
    options?: Omit<ChainRunOptions, 'runId' | 'store' | 'signal'>,
  ): PromiseActorLogic<Output, DurableActorInput<string | ChainRunInput>>;
  /** Routes tool calls to a remote executor first (SPEC C10), from the next model call on, in running runs too. */
  connect(remote: RemoteToolExecutor): void;
  disconnect(): void;
}
