import { setMaxListeners } from 'node:events';
import type {
  ExecuteInput,
  ToolLoopEffectRequest,
  ToolLoopEvent,
} from '../../machines/tool-loop.js';
import type { JournaledCall } from '../durable/run-journal.js';
import { AbortError } from '../errors.js';
import type { LiveEffect, ReplayedEffect } from '../host/durable-run.js';
import { EffectAnswers, type EffectOf, type EffectsKind } from '../host/effects-actor.js';
import type { ResumedCall, RunRecorder, ToolCallDone } from '../host/run-details.js';
import type { ToolResult } from '../messages.js';
import type { ModelResponse } from '../model/language-model.js';
import { plannerMessages } from '../plan/planner-context.js';
import type { ToolExecutionRecord } from '../plan/records.js';
import { recordOf } from '../plan/records.js';
import type { ApprovalGate } from '../tool-calls/approval-gate.js';
import { type ToolCallJournal, toolCallJournal } from '../tool-calls/call-journal.js';
import { commandCall, executeCommands } from '../tool-calls/execute-commands.js';
import type { LocalToolRegistry } from '../tool-calls/local-registry.js';
import { ToolHooks } from '../tools/hooks.js';
import { Transcript } from '../transcript.js';
import type { Usage } from '../usage.js';
import type { ToolLoopOptions } from './options.js';
import { type LoopPlanning, plan } from './planning.js';
import { type LoopResponding, respondTo } from './respond.js';
import { responseMessages } from './response-messages.js';
import type { ToolLoopRunResources } from './run-resources.js';

/** What a loop's effects are made with besides the run's hooks. */
export interface ToolLoopEffectsSetup extends LoopPlanning, LoopResponding {
  readonly registry: LocalToolRegistry;
  /** Read at every round and response. */
  readonly options: Pick<
    ToolLoopOptions,
    'concurrency' | 'instructions' | 'beforeToolCall' | 'afterToolCall' | 'invalidToolCall'
  >;
}

/** The effects a loop's machine asks for (everything but `cancel` and `decide`). */
type LoopEffect = EffectOf<ToolLoopEffectRequest>;

// The one actor a loop's machine invokes: it performs each effect the machine requests and
// answers with its `.done` / `.error` event (and `execute.record` per finished command).
// Effects share one controller, aborted only when the loop stops with something in flight:
// on `cancel` (timeout, ABORT), or when the actor is stopped (the app's machine left the
// state that runs the loop); late answers are dropped then. A run that ends with nothing in
// flight aborts nothing, so the signals its finished calls saw stay unaborted, as they were
// when each effect was an actor of its own. A run whose tools need approval (SPEC H2) has a
// gate: it tells the machine which commands wait (approval.requested, decisions), and lets a
// command through once the machine forwards its decision (`decide`).
export function toolLoopEffects(
  setup: ToolLoopEffectsSetup,
): EffectsKind<ToolLoopEffectRequest, ToolLoopRunResources> {
  return {
    // What a mismatch calls each effect of the loop.
    names: { plan: 'plan', execute: 'round of tool calls', respond: 'response' },
    open(hooks, sendBack) {
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
      const journal = hooks?.journal;
      const recorder = hooks?.recorder;
      const approvals = hooks?.approvals;
      approvals?.attach(send);
      const answers = new EffectAnswers<ToolLoopEvent>(journal, journaledLoopAnswer, send);
      const settled = () => {
        inFlight--;
        return !stopped;
      };
      const answer = (
        type: LoopEffect['type'],
        start: () => Promise<unknown>,
        live: LiveEffect | undefined,
      ) => {
        inFlight++;
        answers.answer(type, start, signal, live, settled);
      };
      return {
        journal,
        send,
        cancel(request) {
          if (request.reason === 'timeout') journal?.timerFired('loopTimeout');
          stop(request.reason === 'timeout' ? LOOP_TIMED_OUT : LOOP_ABORTED);
        },
        decide(request) {
          approvals?.decide(request.decision);
        },
        perform(request, live) {
          switch (request.type) {
            case 'plan':
              return answer(
                'plan',
                () => plan(setup, request.input, signal, recorder, resumedCall(live)),
                live,
              );
            case 'execute': {
              if (live?.ended) {
                // The run ended during this round, by a decision's deadline: the commands
                // that finished before it, then that again, only.
                const finished = replayedRecords(request.input, [...live.calls.values()], recorder);
                for (const event of finished.events) send(event);
                approvals?.replay(live.approvals);
                return;
              }
              const roundJournal =
                live && journal && toolCallJournal(journal, live.seq, live.calls, live.approvals);
              // A round in flight at the crash: the machine learns at once what of it
              // finished (before a timeout that passed meanwhile can fire), and details()
              // records it, whether or not the round then gets to run (only the rest runs).
              if (live) {
                const known = [...live.calls.values()];
                for (const event of replayedRecords(request.input, known, recorder).events) {
                  send(event);
                }
              }
              return answer(
                'execute',
                () =>
                  execute(
                    setup,
                    request.input,
                    signal,
                    recorder,
                    (index, record) => send({ type: 'execute.record', index, record }),
                    roundJournal,
                    ToolHooks.of(setup.options, hooks?.toolHooks),
                    approvals,
                  ),
                live,
              );
            }
            case 'respond':
              return answer(
                'respond',
                () => respondTo(setup, request.input, signal, hooks, resumedCall(live)),
                live,
              );
          }
        },
        replay(request, outcome) {
          if (recorder) recordReplayedModelCall(setup, request, outcome, recorder);
          const answer = outcome.answers[0] as ToolLoopEvent;
          if (request.type !== 'execute') return send(answer);
          const finished = replayedRecords(request.input, outcome.calls, recorder);
          for (const event of finished.events) send(event);
          // The machine waited for these decisions before the round ended: it learns them first.
          approvals?.replay(outcome.approvals);
          send(
            answer.type === 'execute.done'
              ? { type: 'execute.done', output: finished.records }
              : answer,
          );
        },
        // The timeout or ABORT stopped a round: the commands that finished before it count.
        held(request, outcome) {
          if (request.type !== 'execute') return;
          const finished = replayedRecords(request.input, outcome.calls, recorder);
          for (const event of finished.events) send(event);
          approvals?.replay(outcome.approvals);
        },
        stop() {
          stop(LOOP_LEFT);
          approvals?.close();
        },
      };
    },
  };
}

/** One round's commands (the `execute` effect), each record sent as it finishes. */
function execute(
  setup: ToolLoopEffectsSetup,
  input: ExecuteInput,
  signal: AbortSignal,
  recorder: RunRecorder | undefined,
  onRecord: (index: number, record: ToolExecutionRecord) => void,
  journal?: ToolCallJournal,
  hooks?: ToolHooks,
  approvals?: ApprovalGate,
): Promise<readonly ToolExecutionRecord[]> {
  return executeCommands(input.commands, {
    registry: setup.registry,
    concurrency: setup.options.concurrency,
    signal,
    idPrefix: roundPrefix(input),
    onRecord,
    ...(journal && { journal }),
    ...(hooks && { hooks }),
    ...(approvals && { approvals }),
    ...(setup.options.invalidToolCall !== undefined && {
      invalidToolCall: setup.options.invalidToolCall,
    }),
    ...(recorder && { onCallDone: (done: ToolCallDone) => recorder.toolCall(done) }),
    ...(recorder?.observation && {
      onCallStart: (call, startedAt) => recorder.toolCallStarted(call, 'local', startedAt),
    }),
  });
}

/**
 * A plan or response the model gave before the crash, in details() again (marked replayed),
 * as the live call recorded it: the request rebuilt from the machine's input, the answer
 * from the journal (a plan as its JSON, the response as its text).
 */
function recordReplayedModelCall(
  setup: ToolLoopEffectsSetup,
  request: LoopEffect,
  outcome: ReplayedEffect,
  recorder: RunRecorder,
): void {
  const { model, planner, respond, responseFormat } = setup;
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
      setup.options.instructions,
    );
    recorder.replayedModelCall(
      'respond',
      { messages: Transcript.from(messages) },
      reply(answer.output.text, answer.output.usage),
      outcome.ms,
    );
  }
}

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
 * A round's records from the journal, as the live round sent them: an `execute.record` per
 * finished command in the order they finished, and the records in command order for its
 * `execute.done`; recorded for details() as replayed.
 */
function replayedRecords(
  input: ExecuteInput,
  calls: readonly JournaledCall[],
  recorder: RunRecorder | undefined,
): { readonly events: ToolLoopEvent[]; readonly records: ToolExecutionRecord[] } {
  const prefix = roundPrefix(input);
  const { commands } = input;
  const records: ToolExecutionRecord[] = [];
  const events: ToolLoopEvent[] = [];
  for (const call of calls) {
    const index = Number(call.callId.slice(prefix.length + 1));
    const command = commands[index];
    if (!call.finished || command === undefined) continue;
    const result = call.result as ToolResult;
    const now = performance.now();
    recorder?.toolCall({
      call: commandCall(prefix, command, index),
      result,
      executor: 'local',
      startedAt: now,
      endedAt: now + (call.ms ?? 0),
      resumed: { replayed: true },
    });
    const record = recordOf(command, result);
    records[index] = record;
    events.push({ type: 'execute.record', index, record });
  }
  return { events, records };
}

/** The abort reasons what is in flight sees when the loop stops before it finishes. */
const LOOP_LEFT = new AbortError('The tool loop stopped before this call finished');
const LOOP_TIMED_OUT = new AbortError(
  'The tool loop reached its timeout before this call finished',
);
const LOOP_ABORTED = new AbortError('The tool loop was aborted before this call finished');

/** A model call issued again on resume (it was in flight at the crash): details() flags it. */
function resumedCall(live: LiveEffect | undefined): ResumedCall | undefined {
  return live?.reissued ? { possiblyRepeated: true } : undefined;
}
