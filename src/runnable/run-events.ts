import type { ToolCall, ToolResult } from '../messages.js';
import type { RunInfo } from '../observe/run-info.js';

/**
 * What `Runnable.stream` yields (SPEC R1), the same for every runnable however composed: each
 * run's start and end (so a stream shows the tree of runs), what happens inside chains, tool
 * loops and models (text as it arrives, tool calls and their results, state changes), and one
 * `final` event with the output, last. A failed run yields `run-error`, then the stream throws.
 */
export type RunEvent<O> =
  | { readonly type: 'run-start'; readonly run: RunInfo; readonly input: unknown }
  | { readonly type: 'run-end'; readonly run: RunInfo; readonly output: unknown }
  | { readonly type: 'run-error'; readonly run: RunInfo; readonly error: unknown }
  | { readonly type: 'state'; readonly run: RunInfo; readonly state: string }
  | { readonly type: 'text-delta'; readonly run: RunInfo; readonly delta: string }
  | { readonly type: 'tool-call'; readonly run: RunInfo; readonly toolCall: ToolCall }
  | { readonly type: 'tool-result'; readonly run: RunInfo; readonly result: ToolResult }
  | { readonly type: 'warning'; readonly run: RunInfo; readonly text: string }
  | { readonly type: 'final'; readonly output: O };

/** Every event but `final`: what a step of a composition passes on to its parent's stream. */
export type InnerRunEvent = Exclude<RunEvent<unknown>, { readonly type: 'final' }>;

/** What a runnable's own streaming work emits: inner events without the run they belong to. */
export type RunEventBody =
  | { readonly type: 'state'; readonly state: string }
  | { readonly type: 'text-delta'; readonly delta: string }
  | { readonly type: 'tool-call'; readonly toolCall: ToolCall }
  | { readonly type: 'tool-result'; readonly result: ToolResult }
  | { readonly type: 'warning'; readonly text: string };
