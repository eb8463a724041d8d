import type {
  CallModelInput,
  ChainEffectRequest,
  ChainEvent,
  ValidationOutcome,
} from '../../machines/chain.js';
import type { JournaledCall } from '../durable/run-journal.js';
import { AbortError, TimeoutError } from '../errors.js';
import type { LiveEffect, ReplayedEffect } from '../host/durable-run.js';
import { EffectAnswers, type EffectOf, type EffectsKind } from '../host/effects-actor.js';
import { linkedController } from '../linked-controller.js';
import { failedToolResult, type ToolCall, type ToolResult } from '../messages.js';
import { checkModelResponse, modelSource } from '../model/check-response.js';
import { ResponseCollector } from '../model/collect-stream.js';
import type { LanguageModel, ModelRequest, ResponseFormat } from '../model/language-model.js';
import { toolCallJournal } from '../tool-calls/call-journal.js';
import type { ChainOptions } from './options.js';
import { type ChainRunResources, disposeChainRun } from './run-resources.js';

/** What a chain's effects are made with besides the run's own resources. */
export interface ChainEffectsSetup {
  readonly model: LanguageModel;
  /** Read at every model call. */
  readonly options: Pick<ChainOptions<unknown>, 'modelSettings' | 'maxExecutionTime'>;
  readonly responseFormat: ResponseFormat | undefined;
  /** Checks an answer (the `validateResult` effect). */
  readonly validate: (text: string) => Promise<ValidationOutcome>;
}

type ChainEffect = EffectOf<ChainEffectRequest>;

// The one actor a run's machine invokes: it performs each effect the machine requests and
// answers with its `.done` / `.error` event. It owns the run's tools (open streams) and an
// AbortController that stopping the run (final state, ABORT) aborts. Effects run under a
// controller of their own, linked to the run's, that `cancel` (maxExecutionTime) aborts and
// replaces: what was in flight is aborted, its answers, which the machine no longer waits
// for, are dropped, and what the machine asks next runs under the new one (streams opened
// before are aborted too: no step reads them after a stop). One controller per cancel, not
// per effect: two AbortControllers a step cost the bench's chain step ~30 µs of ~150.
export function chainEffects(
  setup: ChainEffectsSetup,
): EffectsKind<ChainEffectRequest, ChainRunResources> {
  const source = modelSource(setup.model);
  return {
    // What a mismatch calls each effect of the chain.
    names: { callModel: 'model call', executeTools: 'tool step', validateResult: 'validation' },
    // A chain invoked from an app's machine has no run() around it: it owns its resources
    // (the run host's childResources), and records into the observed run its chain actor
    // (this actor's parent) reports as.
    open(run, sendBack) {
      const { controller, tools, journal, approvals } = run;
      approvals?.attach(sendBack);
      let current = linkedController(controller.signal).controller;
      const send = (event: ChainEvent) => sendBack(event);
      const answers = new EffectAnswers<ChainEvent>(journal, journaledAnswer, send);
      const answer = (
        type: ChainEffect['type'],
        work: (signal: AbortSignal) => Promise<unknown>,
        live: LiveEffect | undefined,
      ) => answers.answer(type, work, current.signal, live, notCancelled);
      return {
        journal,
        send: sendBack,
        cancel(request) {
          // Only the deadline cancels a chain's effects: journaled as the timer firing.
          journal?.timerFired('maxExecutionTime');
          current.abort(new AbortError(`Cancelled: the run reached ${request.reason}`));
          current = linkedController(controller.signal).controller;
        },
        decide(request) {
          approvals?.decide(request.decision);
        },
        perform(request, live) {
          switch (request.type) {
            case 'callModel':
              return answer(
                'callModel',
                (signal) =>
                  finalCallBounded(setup, request.input, signal, (bounded) =>
                    callModel(setup, source, request.input, run, bounded, live?.reissued),
                  ),
                live,
              );
            case 'executeTools': {
              if (live?.ended) {
                // The run ended during this step, by a decision's deadline: the calls that
                // finished before it, then that again, only.
                replayedResults(request.input.calls, [...live.calls.values()], run, send);
                approvals?.replay(live.approvals);
                return;
              }
              const stepJournal =
                live && journal && toolCallJournal(journal, live.seq, live.calls, live.approvals);
              // A step in flight at the crash: the machine learns at once what of it finished
              // (before a deadline that passed meanwhile can fire), and details() records it,
              // whether or not the step then gets to run (RunTools runs only the rest).
              if (live) {
                replayedResults(request.input.calls, [...live.calls.values()], run, send);
              }
              return answer(
                'executeTools',
                (signal) =>
                  tools.execute(
                    request.input.calls,
                    signal,
                    request.input.directCallId,
                    stepJournal,
                    (result) => send({ type: 'executeTools.result', result }),
                  ),
                live,
              );
            }
            case 'validateResult':
              return answer('validateResult', () => setup.validate(request.input.text), live);
          }
        },
        replay: (request, outcome) => replayAnswer(setup, request, outcome, run, send),
        // ABORT or the deadline stopped a tool step: the calls that finished before it count.
        held(request, outcome) {
          if (request.type !== 'executeTools') return;
          replayedResults(request.input.calls, outcome.calls, run, send);
          approvals?.replay(outcome.approvals);
        },
        stop() {
          void disposeChainRun(run);
        },
      };
    },
  };
}

async function callModel(
  setup: ChainEffectsSetup,
  source: ReturnType<typeof modelSource>,
  input: CallModelInput,
  run: ChainRunResources,
  signal: AbortSignal,
  reissued = false,
) {
  const { model, responseFormat } = setup;
  const specs = await run.tools.specs(signal);
  const request: ModelRequest = {
    ...setup.options.modelSettings,
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

/**
 * The final call of earlyStopping 'generate' is made once the run's time limit stopped it (or
 * another limit did): it gets maxExecutionTime of its own, then it is aborted and the run
 * fails with a TimeoutError, so that a run with a time limit never waits without one. A model
 * that ignores its signal is left behind, not waited for.
 */
function finalCallBounded<T>(
  setup: ChainEffectsSetup,
  input: CallModelInput,
  signal: AbortSignal,
  call: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const limit = setup.options.maxExecutionTime;
  if (!input.final || limit === undefined) return call(signal);
  const { controller, unlink } = linkedController(signal);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new TimeoutError(
        limit,
        `The final answer of earlyStopping 'generate' did not come within maxExecutionTime (${limit} ms)`,
      );
      controller.abort(error);
      reject(error);
    }, limit);
  });
  return Promise.race([call(controller.signal), late]).finally(() => {
    clearTimeout(timer);
    unlink();
  });
}

/**
 * A finished effect's journaled answer, delivered as the live run delivered it (a tool step's
 * calls one by one, then the step), and recorded for details().
 */
function replayAnswer(
  setup: ChainEffectsSetup,
  request: ChainEffect,
  outcome: ReplayedEffect,
  run: ChainRunResources,
  send: (event: ChainEvent) => void,
): void {
  // A chain's effect answers once.
  const event = outcome.answers[0] as ChainEvent;
  if (request.type === 'callModel' && event.type === 'callModel.done') {
    const request_: ModelRequest = {
      ...setup.options.modelSettings,
      messages: request.input.messages,
    };
    run.recorder.replayedModelCall(
      modelCallLabel(request.input),
      request_,
      event.output,
      outcome.ms,
    );
  }
  if (request.type !== 'executeTools') {
    send(event);
    return;
  }
  const finished = replayedResults(request.input.calls, outcome.calls, run, send);
  // The machine waited for these decisions before the step ended: it learns them again first.
  run.approvals?.replay(outcome.approvals);
  if (event.type !== 'executeTools.done') {
    send(event);
    return;
  }
  const results = request.input.calls.map(
    (call) =>
      finished.get(call.id) ??
      failedToolResult(call, `The run's journal holds no result for call ${call.id}.`),
  );
  const output = { ...event.output, results };
  run.tools.replayed(request.input.calls, output);
  send({ type: event.type, output });
}

/**
 * The calls of a tool step the journal has results for, in the order they finished: each
 * delivered to the machine as it was live, one by one, and recorded for details() (replayed)
 * when `run` is given.
 */
function replayedResults(
  calls: readonly ToolCall[],
  journaled: readonly JournaledCall[],
  run: ChainRunResources | undefined,
  send: (event: ChainEvent) => void,
): Map<string, ToolResult> {
  const byId = new Map(calls.map((call) => [call.id, call]));
  const results = new Map<string, ToolResult>();
  for (const known of journaled) {
    const call = byId.get(known.callId);
    if (!known.finished || !call) continue;
    const result = known.result as ToolResult;
    const now = performance.now();
    run?.recorder.toolCall({
      call,
      result,
      executor: known.executor ?? 'local',
      startedAt: now,
      endedAt: now + (known.ms ?? 0),
      resumed: { replayed: true },
    });
    results.set(call.id, result);
    send({ type: 'executeTools.result', result });
  }
  return results;
}

/** An answer is delivered unless its effect was cancelled (the machine no longer waits for it). */
function notCancelled(signal: AbortSignal): boolean {
  return !signal.aborted;
}

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
