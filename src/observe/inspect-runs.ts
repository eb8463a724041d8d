import type { InspectionEvent, Observer } from 'xstate';
import { ConfigError } from '../errors.js';
import { reportOnce } from './observer-errors.js';

// The process-wide XState inspectors (SPEC D1): what `statecraft run --inspect` registers so
// that every chain and tool-loop run reaches the Stately inspector without the example
// passing `inspect` to each run. XState takes one `inspect` per actor system, given when its
// root actor is created, so a run's own inspector and these are merged into one function
// there. Like the observers' list, this one is replaced, never mutated: a run keeps the
// inspectors current when it started.

/** What XState's `inspect` option takes: an observer, or a function of each event. */
export type RunInspector = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

interface Registration {
  readonly inspect: RunInspector;
  /** Calls the inspector; what it throws is reported once on stderr, never to the run. */
  readonly next: (event: InspectionEvent) => void;
}

const NONE: readonly Registration[] = Object.freeze([]);

/** On `globalThis`, like the observers' list: shared by every copy of statecraft in the process. */
interface InspectorRegistry {
  inspectors: readonly Registration[];
}
const REGISTRY_KEY = Symbol.for('statecraft.inspectors');
const shared = globalThis as { [REGISTRY_KEY]?: InspectorRegistry };
shared[REGISTRY_KEY] ??= { inspectors: NONE };
const registry: InspectorRegistry = shared[REGISTRY_KEY];

/**
 * Inspects every chain and tool-loop run started from now on (`invoke`, `stream`, `batch`,
 * and runs inside Runnables), besides each run's own `inspect` option: pass
 * `createWebSocketInspector().inspect` or any XState inspection observer. Returns the
 * function that unregisters it; runs already started keep reporting to it.
 *
 * A chain's or tool loop's `machine` invoked by your own machine is an actor of your
 * machine's system: it is inspected by the `inspect` you give `createActor` for your
 * machine (XState inspects a whole actor system), not by this registry.
 *
 * Unlike a run's own `inspect`, an inspector registered here never fails a run: what it
 * throws is reported once on stderr.
 */
export function inspectRuns(inspect: RunInspector): () => void {
  const next = nextOf(inspect, 'inspect');
  const registration: Registration = {
    inspect,
    next: (event) => {
      try {
        next(event);
      } catch (error) {
        reportOnce(
          inspect,
          'inspect',
          'an inspector registered with inspectRuns failed; runs go on without its event (later failures are not reported):',
          error,
        );
      }
    },
  };
  registry.inspectors = [...registry.inspectors, registration];
  let registered = true;
  return () => {
    if (!registered) return;
    registered = false;
    registry.inspectors = registry.inspectors.filter((r) => r !== registration);
  };
}

/**
 * The `inspect` a run's root actor is created with: the run's own, as given, when no
 * inspector is registered (so nothing changes and nothing is allocated), else one function
 * calling the run's own and every registered one, each once.
 */
export function inspectorFor(own: RunInspector | undefined): RunInspector | undefined {
  const registered = registry.inspectors;
  if (registered.length === 0) return own;
  const others = registered.filter((r) => r.inspect !== own);
  // The run's own inspector is called as XState would call it: its errors are the run's.
  return (event: InspectionEvent) => {
    if (typeof own === 'function') own(event);
    else own?.next?.(event);
    for (const registration of others) registration.next(event);
  };
}

/** A run's `inspect` option: an XState inspection observer, or a function; ConfigError else. */
export function checkInspector(inspect: unknown, option: string): void {
  nextOf(inspect as RunInspector, option);
}

function nextOf(inspect: RunInspector, option: string): (event: InspectionEvent) => void {
  if (typeof inspect === 'function') return inspect;
  if (typeof inspect === 'object' && inspect !== null) {
    const { next } = inspect;
    if (next === undefined || typeof next === 'function') {
      return (event) => inspect.next?.(event);
    }
    throw new ConfigError(`${option}.next`, `must be a function; got ${typeof next}`);
  }
  throw new ConfigError(
    option,
    `must be an XState inspection observer ({ next(event) }) or a function of each event; got ${inspect === null ? 'null' : typeof inspect}`,
  );
}
