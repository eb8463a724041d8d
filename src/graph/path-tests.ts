import type {
  AnyMachineSnapshot,
  AnyStateMachine,
  EventFromLogic,
  EventObject,
  InputFrom,
  SnapshotFrom,
} from 'xstate';
import { type Coverage, replaysCoverage, stepsCoverage } from './coverage.js';
import type { MachineGraph } from './machine-graph.js';
import { enumeratePaths, type GraphPath, type PathKind, pathName } from './paths.js';
import {
  type ChildCall,
  type ChildCallOf,
  type PathReplay,
  type ReplayStep,
  replayPath,
  type StepModel,
} from './replay.js';
import { nextRuntime } from './runtime.js';
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

export interface PathTest<S, C extends ChildCall = ChildCall> {
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
  run(options?: { readonly machine?: AnyStateMachine }): Promise<PathReplay<S, C>>;
}

export interface PathTestSuite<S, C extends ChildCall = ChildCall> {
  /** Sorted by name. */
  readonly paths: readonly PathTest<S, C>[];
  /** What the paths' steps exercise, transient states included. */
  readonly coverage: Coverage;
  /** The traversal graph, e.g. for reachabilityViolations (SPEC D3). */
  readonly graph: MachineGraph<S, EventObject>;
  /** What real actors exercised in some replays (the results of run()). */
  replayCoverage(replays: Iterable<PathReplay<unknown>>): Coverage;
}

export function generatePathTests<TMachine extends AnyStateMachine>(
  machine: TMachine,
  options: NoInfer<PathTestOptions<TMachine>> = {},
): PathTestSuite<SnapshotFrom<TMachine>, ChildCallOf<TMachine>> {
  type S = SnapshotFrom<TMachine> & AnyMachineSnapshot;
  type C = ChildCallOf<TMachine>;
  const traversal = traverse<S>(
    machine,
    options as unknown as GraphOptions<S>,
    'generatePathTests',
  );
  const graphPaths = enumeratePaths(traversal, options.paths ?? 'simple');
  const seen = new Map<string, number>();
  const tests = graphPaths.map((path) => toPathTest(traversal, path));
  const paths = tests
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((test) => {
      // Names are test names: make repeats (events with the same name) unique.
      const n = (seen.get(test.name) ?? 0) + 1;
      seen.set(test.name, n);
      const name = n === 1 ? test.name : `${test.name} (${n})`;
      const { models, ...rest } = test;
      return {
        ...rest,
        name,
        run: (runOptions?: { readonly machine?: AnyStateMachine }) =>
          replayPath<S, C>(traversal, name, test.steps, models, runOptions?.machine),
      };
    });
  return {
    paths,
    coverage: stepsCoverage(
      machine,
      tests.flatMap((test) => test.models),
    ),
    graph: traversal.graph,
    replayCoverage: (replays) => replaysCoverage(machine, replays),
  };
}

/**
 * A path's steps, recomputed from the start with the path's events: the graph's edges start
 * from each vertex's first-found snapshot, which a coarse serializeState may have merged with
 * others; the steps (and their coverage) must be exactly what these events do.
 */
function toPathTest<S extends AnyMachineSnapshot>(t: Traversal<S>, path: GraphPath<S>) {
  const { initial } = t;
  let runtime = nextRuntime(undefined, undefined, { type: 'xstate.init' }, initial);
  let state = initial.snapshot;
  const steps: ReplayStep<S>[] = [{ event: { type: 'xstate.init' }, name: '(start)', state }];
  const models: StepModel[] = [{ ...initial, waiting: t.events.running(state, runtime) }];
  for (const { event } of path) {
    const name = t.events.name(event);
    const step = t.stepper.step(state, event, name);
    runtime = nextRuntime(runtime, state, event, step);
    state = step.snapshot;
    steps.push({ event, name, state });
    models.push({ ...step, waiting: t.events.running(state, runtime) });
  }
  return {
    name: pathName(t, path, state),
    events: path.map((e) => e.event),
    steps,
    state,
    models,
  };
}
