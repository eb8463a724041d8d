import { AbortError } from '../errors.js';
import type { ToolCall, ToolResult } from '../messages.js';
import type { ModelRequest, ModelResponse } from '../model/language-model.js';
import type { Usage } from '../usage.js';
import { notify } from './observer-errors.js';
import type {
  ObservedApproval,
  ObservedModelCall,
  ObservedRun,
  ObservedToolCall,
  RunObserver,
} from './run-observer.js';

// One observed run: the run as observers see it, and the one place its hooks are called from.
// Runs nobody observes have none (the runtimes hold `undefined` and skip every call), so
// observation costs nothing per model call, tool call or snapshot unless someone listens.

/** Wall-clock milliseconds with sub-millisecond precision, as observers and spans want them. */
export function observedTime(performanceNow: number = performance.now()): number {
  return performance.timeOrigin + performanceNow;
}

export type RunEndOutcome = Parameters<NonNullable<RunObserver['onRunEnd']>>[1];

export class RunObservation {
  readonly run: ObservedRun;
  /** Every observer of this run, global ones included: what child runs report to as well. */
  readonly observers: readonly RunObserver[];
  #ended = false;
  /** Model calls started and not yet ended: the run's end ends them first (see `end`). */
  readonly #modelCalls = new Set<ObservedModelCall>();
  /** Tool calls started and not yet ended, so the end reports the object the start did. */
  readonly #toolCalls = new Map<ToolCall, ObservedToolCall>();

  constructor(observers: readonly RunObserver[], run: ObservedRun) {
    this.observers = observers;
    this.run = run;
  }

  start(input: unknown): void {
    if (this.#ended) return;
    for (const o of this.observers) notify(o, 'onRunStart', () => o.onRunStart?.(this.run, input));
  }

  /** After each macrostep: XState's state value (a string, or an object for nested states). */
  state(value: unknown, context: unknown): void {
    if (this.#ended) return;
    for (const o of this.observers)
      notify(o, 'onState', () => o.onState?.(this.run, value, context));
  }

  /** `startedAt` is a `performance.now()` time, as the run recorder keeps them. */
  modelCallStart(
    index: number,
    purpose: string,
    request: ModelRequest,
    streamed: boolean,
    startedAt: number,
  ): ObservedModelCall {
    const call: ObservedModelCall = {
      index,
      purpose,
      request,
      model: this.run.model ?? UNKNOWN_MODEL,
      streamed,
      startTime: observedTime(startedAt),
    };
    // A call started after its run ended (a step still running when a timeout fired) is
    // not reported: observers would get a call outside its run, and no end for it.
    if (this.#ended) return call;
    this.#modelCalls.add(call);
    for (const o of this.observers) {
      notify(o, 'onModelCallStart', () => o.onModelCallStart?.(this.run, call));
    }
    return call;
  }

  modelCallAnswered(
    call: ObservedModelCall,
    response: ModelResponse,
    endedAt: number,
    cost?: number,
  ): void {
    if (!this.#modelCalls.delete(call)) return; // ended with its run already, or never reported
    const outcome = {
      response,
      usage: response.usage,
      ...(cost !== undefined && { cost }),
      endTime: observedTime(endedAt),
    };
    for (const o of this.observers) {
      notify(o, 'onModelCallEnd', () => o.onModelCallEnd?.(this.run, call, outcome));
    }
  }

  modelCallFailed(call: ObservedModelCall, error: unknown, endedAt: number): void {
    if (!this.#modelCalls.delete(call)) return; // ended with its run already, or never reported
    const outcome = { error, endTime: observedTime(endedAt) };
    for (const o of this.observers) {
      notify(o, 'onModelCallEnd', () => o.onModelCallEnd?.(this.run, call, outcome));
    }
  }

  toolCallStart(call: ToolCall, executor: string, startedAt: number): void {
    if (this.#ended) return;
    const observed: ObservedToolCall = { call, executor, startTime: observedTime(startedAt) };
    this.#toolCalls.set(call, observed);
    for (const o of this.observers) {
      notify(o, 'onToolCallStart', () => o.onToolCallStart?.(this.run, observed));
    }
  }

  /** A call began (`decision` undefined) or ended waiting for a decision. */
  approval(approval: ObservedApproval): void {
    if (this.#ended) return;
    for (const o of this.observers)
      notify(o, 'onApproval', () => o.onApproval?.(this.run, approval));
  }

  toolCallEnd(
    call: ToolCall,
    result: ToolResult,
    executor: string,
    startedAt: number,
    endedAt: number,
  ): void {
    // A call that ended with its run (cancelled, see `end`) is not reported a second time.
    if (this.#ended) return;
    // A call whose start was not seen (none today) still ends with what is known of it.
    const observed = this.#toolCalls.get(call) ?? {
      call,
      executor,
      startTime: observedTime(startedAt),
    };
    this.#toolCalls.delete(call);
    const outcome = { result, endTime: observedTime(endedAt) };
    for (const o of this.observers) {
      notify(o, 'onToolCallEnd', () => o.onToolCallEnd?.(this.run, observed, outcome));
    }
  }

  /**
   * Reports the run's end once; later calls (a result settled twice) are ignored. Calls still
   * in flight (a tool running when the run was aborted or timed out, a model that ignores
   * the abort signal) end first, cancelled, so every call observers heard start ends, inside
   * its run; what those calls report later is dropped.
   */
  end(outcome: RunEndOutcome): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#cancelPending(outcome.endTime);
    for (const o of this.observers) notify(o, 'onRunEnd', () => o.onRunEnd?.(this.run, outcome));
  }

  #cancelPending(endTime: number): void {
    if (this.#modelCalls.size === 0 && this.#toolCalls.size === 0) return;
    const error = new AbortError(RUN_ENDED);
    for (const call of this.#modelCalls) {
      const outcome = { error, endTime };
      for (const o of this.observers) {
        notify(o, 'onModelCallEnd', () => o.onModelCallEnd?.(this.run, call, outcome));
      }
    }
    this.#modelCalls.clear();
    for (const observed of this.#toolCalls.values()) {
      const { call } = observed;
      const result: ToolResult = {
        toolCallId: call.id,
        name: call.name,
        output: undefined,
        success: false,
        error: RUN_ENDED,
      };
      const outcome = { result, error, endTime };
      for (const o of this.observers) {
        notify(o, 'onToolCallEnd', () => o.onToolCallEnd?.(this.run, observed, outcome));
      }
    }
    this.#toolCalls.clear();
  }

  succeeded(output: unknown, usage?: Usage, cost?: number): void {
    this.end({
      output,
      ...(usage && { usage }),
      ...(cost !== undefined && { cost }),
      endTime: observedTime(),
    });
  }

  failed(error: unknown, usage?: Usage, cost?: number): void {
    this.end({
      error,
      ...(usage && { usage }),
      ...(cost !== undefined && { cost }),
      endTime: observedTime(),
    });
  }
}

/** Why a call in flight when its run ended ends as cancelled (an AbortError, code `ABORTED`). */
const RUN_ENDED = 'The run ended before this call finished';

const UNKNOWN_MODEL = Object.freeze({ provider: 'unknown', modelId: 'unknown' });

/** Starts observing a run: undefined, at no cost, when nobody observes it. */
export function startObservation(
  observers: readonly RunObserver[],
  run: ObservedRun,
  input: unknown,
): RunObservation | undefined {
  if (observers.length === 0) return undefined;
  const observation = new RunObservation(observers, run);
  observation.start(input);
  return observation;
}
