// Regressions from the review of the path-test helpers (src/graph, `statecraft/testing`): one
// describe per finding, each written to fail on the code the review found.
import {
  assertCanReach,
  assertUnreachable,
  canReach,
  generatePathTests,
  PathReplayError,
  stateNodePaths,
  TraversalLimitError,
} from 'statecraft/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { assign, createMachine, fromPromise, type SnapshotFrom, setup } from 'xstate';
import { ORDER_INPUT, ORDER_OPTIONS, orderMachine } from './order-machine.js';

describe('1. a serializeState whose keys look like numbers or Object.prototype names', () => {
  const countdown = setup({
    types: { context: {} as { n: number }, events: {} as { type: 'DEC' } },
    guards: { isZero: ({ context }) => context.n === 0 },
  }).createMachine({
    id: 'countdown',
    context: { n: 3 },
    initial: 'run',
    states: {
      run: {
        always: { guard: 'isZero', target: 'done' },
        on: { DEC: { actions: assign({ n: ({ context }) => context.n - 1 }) } },
      },
      done: { type: 'final' },
    },
  });
  const byCount = {
    events: [{ type: 'DEC' } as const],
    serializeState: (s: SnapshotFrom<typeof countdown>) => String(s.context.n),
  };

  it('starts from the initial snapshot, whatever order JS gives integer-like keys', async () => {
    const suite = generatePathTests(countdown, byCount);
    expect(suite.paths.map((p) => p.name)).toEqual(['DEC → DEC → DEC ⇒ done']);
    expect(suite.coverage.transitions).toEqual({ covered: 2, total: 2, missing: [] });
    await suite.paths[0]?.run();
    const done = canReach(countdown, 'done', byCount);
    expect(done.reachable && done.path.name).toBe('DEC → DEC → DEC ⇒ done');
  });

  it('keeps vertices named `constructor` and `__proto__`', () => {
    const door = createMachine({
      id: 'door',
      initial: 'closed',
      states: { closed: { on: { OPEN: 'open' } }, open: { on: { CLOSE: 'closed' } } },
    });
    const options = {
      events: [{ type: 'OPEN' }, { type: 'CLOSE' }],
      serializeState: (s: SnapshotFrom<typeof door>) =>
        s.matches('closed') ? 'constructor' : '__proto__',
    };
    const suite = generatePathTests(door, options);
    expect(suite.paths.map((p) => p.name)).toEqual(['OPEN → CLOSE ⇒ closed']);
    expect([...suite.graph.vertices.keys()]).toEqual(['constructor', '__proto__']);
    expect(canReach(door, 'open', options).reachable).toBe(true);
  });
});

describe('2. an invoke that `actors` does not list', () => {
  it('is refused, naming every such invoke, rather than proving things with it never settling', () => {
    const message =
      "`actors` lists no outcomes for the invokes 'classify' (src classify, in classifying), 'fulfil' (src fulfil, in fulfilling)";
    expect(() => assertUnreachable(orderMachine, 'done', { input: ORDER_INPUT })).toThrow(
      `assertUnreachable: ${message}`,
    );
    expect(() => canReach(orderMachine, 'done', { input: ORDER_INPUT })).toThrow(
      `canReach: ${message}`,
    );
    expect(() =>
      generatePathTests(orderMachine, {
        input: ORDER_INPUT,
        actors: { classify: ORDER_OPTIONS.actors.classify },
      }),
    ).toThrow(
      "generatePathTests: `actors` lists no outcomes for the invoke 'fulfil' (src fulfil, in fulfilling): a traversal could never settle it, so a proof would hold only for a child that never answers, and a replay would have to run the real actor. List its outputs and errors (actors: { fulfil: { outputs: [...], errors: [...] } }), or say it never answers (actors: { fulfil: 'never' }).",
    );
  });

  let sent = 0;
  const mailer = setup({
    types: { events: {} as { type: 'CANCEL' } },
    actors: {
      send: fromPromise(async () => {
        sent++;
        return 'sent';
      }),
    },
  }).createMachine({
    id: 'mailer',
    initial: 'sending',
    states: {
      sending: { invoke: { id: 'send', src: 'send', onDone: 'sent' }, on: { CANCEL: 'cancelled' } },
      sent: { type: 'final' },
      cancelled: {},
    },
  });

  it("accepts an explicit 'never' (or no outcomes), and the replay stubs the child", async () => {
    for (const send of ['never', { outputs: [], errors: [] }] as const) {
      const suite = generatePathTests(mailer, { events: [{ type: 'CANCEL' }], actors: { send } });
      expect(suite.paths.map((p) => p.name)).toEqual(['CANCEL ⇒ cancelled']);
      const replay = await suite.paths[0]?.run();
      expect(replay?.calls).toEqual([
        { id: 'send', src: 'send', input: undefined, outcome: 'stopped' },
      ]);
    }
    expect(sent).toBe(0);
  });

  it('stubs every invoked src in a replay on another machine, and names the stub when it differs', async () => {
    let notified = 0;
    const notifying = mailer.provide({
      actors: {
        send: fromPromise(async () => 'sent'),
      },
    });
    // A copy whose `cancelled` state invokes a child the model's machine does not have.
    const copy = setup({
      types: { events: {} as { type: 'CANCEL' } },
      actors: {
        send: fromPromise(async () => 'sent'),
        notify: fromPromise(async () => {
          notified++;
        }),
      },
    }).createMachine({
      id: 'mailer',
      initial: 'sending',
      states: {
        sending: {
          invoke: { id: 'send', src: 'send', onDone: 'sent' },
          on: { CANCEL: 'cancelled' },
        },
        sent: { type: 'final' },
        cancelled: { invoke: { id: 'notify', src: 'notify' } },
      },
    });
    const suite = generatePathTests(notifying, {
      events: [{ type: 'CANCEL' }],
      actors: { send: 'never' },
    });
    const error = await suite.paths[0]?.run({ machine: copy }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PathReplayError);
    expect((error as Error).message).toContain(
      [
        'CANCEL ⇒ cancelled: step 1 (CANCEL): the children waiting for an answer differ (a child the state invokes must be running, and no other)',
        '  expected: []',
        '  actual:   ["notify"]',
      ].join('\n'),
    );
    expect(notified).toBe(0);
  });
});

describe('3. delayed transitions fire in the order their timers end', () => {
  it('offers only the shorter of two delays set together', async () => {
    const race = createMachine({
      id: 'race',
      initial: 'waiting',
      states: {
        waiting: { after: { 1000: 'short', 5000: 'long' } },
        short: { type: 'final' },
        long: { type: 'final' },
      },
    });
    const suite = generatePathTests(race);
    expect(suite.paths.map((p) => p.name)).toEqual(['after:1000@waiting ⇒ short']);
    expect(suite.coverage.transitions.missing).toEqual([
      'waiting xstate.after.5000.race.waiting#0 → long',
    ]);
    await suite.paths[0]?.run();
  });

  it('keeps one edge per timer when two regions have the same delay, fired one at a time', async () => {
    const region = (name: string) => ({
      initial: `${name}1`,
      states: { [`${name}1`]: { after: { 1000: `${name}2` } }, [`${name}2`]: {} },
    });
    const twins = createMachine({
      id: 'twins',
      type: 'parallel',
      states: { a: region('a'), b: region('b') },
    });
    const suite = generatePathTests(twins);
    expect(suite.paths.map((p) => p.name)).toEqual([
      'after:1000@a.a1 → after:1000@b.b1 ⇒ a.a2, b.b2',
    ]);
    expect(suite.coverage.transitions.missing).toEqual([]);
    for (const path of suite.paths) await path.run();
  });

  it('compares timers by when they were set: a chain of delays against a long one', async () => {
    const relay = createMachine({
      id: 'relay',
      type: 'parallel',
      states: {
        slow: { initial: 'waiting', states: { waiting: { after: { 5000: 'done' } }, done: {} } },
        fast: {
          initial: 'one',
          states: { one: { after: { 4000: 'two' } }, two: { after: { 3000: 'three' } }, three: {} },
        },
      },
    });
    const suite = generatePathTests(relay);
    expect(suite.paths.map((p) => p.name)).toEqual([
      'after:4000@fast.one → after:5000@slow.waiting → after:3000@fast.two ⇒ slow.done, fast.three',
    ]);
    for (const path of suite.paths) await path.run();
  });

  it('after an event from outside, a timer set before it and one set after it may end in either order', async () => {
    const poll = setup({ types: { events: {} as { type: 'GO' } } }).createMachine({
      id: 'poll',
      type: 'parallel',
      states: {
        slow: { initial: 'waiting', states: { waiting: { after: { 5000: 'done' } }, done: {} } },
        user: {
          initial: 'idle',
          states: {
            idle: { on: { GO: 'busy' } },
            busy: { after: { 1000: 'finished' } },
            finished: {},
          },
        },
      },
    });
    const suite = generatePathTests(poll, { events: [{ type: 'GO' }] });
    expect(suite.paths.map((p) => p.name)).toEqual([
      'GO → after:1000@user.busy → after:5000@slow.waiting ⇒ slow.done, user.finished',
      'GO → after:5000@slow.waiting → after:1000@user.busy ⇒ slow.done, user.finished',
      'after:5000@slow.waiting → GO → after:1000@user.busy ⇒ slow.done, user.finished',
    ]);
    for (const path of suite.paths) await path.run();
  });
});

describe('4. a child that finished while its state stays active', () => {
  const worker = setup({
    types: { context: {} as { result?: string }, events: {} as { type: 'STOP' } },
    actors: { job: fromPromise<string>(async () => 'ok') },
  }).createMachine({
    id: 'worker',
    context: {},
    initial: 'working',
    states: {
      working: {
        invoke: {
          id: 'job',
          src: 'job',
          onDone: { actions: assign({ result: ({ event }) => event.output }) },
        },
        on: { STOP: 'stopped' },
      },
      stopped: { type: 'final' },
    },
  });

  it('is not offered to answer again, and the replay agrees nothing waits', async () => {
    const alone = generatePathTests(worker, { actors: { job: { outputs: ['ok'] } } });
    expect(alone.paths.map((p) => p.name)).toEqual(['job:done#0 ⇒ working']);
    const suite = generatePathTests(worker, {
      events: [{ type: 'STOP' }],
      actors: { job: { outputs: ['ok'] } },
    });
    expect(suite.paths.map((p) => p.name)).toEqual([
      'STOP ⇒ stopped',
      'job:done#0 → STOP ⇒ stopped',
    ]);
    for (const path of [...alone.paths, ...suite.paths]) await path.run();
  });
});

describe('5. the XState internals the helpers rely on', () => {
  it('are checked, and a missing one is named with the installed xstate version', async () => {
    const { checkXStateSupport } = await import('../../src/graph/xstate-internals.js');
    expect(() => checkXStateSupport()).not.toThrow();
    expect(() => checkXStateSupport(() => ['`_transitions` on @xstate.microstep events'])).toThrow(
      /^statecraft\/testing: the installed xstate 5\.\d+\.\d+ lacks what path tests rely on: `_transitions` on @xstate\.microstep events\./,
    );
  });
});

describe('6. canReach searches breadth first and stops at the first hit', () => {
  const count = 13;
  const toggles = createMachine({
    id: 'toggles',
    type: 'parallel',
    states: Object.fromEntries(
      Array.from({ length: count }, (_, i) => [
        `t${i}`,
        {
          initial: 'off',
          states: { off: { on: { [`T${i}`]: 'on' } }, on: { on: { [`T${i}`]: 'off' } } },
        },
      ]),
    ),
  });
  const events = Array.from({ length: count }, (_, i) => ({ type: `T${i}` }));

  it('answers yes for a target one event away, though the whole graph exceeds the limits', () => {
    const started = Date.now();
    const result = canReach(toggles, (s) => s.matches({ t12: 'on' }), { events });
    expect(Date.now() - started).toBeLessThan(2_000);
    if (!result.reachable) throw new Error('t12.on should be reachable');
    expect(result.path.events).toEqual([{ type: 'T12' }]);
    expect(result.explored).toBeLessThanOrEqual(count + 1);
  });

  it('assertCanReach tells the user what to check when the answer is no', () => {
    expect(() => assertCanReach(orderMachine, 'cancelled', ORDER_OPTIONS)).toThrow(
      "assertCanReach: 'cancelled' is not reachable: explored 11 snapshots, all that the offered events, child outcomes and delays reach. If it should be, check what is offered: `events` (the events from outside, per snapshot), `actors` (each invoke's outputs and errors) and `delays`.",
    );
  });
});

describe('7. history states', () => {
  it('are not state nodes to cover', () => {
    const player = createMachine({
      id: 'player',
      initial: 'on',
      states: {
        on: {
          initial: 'playing',
          states: {
            playing: { on: { PAUSE: 'paused' } },
            paused: { on: { PLAY: 'playing' } },
            hist: { type: 'history' },
          },
          on: { OFF: 'off' },
        },
        off: { on: { ON: 'on.hist' } },
      },
    });
    expect(stateNodePaths(player)).toEqual(['on', 'on.playing', 'on.paused', 'off']);
    const suite = generatePathTests(player, {
      events: [{ type: 'PAUSE' }, { type: 'PLAY' }, { type: 'OFF' }, { type: 'ON' }],
    });
    expect(suite.coverage.states).toEqual({ covered: 4, total: 4, missing: [] });
  });
});

describe('8. an endless `always` loop', () => {
  it('is an error naming the state, not a hang', () => {
    const spinner = setup({ types: { events: {} as { type: 'GO' } } }).createMachine({
      id: 'spinner',
      initial: 'idle',
      states: { idle: { on: { GO: 'ping' } }, ping: { always: 'pong' }, pong: { always: 'ping' } },
    });
    const walk = () => generatePathTests(spinner, { events: [{ type: 'GO' }] });
    expect(walk).toThrow(TraversalLimitError);
    expect(walk).toThrow(
      /^generatePathTests: limits\.maxMicrosteps \(1000\) exceeded: GO in idle does not come to rest: after 1000 microsteps it is in (ping|pong)\./,
    );
    const spinning = createMachine({
      id: 'spinning',
      initial: 'ping',
      states: { idle: {}, ping: { always: 'pong' }, pong: { always: 'ping' } },
    });
    expect(() => canReach(spinning, 'idle')).toThrow(
      /^canReach: limits\.maxMicrosteps \(1000\) exceeded: the start does not come to rest/,
    );
  });
});

describe('9. coverage of generated paths', () => {
  it('is what the recomputed steps take, not the graph edges a coarse serializeState merged', async () => {
    const router = setup({
      types: {
        context: {} as { x: number },
        events: {} as { type: 'ONE' } | { type: 'TWO' } | { type: 'GO' },
      },
      guards: { isOne: ({ context }) => context.x === 1 },
    }).createMachine({
      id: 'router',
      context: { x: 0 },
      initial: 'idle',
      states: {
        idle: {
          on: {
            ONE: { target: 'ready', actions: assign({ x: 1 }) },
            TWO: { target: 'ready', actions: assign({ x: 2 }) },
          },
        },
        ready: { on: { GO: [{ guard: 'isOne', target: 'one' }, { target: 'two' }] } },
        one: { type: 'final' },
        two: { type: 'final' },
      },
    });
    const suite = generatePathTests(router, {
      events: [{ type: 'ONE' }, { type: 'TWO' }, { type: 'GO' }],
      serializeState: (s) => JSON.stringify(s.value),
    });
    expect(suite.paths.map((p) => p.name)).toEqual(['ONE → GO ⇒ one', 'TWO → GO ⇒ two']);
    const replays = await Promise.all(suite.paths.map((p) => p.run()));
    expect(suite.coverage).toEqual(suite.replayCoverage(replays));
    expect(suite.coverage.transitions.missing).toEqual([]);
    expect(suite.coverage.states.missing).toEqual([]);
  });
});

describe('10. replays are typed by the machine', () => {
  it('gives the replay snapshot the machine snapshot type', async () => {
    const suite = generatePathTests(orderMachine, ORDER_OPTIONS);
    const replay = await suite.paths[0]?.run();
    if (!replay) throw new Error('no path');
    // A type-level check (tsc): no cast needed to read the app's context.
    expectTypeOf(replay.snapshot).toEqualTypeOf<SnapshotFrom<typeof orderMachine>>();
    expect(replay.snapshot.context.orderId).toBe(ORDER_INPUT.orderId);
  });
});

describe('11. a timer that fires without a transition', () => {
  // XState returns the same snapshot object when only the runtime changes (the timer is gone),
  // so that object is two vertices; shortest paths rebuilt by snapshot looped forever.
  const machine = createMachine({
    initial: 'waiting',
    states: {
      waiting: {
        after: { 1000: { guard: () => false, target: 'done' } },
        on: { GO: 'done' },
      },
      done: { type: 'final' },
    },
  });

  it('gives shortest paths that end, one per vertex, and they replay', async () => {
    const suite = generatePathTests(machine, { events: [{ type: 'GO' }], paths: 'shortest' });
    expect(suite.paths.map((path) => path.name).sort()).toEqual([
      'GO ⇒ done',
      'after:1000@waiting ⇒ waiting',
    ]);
    for (const path of suite.paths) await path.run();
  });
});
