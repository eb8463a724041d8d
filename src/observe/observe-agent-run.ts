import type { AnyStateMachine } from 'xstate';
import { ConfigError } from '../errors.js';
import { randomUUID } from '../lazy-crypto.js';
import type { LanguageModel } from '../model/language-model.js';
import { type InheritsObservers, observersFor, RUN_OBSERVERS } from './registry.js';
import type { RunInfo } from './run-info.js';
import { observedTime, type RunObservation, startObservation } from './run-observation.js';
import type { ObservedRun, RunObserver } from './run-observer.js';

// How a chain or tool-loop run becomes an observed run. Run through a Runnable (fromChain,
// fromToolLoop), it is that Runnable's run: same id, same parent, so a chain in a sequence is
// one run under the sequence's, not a Runnable run with a second chain run inside. The
// Runnable hands its RunInfo over under a symbol: an internal wire, not an option users set.

/**
 * Where fromChain / fromToolLoop put the Runnable run a chain or loop run reports as.
 * Registered symbols (here and below): a Runnable of one copy of statecraft wrapping a chain
 * of another copy in the same process still reports one run.
 */
export const OBSERVED_AS: unique symbol = Symbol.for('statecraft.observedAs');

/** The observation options of a chain or tool-loop run. */
export interface AgentRunObserving extends InheritsObservers {
  readonly observers?: RunObserver | readonly RunObserver[];
  readonly parentRunId?: string;
  readonly [OBSERVED_AS]?: RunInfo & Pick<ObservedRun, 'sessionId'>;
}

export interface ObservedAgent {
  readonly name: string;
  readonly kind: 'chain' | 'tool-loop';
  readonly machine: AnyStateMachine;
  readonly model: LanguageModel | undefined;
}

/** Starts observing a chain or tool-loop run; undefined, allocating nothing, when unobserved. */
export function observeAgentRun(
  options: AgentRunObserving,
  agent: ObservedAgent,
  input: unknown,
): RunObservation | undefined {
  // Checked whether or not anyone observes: turning observation on must not fail a run
  // that worked without it.
  const { parentRunId } = options;
  if (parentRunId !== undefined && typeof parentRunId !== 'string') {
    throw new ConfigError(
      'parentRunId',
      `must be a run id string; got ${parentRunId === null ? 'null' : typeof parentRunId}`,
    );
  }
  const observers = observersFor(options.observers, options[RUN_OBSERVERS]);
  if (observers.length === 0) return undefined;
  const as = options[OBSERVED_AS];
  const { model } = agent;
  return startObservation(
    observers,
    {
      runId: as?.runId ?? randomUUID(),
      parentRunId: as ? as.parentRunId : parentRunId,
      name: as?.name ?? agent.name,
      kind: agent.kind,
      machine: agent.machine,
      ...(model && { model: { provider: model.provider, modelId: model.modelId } }),
      ...(as?.sessionId !== undefined && { sessionId: as.sessionId }),
      startTime: observedTime(),
    },
    input,
  );
}

/**
 * What a run started inside a chain or loop run gets: the same observers, this run as
 * parent. An unobserved run hands on an empty list: its children stay unobserved too, even
 * if an observer is registered meanwhile.
 */
export function childObserving(
  observation: RunObservation | undefined,
): Pick<AgentRunObserving, 'parentRunId' | typeof RUN_OBSERVERS> {
  return observation
    ? { [RUN_OBSERVERS]: observation.observers, parentRunId: observation.run.runId }
    : { [RUN_OBSERVERS]: NO_OBSERVERS };
}

const NO_OBSERVERS: readonly RunObserver[] = Object.freeze([]);

/**
 * Marks a Runnable definition whose work reports its run to observers itself (fromChain,
 * fromToolLoop), so the Runnable does not report the same run a second time.
 */
export const REPORTS_ITSELF: unique symbol = Symbol.for('statecraft.reportsItself');
