import pLimit from 'p-limit';
import { isAsyncIterable } from '../host/async-iterable.js';
import type { ApprovedCall, ToolCallDone } from '../host/run-details.js';
import type { ToolCall, ToolResult } from '../messages.js';
import type { ToolCommand } from '../plan/plan.js';
import { recordOf, type ToolExecutionRecord } from '../plan/records.js';
import { ABORTED, raceAbort } from '../race-abort.js';
import {
  allCallsSettled,
  type HookedCall,
  hookFailureText,
  journaledHookFailure,
  ToolHookError,
  type ToolHooks,
} from '../tools/hooks.js';
import type { InvalidToolCallPolicy } from '../tools/invalid-tool-call.js';
import { type ApprovalGate, approvedCall } from './approval-gate.js';
import type { ToolCallJournal } from './call-journal.js';
import type { LocalToolRegistry } from './local-registry.js';
import { closeIterator, readNext, streamErrorText } from './stream-steps.js';

export interface ExecuteCommandsOptions {
  readonly registry: LocalToolRegistry;
  /** At most this many commands run at once; undefined: all of them. */
  readonly concurrency: number | undefined;
  /** Reaches every running tool; aborted tools answer with failed records at once. */
  readonly signal: AbortSignal;
  /**
   * Called as each command finishes, in finishing order, while the round is wanted: a
   * round cut short (the loop's timeout, an abort) keeps the records it got (SPEC Q8).
   */
  readonly onRecord?: (index: number, record: ToolExecutionRecord) => void;
  /** Told of every call as it starts (`performance.now()`), for run observers (SPEC X4). */
  readonly onCallStart?: (call: ToolCall, startedAt: number) => void;
  /** Told of every finished call with its timing (`performance.now()`), for details(). */
  readonly onCallDone?: (done: ToolCallDone) => void;
  /** Prefix of the call ids, unique per round. */
  readonly idPrefix: string;
  /** A durable run's journal of this round: intents, results, and what finished before a crash. */
  readonly journal?: ToolCallJournal;
  /** The run's beforeToolCall / afterToolCall (SPEC H1), if it has any. */
  readonly hooks?: ToolHooks;
  /** What the planner reads for arguments that fail a tool's schema (SPEC H4). */
  readonly invalidToolCall?: InvalidToolCallPolicy;
  /** Which commands wait for a person, and until when (SPEC H2); none: no tool needs approval. */
  readonly approvals?: ApprovalGate;
}

/**
 * The tool loop's executor (SPEC T6): a round's commands run concurrently under an optional
 * p-limit cap; the records come back in command order whatever order the tools finish in.
 * Never throws: unknown tools, invalid arguments, tool exceptions and aborts are records with
 * `success: false` (the registry's rules, shared with the chain). A command that needs
 * approval (SPEC H2) waits for its decision before it takes a p-limit slot; a rejected one is
 * a failed record, `Not approved: <reason>`, and never runs.
 */
export async function executeCommands(
  commands: readonly ToolCommand[],
  options: ExecuteCommandsOptions,
): Promise<ToolExecutionRecord[]> {
  const { registry, signal, onRecord, journal, approvals: gate } = options;
  const limit = options.concurrency === undefined ? undefined : pLimit(options.concurrency);
  // A command's record is journaled, and reaches the machine, only while its round is still
  // wanted (see RunTools.execute): details() records it either way, marked discarded then.
  const finished = (
    index: number,
    record: ToolExecutionRecord,
    done: ToolCallDone,
    hookFailed?: ToolHookError,
  ) => {
    const discarded = signal.aborted;
    options.onCallDone?.(discarded ? { ...done, discarded } : done);
    if (discarded) return;
    const ms = done.endedAt - done.startedAt;
    journal?.finished(
      done.call,
      done.result,
      'local',
      ms,
      hookFailed && hookFailureText(hookFailed),
    );
    onRecord?.(index, record);
  };
  // Waits for a decision when the command needs one, outside the p-limit: a waiting command
  // holds no slot. The host runs it only once the machine forwarded an approval (decide).
  const gated = async (command: ToolCommand, index: number, call: ToolCall) => {
    if (!gate) return limited(command, index);
    try {
      const admitted = await gate.admit(call, signal, journal);
      // Its round is gone: the record is dropped, so nothing of it is recorded.
      if (admitted.abandoned && admitted.result) return recordOf(command, admitted.result);
      const approval = admitted.decision && approvedCall(admitted.decision, admitted.waitedMs);
      if (!admitted.result) return await limited(command, index, approval);
      const { result } = admitted;
      const now = performance.now();
      const record = recordOf(command, result);
      // An answer the run's end forced (an abort while waiting) is no decision: not journaled.
      finished(index, record, {
        call,
        result,
        executor: 'local',
        startedAt: now,
        endedAt: now,
        ...(approval && { approval }),
      });
      return record;
    } finally {
      gate.callSettled();
    }
  };
  const limited = (command: ToolCommand, index: number, approval?: ApprovedCall) =>
    limit ? limit(() => runOne(command, index, approval)) : runOne(command, index, approval);
  const runOne = async (command: ToolCommand, index: number, approval?: ApprovedCall) => {
    const call = commandCall(options.idPrefix, command, index);
    const known = journal?.known(call.id);
    if (journal && !known) await journal.starting(call);
    const idempotencyKey = journal?.idempotencyKey(call.id);
    const startedAt = performance.now();
    options.onCallStart?.(call, startedAt);
    const runCall = async (next: ToolCall) =>
      settleStream(
        await registry.run(next, {
          signal,
          ...(idempotencyKey && { idempotencyKey }),
          ...(options.invalidToolCall !== undefined && {
            invalidToolCall: options.invalidToolCall,
          }),
        }),
        signal,
      );
    let ran: { readonly result: ToolResult; readonly hooked?: HookedCall | undefined };
    let hookFailed: ToolHookError | undefined;
    try {
      ran = options.hooks
        ? await options.hooks.around(
            call,
            registry.get(call.name),
            { signal, ...(idempotencyKey !== undefined && { idempotencyKey }) },
            runCall,
          )
        : { result: await runCall(call) };
    } catch (error) {
      // afterToolCall threw: the command ran, so its record is kept (and journaled) before
      // the run fails. beforeToolCall threw: it did not run, and there is nothing to keep.
      if (!(error instanceof ToolHookError) || !error.result) throw error;
      ran = { result: error.result };
      hookFailed = error;
    }
    const { result, hooked } = ran;
    const record = recordOf(command, result);
    const done = {
      call,
      result,
      executor: 'local',
      startedAt,
      endedAt: performance.now(),
      ...(known && { resumed: { possiblyRepeated: true as const } }),
      ...(hooked && { hooked }),
      ...(approval && { approval }),
    };
    finished(index, record, done, hookFailed);
    if (hookFailed) throw hookFailed;
    return record;
  };
  const calls = commands.map((command, index) => commandCall(options.idPrefix, command, index));
  gate?.stepStarted(calls.filter((call) => !journal?.known(call.id)?.finished).length);
  // A resumed round: the machine learns again which commands waited, and what was decided.
  if (gate && journal?.approvals.length) gate.replay(journal.approvals);
  // Settled all, then a hook's failure rethrown: the round's other commands finish first.
  return allCallsSettled(
    commands.map((command, index) => {
      const call = calls[index] as ToolCall;
      const known = journal?.known(call.id);
      // Finished before the crash: its record again, from the journal; the tool does not run.
      // (The machine got it, and details() recorded it, when the round was asked for again:
      // tool-loop/effects.ts, even if the round is cancelled before this runs.)
      if (known?.finished) {
        const result = known.result as ToolResult;
        const record = recordOf(command, result);
        // Its afterToolCall threw before the crash: the round fails as it did.
        if (known.hookFailed !== undefined) {
          return Promise.reject(journaledHookFailure(call, known.hookFailed, result));
        }
        return Promise.resolve(record);
      }
      return gated(command, index, call);
    }),
  );
}

/** The tool call a round's command makes: its id is `<idPrefix>_<index>`, stable across restarts. */
export function commandCall(idPrefix: string, command: ToolCommand, index: number): ToolCall {
  return { id: `${idPrefix}_${index}`, name: command.toolName, arguments: command.toolKwargs };
}

/**
 * A streaming tool's result (an AsyncIterable, SPEC C11) read to its end: a loop's records are
 * plain JSON that the next planner reads, and no round comes back for more. A stream that
 * fails or is cancelled midway makes a failed record that says how many items it gave; so
 * does an iterator that breaks the protocol (see stream-steps), and its items are JSON-safe.
 */
async function settleStream(result: ToolResult, signal: AbortSignal): Promise<ToolResult> {
  const { output } = result;
  if (!result.success || !isAsyncIterable(output)) return result;
  const items: unknown[] = [];
  const failed = (error: string): ToolResult => ({
    ...result,
    output: null,
    success: false,
    error,
  });
  try {
    const iterator = output[Symbol.asyncIterator]();
    for (;;) {
      const next = await raceAbort(readNext(iterator), signal);
      if (next === ABORTED) {
        closeIterator(iterator).catch(() => {});
        return failed(
          `Tool '${result.name}' was cancelled after streaming ${items.length} item(s).`,
        );
      }
      if (next.done) return { ...result, output: items };
      items.push(next.value);
    }
  } catch (error) {
    return failed(
      `Tool '${result.name}' failed after streaming ${items.length} item(s): ${streamErrorText(error)}`,
    );
  }
}
