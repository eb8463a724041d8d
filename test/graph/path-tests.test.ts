// SPEC D2 for users' machines: generatePathTests from statecraft/testing on an app machine of
// our own making (test/graph/order-machine.ts), the way a user would call it.
import {
  generatePathTests,
  type PathReplay,
  PathReplayError,
  TraversalLimitError,
} from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { assign, createMachine, fromPromise, setup } from 'xstate';
import { ORDER_INPUT, ORDER_OPTIONS, orderMachine } from './order-machine.js';

const suite = generatePathTests(orderMachine, ORDER_OPTIONS);

const NAMES = [
  'classify:done#0 → fulfil:done#0 ⇒ done',
  'classify:done#0 → fulfil:error#0 ⇒ failed',
  'classify:done#1 → APPROVE → fulfil:done#0 ⇒ done',
  'classify:done#1 → APPROVE → fulfil:error#0 ⇒ failed',
  'classify:done#1 → REJECT {"reason":"too risky"} ⇒ rejected',
  'classify:done#1 → after:60000@awaitingReview ⇒ rejected',
  'classify:error#0 ⇒ failed',
];

function pathNamed(name: string) {
  const path = suite.paths.find((p) => p.name === name);
  if (!path) throw new Error(`no path ${name}`);
  return path;
}

describe(`generatePathTests on an order machine: ${suite.paths.length} paths`, () => {
  it('generates exactly these paths, sorted by name', () => {
    expect(suite.paths.map((p) => p.name)).toEqual(NAMES);
  });

  describe('every path replays on a real actor', () => {
    for (const path of suite.paths) {
      it(path.name, async () => {
        const replay = await path.run();
        expect(replay.snapshot.value).toEqual(path.state.value);
      });
    }
  });

  it('gives each path its steps: the start, then one event and its snapshot each', () => {
    const path = pathNamed('classify:done#1 → APPROVE → fulfil:done#0 ⇒ done');
    expect(path.steps.map((s) => [s.name, s.state.value])).toEqual([
      ['(start)', 'classifying'],
      ['classify:done#1', 'awaitingReview'],
      ['APPROVE', 'fulfilling'],
      ['fulfil:done#0', 'done'],
    ]);
    expect(path.events.map((e) => e.type)).toEqual([
      'xstate.done.actor.classify',
      'APPROVE',
      'xstate.done.actor.fulfil',
    ]);
    expect(path.state.context).toMatchObject({ risk: 'high', approved: true, trackingId: 'T-1' });
  });

  it('records what the real actor did: the children it started, with their inputs, and its transitions', async () => {
    const replay = await pathNamed('classify:done#1 → APPROVE → fulfil:done#0 ⇒ done').run();
    expect(replay.calls).toEqual([
      { id: 'classify', src: 'classify', input: { amount: ORDER_INPUT.amount }, outcome: 'output' },
      { id: 'fulfil', src: 'fulfil', input: { orderId: ORDER_INPUT.orderId }, outcome: 'output' },
    ]);
    expect([...replay.transitions]).toEqual([
      'classifying xstate.done.actor.classify#1 → awaitingReview',
      'awaitingReview APPROVE#0 → fulfilling',
      'fulfilling xstate.done.actor.fulfil#0 → done',
    ]);
    expect([...replay.stateNodes].sort()).toEqual([
      'awaitingReview',
      'classifying',
      'done',
      'fulfilling',
    ]);
  });

  it('a child with no outcomes never settles: its path ends with it waiting', async () => {
    const stuck = generatePathTests(orderMachine, {
      ...ORDER_OPTIONS,
      events: [],
      delays: false,
      actors: { classify: { outputs: [{ risk: 'low' }] }, fulfil: {} },
    });
    const [path] = stuck.paths;
    expect(stuck.paths.map((p) => p.name)).toEqual(['classify:done#0 ⇒ fulfilling']);
    const replay = await path?.run();
    expect(replay?.snapshot).toMatchObject({ status: 'active', value: 'fulfilling' });
    expect(replay?.calls.map((c) => [c.id, c.outcome])).toEqual([
      ['classify', 'output'],
      ['fulfil', 'waiting'],
    ]);
  });

  it('ends the review delay on a simulated clock, not a real one', async () => {
    const started = Date.now();
    const replay = await pathNamed('classify:done#1 → after:60000@awaitingReview ⇒ rejected').run();
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(replay.snapshot.context).toMatchObject({ reason: 'review timed out' });
  });

  it('measures coverage on the traversal graph, and the same on real replays', async () => {
    const expected = {
      states: { covered: 6, total: 7, missing: ['cancelled'] },
      transitions: { covered: 8, total: 9, missing: ['awaitingReview CANCEL#0 → cancelled'] },
    };
    expect(suite.coverage).toEqual(expected);
    const replays = await Promise.all(suite.paths.map((p) => p.run()));
    expect(suite.replayCoverage(replays)).toEqual(expected);
  });

  it("with paths: 'shortest' on a machine with a cycle, covers less, and says what it misses", async () => {
    const review = setup({
      types: { events: {} as { type: 'SUBMIT' } | { type: 'REVISE' } | { type: 'APPROVE' } },
    }).createMachine({
      id: 'doc',
      initial: 'drafting',
      states: {
        drafting: { on: { SUBMIT: 'inReview' } },
        inReview: { on: { REVISE: 'drafting', APPROVE: 'published' } },
        published: { type: 'final' },
      },
    });
    const events = [{ type: 'SUBMIT' }, { type: 'REVISE' }, { type: 'APPROVE' }] as const;
    const simple = generatePathTests(review, { events });
    // A simple path may end by taking one edge back onto itself: REVISE is on a path.
    expect(simple.paths.map((p) => p.name)).toEqual([
      'SUBMIT → APPROVE ⇒ published',
      'SUBMIT → REVISE ⇒ drafting',
    ]);
    expect(simple.coverage.transitions.missing).toEqual([]);
    const back = await simple.paths[1]?.run();
    expect(back?.snapshot).toMatchObject({ status: 'active', value: 'drafting' });
    const shortest = generatePathTests(review, { events, paths: 'shortest' });
    expect(shortest.paths.map((p) => p.name)).toEqual(['SUBMIT → APPROVE ⇒ published']);
    expect(shortest.coverage.transitions).toEqual({
      covered: 2,
      total: 3,
      missing: ['inReview REVISE#0 → drafting'],
    });
  });
});

// The tests above must be able to fail: the same paths replayed on a broken copy.
describe('replays of the same paths on a broken copy of the machine', () => {
  const broken = orderMachine.provide({ guards: { isLowRisk: () => false } });

  it('fail exactly where the broken guard sends the actor elsewhere', async () => {
    const results = await Promise.allSettled(suite.paths.map((p) => p.run({ machine: broken })));
    const failed = suite.paths
      .filter((_, i) => results[i]?.status === 'rejected')
      .map((p) => p.name);
    expect(failed).toEqual([
      'classify:done#0 → fulfil:done#0 ⇒ done',
      'classify:done#0 → fulfil:error#0 ⇒ failed',
    ]);
    const reason = (results[0] as PromiseRejectedResult).reason;
    expect(reason).toBeInstanceOf(PathReplayError);
    expect(reason.step).toBe(1);
    expect(reason.message).toBe(
      [
        'classify:done#0 → fulfil:done#0 ⇒ done: step 1 (classify:done#0): the state value differs',
        '  expected: "fulfilling"',
        '  actual:   "awaitingReview"',
      ].join('\n'),
    );
  });

  it('run() rejects for a path the broken machine cannot follow', async () => {
    await expect(
      pathNamed('classify:done#0 → fulfil:done#0 ⇒ done').run({ machine: broken }),
    ).rejects.toThrow(/step 1 \(classify:done#0\): the state value differs/);
  });

  it('replay coverage of the broken copy misses the low-risk transition', async () => {
    const replays: PathReplay[] = [];
    for (const path of suite.paths) {
      await path.run({ machine: broken }).then(
        (replay) => replays.push(replay),
        () => {},
      );
    }
    expect(suite.replayCoverage(replays).transitions.missing).toEqual([
      'classifying xstate.done.actor.classify#0 [isLowRisk] → fulfilling',
      'awaitingReview CANCEL#0 → cancelled',
    ]);
  });

  it('a context that differs (same state value) is caught through serializeState', async () => {
    const misrecords = orderMachine.provide({
      actions: { recordRisk: assign({ risk: 'low' as const }) },
    });
    const path = pathNamed('classify:done#1 → REJECT {"reason":"too risky"} ⇒ rejected');
    const error = await path.run({ machine: misrecords }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PathReplayError);
    expect((error as Error).message).toMatch(
      /^classify:done#1 → REJECT \{"reason":"too risky"\} ⇒ rejected: step 1 \(classify:done#1\): the snapshot differs \(by serializeState\)\n {2}expected: .*"risk":"high".*\n {2}actual: {3}.*"risk":"low"/,
    );
  });
});

describe('a replay checks which children wait for an answer', () => {
  const machineWith = (leftover: boolean) =>
    setup({
      types: { events: {} as { type: 'GO' } },
      actors: { search: fromPromise<string>(async () => 'hit') },
    }).createMachine({
      id: 'searcher',
      initial: 'searching',
      states: {
        searching: { invoke: { id: 'search', src: 'search', onDone: 'found' } },
        // A broken copy forgets to stop searching: `found` invokes the search again.
        found: {
          ...(leftover && { invoke: { id: 'search', src: 'search' } }),
          on: { GO: 'shown' },
        },
        shown: { type: 'final' },
      },
    });

  it('fails when a state runs a child the model does not', async () => {
    const model = generatePathTests(machineWith(false), {
      events: [{ type: 'GO' }],
      actors: { search: { outputs: ['hit'] } },
    });
    const [path] = model.paths;
    expect(path?.name).toBe('search:done#0 → GO ⇒ shown');
    await path?.run();
    await expect(path?.run({ machine: machineWith(true) })).rejects.toThrow(
      [
        'search:done#0 → GO ⇒ shown: step 1 (search:done#0): the children waiting for an answer differ (a child the state invokes must be running, and no other)',
        '  expected: []',
        '  actual:   ["search"]',
      ].join('\n'),
    );
  });
});

describe('what generatePathTests refuses, with a clear error', () => {
  const counter = setup({
    types: { context: {} as { n: number }, events: {} as { type: 'INC' } },
  }).createMachine({
    context: { n: 0 },
    on: { INC: { actions: assign({ n: ({ context }) => context.n + 1 }) } },
  });

  it('a graph deeper than limits.maxDepth (a counter in context grows it forever)', () => {
    const walk = () =>
      generatePathTests(counter, { events: [{ type: 'INC' }], limits: { maxDepth: 3 } });
    expect(walk).toThrow(TraversalLimitError);
    expect(walk).toThrow(
      'generatePathTests: limits.maxDepth (3) exceeded: a new snapshot is first reached after 4 events: INC → INC → INC → INC. If the graph grows with every event (a counter or a list in context), make serializeState bucket it; else raise limits.maxDepth.',
    );
  });

  it('a serializeState that buckets the counter makes the same machine finite', async () => {
    const bucketed = generatePathTests(counter, {
      events: [{ type: 'INC' }],
      serializeState: (s) => String(Math.min(s.context.n, 2)),
    });
    expect(bucketed.paths.map((p) => p.name)).toEqual(['INC → INC → INC ⇒ (root)']);
    // The steps are exact (n = 3), the comparison goes through the bucketing.
    expect(bucketed.paths[0]?.state.context.n).toBe(3);
    await bucketed.paths[0]?.run();
  });

  it('more paths than limits.maxPaths', () => {
    expect(() =>
      generatePathTests(orderMachine, { ...ORDER_OPTIONS, limits: { maxPaths: 3 } }),
    ).toThrow(
      /^generatePathTests: limits\.maxPaths \(3\) exceeded: more than 3 simple paths over 11 snapshots/,
    );
  });

  it('more snapshots than limits.maxStates', () => {
    expect(() =>
      generatePathTests(counter, { events: [{ type: 'INC' }], limits: { maxStates: 5 } }),
    ).toThrow(/limits\.maxStates \(5\) exceeded: more than 5 distinct snapshots/);
  });

  it('an invoke whose src is inline logic, not a name in setup({ actors })', () => {
    // createMachine without setup: inline logic is the only way to give it an actor.
    const inline = createMachine({
      initial: 'looking',
      states: {
        looking: {
          invoke: { id: 'lookup', src: fromPromise(async () => 42), onDone: 'found' },
        },
        found: { type: 'final' },
      },
    });
    expect(() => generatePathTests(inline, { actors: { lookup: { outputs: [42] } } })).toThrow(
      "generatePathTests: actors.lookup: the invoke 'lookup' in state 'looking' has inline logic as its src. Name it in setup({ actors: { lookup: … } }) and invoke it as src: 'lookup', so a replay can replace it with machine.provide({ actors }).",
    );
  });

  it('a src also invoked under an id that actors does not list', async () => {
    const twice = setup({
      actors: { ask: fromPromise<string>(async () => 'yes') },
    }).createMachine({
      initial: 'first',
      states: {
        first: { invoke: { id: 'askFirst', src: 'ask', onDone: 'second' } },
        second: { invoke: { id: 'askSecond', src: 'ask', onDone: 'done' } },
        done: { type: 'final' },
      },
    });
    expect(() => generatePathTests(twice, { actors: { askFirst: { outputs: ['yes'] } } })).toThrow(
      "generatePathTests: actors.askFirst: its src 'ask' is also invoked as 'askSecond' (in second), which `actors` does not list. A replay replaces a src for all its invokes: list those ids too ('never' for a child that never answers).",
    );
    const both = generatePathTests(twice, {
      actors: { askFirst: { outputs: ['yes'] }, askSecond: { outputs: ['yes'] } },
    });
    expect(both.paths.map((p) => p.name)).toEqual(['askFirst:done#0 → askSecond:done#0 ⇒ done']);
    await both.paths[0]?.run();
  });

  it('an actors key that is no invoke id of the machine', () => {
    expect(() =>
      generatePathTests(orderMachine, {
        ...ORDER_OPTIONS,
        actors: { classifier: { outputs: [] } },
      }),
    ).toThrow(
      "generatePathTests: actors.classifier: the machine invokes no actor with id 'classifier'. Key `actors` by the invoke's `id`; the machine's invokes: 'classify' (src classify, in classifying), 'fulfil' (src fulfil, in fulfilling).",
    );
  });
});

describe('children without an onError', () => {
  it('an unhandled child error ends the path in an error status, and the replay agrees', async () => {
    const fragile = setup({
      actors: { fetch: fromPromise<string>(async () => 'data') },
    }).createMachine({
      id: 'fragile',
      initial: 'fetching',
      states: {
        fetching: { invoke: { id: 'fetch', src: 'fetch', onDone: 'ready' } },
        ready: { type: 'final' },
      },
    });
    const fragileSuite = generatePathTests(fragile, {
      actors: { fetch: { outputs: ['data'], errors: [new Error('offline')] } },
    });
    expect(fragileSuite.paths.map((p) => p.name)).toEqual([
      'fetch:done#0 ⇒ ready',
      'fetch:error#0 ⇒ fetching (error)',
    ]);
    for (const path of fragileSuite.paths) await path.run();
  });
});
