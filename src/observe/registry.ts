import { ConfigError } from '../errors.js';
import type { RunObserver } from './run-observer.js';

// The process-wide observers (what `statecraft/otel`'s `instrument()` and the CLI register)
// and the per-run ones a run was given, merged into the one list a run reports to. The global
// list is replaced, never mutated: a run takes the list current when it starts, so
// registering or unregistering mid-run never gives a run half its events.

const HOOKS = [
  'onRunStart',
  'onState',
  'onModelCallStart',
  'onModelCallEnd',
  'onToolCallStart',
  'onToolCallEnd',
  'onApproval',
  'onRunEnd',
] as const satisfies readonly (keyof RunObserver)[];

const NONE: readonly RunObserver[] = Object.freeze([]);

/**
 * The list lives on `globalThis` under a registered symbol, not in this module: a process can
 * load two copies of statecraft (a globally installed CLI running a script that imports its
 * own), and an observer registered through one must hear of runs started by the other.
 */
interface ObserverRegistry {
  observers: readonly RunObserver[];
}
const REGISTRY_KEY = Symbol.for('statecraft.observers');
const shared = globalThis as { [REGISTRY_KEY]?: ObserverRegistry };
shared[REGISTRY_KEY] ??= { observers: NONE };
const registry: ObserverRegistry = shared[REGISTRY_KEY];

/**
 * Reports every run in this process (chains, tool loops, Runnables) to `observer` from now
 * on, and the chains and tool loops your own machines invoke as child actors (their
 * `machine`), which only these process-wide observers hear of. Returns the function that
 * unregisters it; runs already started keep reporting to it.
 *
 * An observer is registered once: registering one that is already registered changes
 * nothing (it is not told of each event twice) and returns an unregister for that same
 * registration, so calling either function unregisters it.
 */
export function observeRuns(observer: RunObserver): () => void {
  checkObserver(observer, 'observer');
  if (!registry.observers.includes(observer)) {
    registry.observers = [...registry.observers, observer];
  }
  return () => {
    if (!registry.observers.includes(observer)) return;
    registry.observers = registry.observers.filter((o) => o !== observer);
  };
}

/**
 * Where a run hands the observers it resolved to the runs it starts (in a Runnable's child
 * config, a chain's or loop's run options): the list is resolved once, by the top-level run,
 * so registering or unregistering an observer mid-sequence never gives it half a tree (child
 * runs whose parent it never heard of). An internal wire, not an option users set.
 */
export const RUN_OBSERVERS: unique symbol = Symbol.for('statecraft.runObservers');

/** Options or a config that may carry the observers an enclosing run resolved. */
export interface InheritsObservers {
  readonly [RUN_OBSERVERS]?: readonly RunObserver[];
}

/**
 * Who hears of a run: the observers its enclosing run resolved (a top-level run: the global
 * observers now) and the run's own, each once. With none of either this is a shared empty
 * array, so a run nobody observes allocates nothing for observation.
 */
export function observersFor(
  own: RunObserver | readonly RunObserver[] | undefined,
  inherited?: readonly RunObserver[],
): readonly RunObserver[] {
  const global = inherited ?? registry.observers;
  if (own === undefined) return global;
  const list = Array.isArray(own) ? (own as readonly RunObserver[]) : [own as RunObserver];
  for (const [index, observer] of list.entries()) {
    checkObserver(observer, Array.isArray(own) ? `observers[${index}]` : 'observers');
  }
  if (list.length === 0) return global;
  return [...new Set([...global, ...list])];
}

function checkObserver(observer: unknown, option: string): asserts observer is RunObserver {
  if (typeof observer !== 'object' || observer === null) {
    throw new ConfigError(
      option,
      `must be a RunObserver: an object with any of ${HOOKS.join(', ')}; got ${observer === null ? 'null' : typeof observer}`,
    );
  }
  const hooks = observer as Record<string, unknown>;
  let found = false;
  for (const hook of HOOKS) {
    const value = hooks[hook];
    if (value === undefined) continue;
    if (typeof value !== 'function') {
      throw new ConfigError(`${option}.${hook}`, `must be a function; got ${typeof value}`);
    }
    found = true;
  }
  if (!found) {
    throw new ConfigError(
      option,
      `has none of the RunObserver hooks (${HOOKS.join(', ')}): it would never hear of a run`,
    );
  }
}
