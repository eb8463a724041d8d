import type { Chain } from '../chain/chain.js';
import type { ChainResult, ChainRunInput, ChainStreamEvent } from '../chain/run-types.js';
import { userMessage } from '../messages.js';
import { OBSERVED_AS, REPORTS_ITSELF } from '../observe/observe-agent-run.js';
import { type InheritsObservers, RUN_OBSERVERS } from '../observe/registry.js';
import type { IntermediateResultsRef } from '../run-config/config.js';
import type { RunEventBody } from './run-events.js';
import { observedSession } from './trace-run.js';
import type { RunnableDefinition } from './types.js';

/**
 * A chain's run as a Runnable (SPEC R1): what `fromChain(chain)` and a chain as a step do.
 * Along a sequence it starts from the intermediate results the chains before it cached and
 * leaves its own for the chains after it (SPEC C9), unless its input brings its own.
 */
export function chainRun<T>(
  chain: Chain<T>,
  name = chain.name,
): RunnableDefinition<string | ChainRunInput, ChainResult<T>> {
  return {
    name,
    kind: 'chain',
    // Observers see the chain's own run, as this Runnable run (SPEC X4): one run, not two.
    [REPORTS_ITSELF]: true,
    run: async (input, context) => {
      const { signal, inspect, observers, intermediateResults: shared } = context.config;
      const runInput = withShared(input, shared);
      const options = {
        ...(signal && { signal }),
        ...(inspect && { inspect }),
        ...(observers && { observers }),
        [OBSERVED_AS]: { ...context.run, ...observedSession(context.config) },
        [RUN_OBSERVERS]: (context.config as InheritsObservers)[RUN_OBSERVERS],
      };
      let result: ChainResult<T> | undefined;
      if (context.streaming) {
        for await (const event of chain.stream(runInput, options)) {
          if (event.type === 'final') result = event.result;
          else {
            const body = chainEventBody(event);
            if (body) context.emit(body);
          }
        }
        if (!result) throw new Error(`${name}: the chain's stream ended without its result`);
      } else {
        result = await chain.invoke(runInput, options);
      }
      if (shared) keepNewResults(shared, runInput.intermediateResults, result.intermediateResults);
      return result;
    },
  };
}

function withShared(
  input: string | ChainRunInput,
  shared: IntermediateResultsRef | undefined,
): ChainRunInput {
  const runInput = typeof input === 'string' ? { messages: [userMessage(input)] } : input;
  if (!shared || runInput.intermediateResults) return runInput;
  return { ...runInput, intermediateResults: shared.current };
}

/**
 * Merges only what this run changed into the shared results: branches of a `parallel` start
 * from the same results, and one must not write back stale values over another's.
 */
function keepNewResults(
  shared: IntermediateResultsRef,
  before: Readonly<Record<string, unknown>> | undefined,
  after: Readonly<Record<string, unknown>>,
): void {
  const changed = Object.entries(after).filter(
    ([key, value]) => !before || !Object.hasOwn(before, key) || before[key] !== value,
  );
  if (changed.length) shared.current = { ...shared.current, ...Object.fromEntries(changed) };
}

function chainEventBody(
  event: Exclude<ChainStreamEvent, { type: 'final' }>,
): RunEventBody | undefined {
  switch (event.type) {
    case 'state':
      return { type: 'state', state: event.state };
    case 'text-delta':
      return { type: 'text-delta', delta: event.delta };
    case 'tool-call':
      return { type: 'tool-call', toolCall: event.toolCall };
    case 'tool-result':
      return { type: 'tool-result', result: event.result };
    case 'warning':
      return { type: 'warning', text: event.text };
  }
}
