// SPEC D1: toJSON gives a machine's config as plain JSON, the shape createMachine() (and so
// Stately Studio's "Import from code") takes. The proof it loses nothing a diagram shows: a
// machine built back from the JSON has the same states and transitions, guards included, and
// draws the same Mermaid diagram.

import { allTransitionNames, stateNodePaths } from 'statecraft/testing';
import { toJSON, toMermaid } from 'statecraft/viz';
import { describe, expect, it } from 'vitest';
import { type AnyStateMachine, createActor, createMachine } from 'xstate';
import { chainMachine } from '../../machines/chain.js';
import { toolLoopMachine } from '../../machines/tool-loop.js';
import { machines, playerMachine, triageMachine } from './fixtures.js';

const rebuilt = (machine: AnyStateMachine) =>
  createMachine(toJSON(machine) as Parameters<typeof createMachine>[0]);

describe('toJSON', () => {
  for (const [name, machine] of Object.entries(machines)) {
    it(`${name}: is plain JSON that createMachine rebuilds into the same diagram`, () => {
      const json = toJSON(machine);
      expect(JSON.parse(JSON.stringify(json))).toEqual(json);
      const copy = rebuilt(machine);
      expect(stateNodePaths(copy)).toEqual(stateNodePaths(machine));
      expect(toMermaid(copy)).toBe(toMermaid(machine));
    });
  }

  for (const [name, machine] of Object.entries({
    chain: chainMachine,
    toolLoop: toolLoopMachine,
    supportTriage: triageMachine,
  })) {
    it(`${name}: keeps every transition, by source, trigger, guard and target`, () => {
      expect(allTransitionNames(rebuilt(machine), 'path')).toEqual(
        allTransitionNames(machine, 'path'),
      );
    });
  }

  it("has what machine.toJSON() lacks: always, invokes' onDone/onError, plain entry actions", () => {
    const idle = toJSON(chainMachine).states?.idle;
    expect(idle?.always).toEqual([
      // maxExecutionTime 0: no time to start.
      {
        target: ['#chain.stopping'],
        guard: 'shouldForceStopOutOfTime',
        actions: [{ type: 'reachLimit', params: { limit: 'maxExecutionTime' } }],
      },
      { target: ['#chain.failed'], guard: 'hasNoTimeToStart', actions: ['failOnTimeLimit'] },
      { target: ['#chain.preparing'], guard: 'canThink' },
      {
        target: ['#chain.stopping'],
        guard: 'shouldForceStopAtStart',
        actions: [{ type: 'reachLimit', params: { limit: 'maxIterations' } }],
      },
      { target: ['#chain.failed'], actions: ['failOnLimits'] },
    ]);
    const classifying = toJSON(triageMachine).states?.classifying;
    expect(classifying?.invoke?.[0]).toMatchObject({
      id: 'classify',
      src: 'classifyTicket',
      onError: [{ target: ['#supportTriage.escalated'], actions: [{ type: 'escalate' }] }],
    });
    expect(classifying?.invoke?.[0]?.onDone?.map((t) => t.guard)).toEqual([
      { type: 'classificationFailed' },
      { type: 'isHowTo' },
      undefined,
    ]);
    // `after` by delay name; no xstate.raise timers among the entry actions.
    expect(Object.keys(classifying?.after ?? {})).toEqual(['agentTimeout']);
    expect(classifying?.entry).toBeUndefined();
    // XState's own definition has neither the always transitions nor the onDone handlers.
    const definition = JSON.parse(JSON.stringify(chainMachine.toJSON()));
    expect(definition.states.idle.always).toBeUndefined();
  });

  it('keeps fixed params, drops computed ones, writes combined guards and built-ins by kind', () => {
    const json = toJSON(playerMachine);
    const paused = json.states?.on?.states?.playback?.states?.paused;
    expect(paused?.on?.PLAY?.[0]?.guard).toEqual({
      type: 'xstate.and',
      guards: ['isReady', { type: 'xstate.not', guards: ['hasTrack'] }],
    });
    expect(json.states?.on?.on?.RESET?.[0]?.actions).toEqual([
      'resetVolume',
      { type: 'xstate.assign' },
    ]);
    expect(json.states?.on?.states?.playback?.states?.resume).toEqual({
      id: 'player.on.playback.resume',
      type: 'history',
      history: 'deep',
      target: 'playing',
    });
    expect(Object.keys(json.states?.on?.states?.playback?.states?.playing?.after ?? {})).toEqual([
      '1500',
    ]);
    const nextRound = toJSON(toolLoopMachine).states?.running?.states?.nextRound;
    expect(nextRound?.always?.[0]?.actions).toEqual([
      { type: 'stopWith', params: { reason: 'tools-off' } },
    ]);
    const doing = toJSON(chainMachine).states?.doing;
    expect(doing?.on?.['executeTools.done']?.[0]?.guard).toEqual({ type: 'isDirectReturn' });
  });

  it('escapes dots and backslashes in `#id` targets, so ids with dots round-trip', () => {
    // XState reads `.` in a target as a path separator and `\\` as an escape: the machine
    // escapes them in its own targets, as toJSON must in the ids it writes.
    const machine = createMachine({
      id: 'acme.agent',
      initial: 'v1.2',
      states: {
        'v1.2': { on: { NEXT: 'back\\\\slash', DEEP: 'nested\\.in.side' } },
        'back\\slash': { on: { BACK: 'v1\\.2' } },
        'nested.in': {
          initial: 'side',
          states: { side: { on: { UP: '#acme\\.agent' } } },
        },
      },
    });
    const json = toJSON(machine);
    expect(json.states?.['v1.2']?.on?.NEXT).toEqual([{ target: ['#acme\\.agent.back\\\\slash'] }]);
    expect(json.states?.['back\\slash']?.on?.BACK).toEqual([{ target: ['#acme\\.agent.v1\\.2'] }]);
    const copy = rebuilt(machine);
    expect(allTransitionNames(copy, 'path')).toEqual(allTransitionNames(machine, 'path'));
    expect(toMermaid(copy)).toBe(toMermaid(machine));
    // And it runs: the rebuilt machine goes where the original goes.
    const actor = createActor(copy).start();
    actor.send({ type: 'NEXT' });
    expect(actor.getSnapshot().value).toBe('back\\slash');
    actor.send({ type: 'BACK' });
    expect(actor.getSnapshot().value).toBe('v1.2');
    actor.stop();
  });

  it('keeps fixed `output` values of final states and of the machine, not computed ones', () => {
    const machine = createMachine({
      id: 'answer',
      initial: 'working',
      output: { done: true },
      states: {
        working: {
          initial: 'step',
          states: { step: { on: { FINISH: 'finished' } }, finished: { type: 'final', output: 7 } },
          onDone: 'answered',
        },
        answered: { type: 'final', output: { answer: 42 } },
      },
    });
    const json = toJSON(machine);
    expect(json.output).toEqual({ done: true });
    expect(json.states?.answered?.output).toEqual({ answer: 42 });
    expect(json.states?.working?.states?.finished?.output).toBe(7);
    const actor = createActor(rebuilt(machine)).start();
    actor.send({ type: 'FINISH' });
    expect(actor.getSnapshot().output).toEqual({ done: true });
    actor.stop();
    const computed = createMachine({
      id: 'computed',
      initial: 'a',
      states: { a: { type: 'final', output: ({ context }) => context } },
      output: ({ event }) => event,
    });
    expect(toJSON(computed).output).toBeUndefined();
    expect(toJSON(computed).states?.a).toEqual({ id: 'computed.a', type: 'final' });
  });

  it('says what it got instead of a machine', () => {
    expect(() => toJSON(null as never)).toThrow(
      /toJSON: `machine` must be an XState v5 state machine .*got null/,
    );
  });
});
