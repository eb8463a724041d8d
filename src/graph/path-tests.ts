import {
  type AnyMachineSnapshot,
  type AnyStateMachine,
  type EventFromLogic,
  type EventObject,
  type InputFrom,
  initialTransition,
  type SnapshotFrom,
  transition,
} from 'xstate';
import { type Coverage, pathsCoverage, replaysCoverage } from './coverage.js';
import type { MachineGraph } from './machine-graph.js';
import { enumeratePaths, type GraphPath, type PathKind, pathName } from './paths.js';
import { type PathReplay, type ReplayStep, replayPath } from './replay.js';
import { type GraphOptions, type Traversal, traverse } from './traversal.js';

// SPEC D2 for users' machines: path tests generated from any XState v5 machine, typically an
// app's own machine that invokes our chain or tool loop (or any actors) as children. The
// suite is data plus run() functions, so it works with any test runner: wrap each in it().

/** How to walk the machine (GraphOptions), typed by the machine, and which paths to keep. */
export type PathTestOptions<TMachine extends AnyStateMachine> = Omit<
  GraphOptions<SnapshotFrom<TMachine>>,
  'input' | 'events'
> & {
  /** The machine's input. */
  readonly input?: InputFrom<TMachine>;
  /** Events from outside offered in each snapshot: a list, or a function of the snapshot. */
  readonly events?:
    | readonly EventFromLogic<TMachine>[]
    | ((snapshot: SnapshotFrom<TMachine>) => readonly EventFromLogic<TMachine>[]);
  /** 'simple' (default): every edge on some path; 'shortest': one shortest path per snapshot. */
  readonly paths?: PathKind;
};

export type PathStep<S> = ReplayStep<S>;

export interface PathTest<S> {
  /** Its events, then where it ends: `classify:done#0 → APPROVE ⇒ done`. Unique in a suite. */
  readonly name: string;
  /** The events after the start, in order. */
  readonly events: readonly EventObject[];
  /** steps[0] is the start (`xstate.init`); each later step is one event and its snapshot. */
  readonly steps: readonly PathStep<S>[];
  /** The snapshot the path ends in, per the machine's model. */
  readonly state: S;
  /**
   * Replays the path on a real actor (of `machine`, default: the suite's): rejects with a
   * PathReplayError naming the first step where the actor disagrees.
   */
  run(options?: { readonly machine?: AnyStateMachine }): Promise<PathReplay>;
}

export interface PathTestSuite<S> {
  /** Sorted by name. */
  readonly paths: readonly PathTest<S>[];
  /** What the paths exercise on the traversal graph, transient states included. */
  readonly coverage: Coverage;
  /** The traversal graph, e.g. for reachabilityViolations (SPEC D3). */
  readonly graph: MachineGraph<S, EventObject>;
  /** What real actors exercised in some replays (the results of run()). */
  replayCoverage(replays: Iterable<PathReplay>): Coverage;
}

export function generatePathTests<TMachine extends AnyStateMachine>(
  machine: TMachine,
  options: NoInfer<PathTestOptions<TMachine>> = {},
): PathTestSuite<SnapshotFrom<TMachine>> {
  type S = SnapshotFrom<TMachine>;
  const traversal = traverse(
    machine,
    options as GraphOptions<AnyMachineSnapshot>,
    'generatePathTests',
  ) as unknown as Traversal<S & AnyMachineSnapshot>;
  const graphPaths = enumeratePaths(traversal, options.paths ?? 'simple');
  const [initial] = initialTransition(machine as AnyStateMachine, options.input);
  const seen = new Map<string, number>();
  const paths = graphPaths
    .map((path) => toPathTest(traversal, initial as S & AnyMachineSnapshot, path))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((test) => {
      // Names are test names: make repeats (events with the same name) unique.
      const n = (seen.get(test.name) ?? 0) + 1;
      seen.set(test.name, n);
      return n === 1 ? test : { ...test, name: `${test.name} (${n})` };
    })
    .map((test) => ({
      ...test,
      run: (runOptions?: { readonly machine?: AnyStateMachine }) =>
        replayPath(traversal, test.name, test.steps, runOptions?.machine),
    }));
  return {
    paths: paths as unknown as PathTest<S>[],
    coverage: pathsCoverage(machine, traversal.graph, graphPaths),
    graph: traversal.graph as unknown as MachineGraph<S, EventObject>,
    replayCoverage: (replays) => replaysCoverage(machine, replays),
  };
}

/**
 * A path's steps, recomputed from the start with xstate's pure `transition`: the graph's
 * edges start from each vertex's first-found snapshot, which a coarse serializeState may
 * have merged with others; the steps must be exactly what these events do.
 */
function toPathTest<S extends AnyMachineSnapshot>(t: Traversal<S>, initial: S, path: GraphPath<S>) {
  const steps: ReplayStep<S>[] = [
    { event: { type: 'xstate.init' }, name: '(start)', state: initial },
  ];
  let state = initial;
  for (const edge of path) {
    [state] = transition(t.machine, state, edge.event) as [S, unknown];
    steps.push({ event: edge.event, name: t.events.name(edge.event), state });
  }
  return { name: pathName(t, path, state), events: path.map((e) => e.event), steps, state };
}
