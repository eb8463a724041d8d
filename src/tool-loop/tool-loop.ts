import type { PromiseActorLogic } from 'xstate';
import type { ToolLoopInput, ToolLoopOutput, toolLoopMachine } from '../../machines/tool-loop.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import type { DurableActorInput } from '../host/durable-run.js';
import type { Plan } from '../plan/plan.js';
import type { BatchResult } from '../run-config/batch.js';
import type {
  ToolLoopResult,
  ToolLoopRunInput,
  ToolLoopRunOptions,
  ToolLoopStreamEvent,
} from './run-types.js';

// What createToolLoop returns, in its own module: code that takes a tool loop (Runnables,
// tests) reads the type here and never imports the factory for it.

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
   * resumes from its journal. It ends like `loop.machine`: `onDone` with the machine's
   * output, a failed run included (`output.status === 'failed'`); `onError` only when the run
   * could not be brought to an end in this process (as a chain's durable()).
   */
  durable(
    store: JournalStore,
    options?: Omit<ToolLoopRunOptions, 'runId' | 'store' | 'signal'>,
  ): PromiseActorLogic<ToolLoopOutput, DurableActorInput<string | ToolLoopRunInput>>;
  /**
   * One planning round, normalized, without executing anything. A malformed answer rejects
   * with a ProtocolError at once: `planRetries` applies to runs, not to this probe.
   */
  planOnly(input: string | ToolLoopRunInput, options?: ToolLoopRunOptions): Promise<Plan>;
}
