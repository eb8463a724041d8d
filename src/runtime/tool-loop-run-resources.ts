import type { SnapshotFrom } from 'xstate';
import type { toolLoopMachine } from '../../machines/tool-loop.js';
import type { RunJournal } from '../durable/run-journal.js';
import type { ToolCallHooks } from '../tools/tool-hooks.js';
import type { RunRecorder } from './run-details.js';

export type ToolLoopSnapshot = SnapshotFrom<typeof toolLoopMachine>;
/** Where a streamed run's final response text goes (stream()). */
export type DeltaListener = (delta: string) => void;

// What a run started by invoke(), stream() or planOnly() gives its actors, found by the
// run's actor system: where the final response's text deltas go (stream()), and the
// recorder of its model and tool calls (details()). A loop invoked from an app's machine
// has a recorder only while someone observes runs (SPEC R5, X4), found by the loop actor,
// the parent of the actors it invokes. Its controller is its effects actor's own (see
// tool-loop-effects.ts): nothing here needs disposing of but the recorder's end.
export interface ToolLoopRunHooks {
  readonly recorder: RunRecorder;
  readonly onDelta?: DeltaListener;
  /** A durable run's journal: effects are journaled, and replayed on resume. */
  readonly journal?: RunJournal;
  /** The run's own beforeToolCall / afterToolCall, after the loop's (SPEC H1). */
  readonly toolHooks?: ToolCallHooks;
}

/** What a loop's effects find of their run: nothing for an unobserved loop an app's machine invoked. */
export type ToolLoopRunResources = ToolLoopRunHooks | undefined;
