// SPEC D1: toMermaid draws any XState v5 machine from its definition. Expectations are
// derived from the machines' state nodes and transitions wherever possible, so a state, a
// guard or an action the export forgot fails here whatever the machine looks like.
import { stateIdOf, stateIdsOf, toMermaid } from 'statecraft/viz';
import { describe, expect, it } from 'vitest';
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { chainMachine } from '../../machines/chain.js';
import { toolLoopMachine } from '../../machines/tool-loop.js';
import { awkwardMachine, machines, nodesOf, playerMachine, triageMachine } from './fixtures.js';

const transitionsOf = (node: AnyStateNode): AnyTransitionDefinition[] => [
  ...[...node.transitions.values()].flat(),
  ...(node.always ?? []),
];
const allTransitions = (machine: AnyStateMachine) =>
  [machine.root, ...nodesOf(machine)].flatMap(transitionsOf);

/** A guard's or action's name as the machine's definition holds it. */
function nameOf(ref: unknown): string | undefined {
  if (typeof ref === 'string') return ref;
  if (ref && typeof ref === 'object' && 'type' in ref) return String(ref.type);
  return undefined;
}

const lines = (text: string) => text.split('\n').map((line) => line.trim());
const arrows = (text: string) =>
  lines(text).filter((line) => line.includes(' --> ') && !line.includes('[*]'));

describe('toMermaid on the project machines', () => {
  for (const [name, machine] of Object.entries({
    chain: chainMachine,
    toolLoop: toolLoopMachine,
    supportTriage: triageMachine,
  })) {
    describe(name, () => {
      const text = toMermaid(machine);

      it('is a stateDiagram-v2 titled with the machine id', () => {
        expect(text.startsWith(`---\ntitle: "${machine.id}"\n---\nstateDiagram-v2\n`)).toBe(true);
      });

      it('declares every state node under its stateIdOf id', () => {
        for (const node of nodesOf(machine)) {
          expect(text).toContain(`state "${node.key}" as ${stateIdOf(node.path)}`);
        }
      });

      it('draws one arrow per transition target, to that target', () => {
        const targeted = allTransitions(machine).flatMap((t) => t.target ?? []);
        expect(arrows(text)).toHaveLength(targeted.length);
        const targets = arrows(text).map((line) => line.split(' --> ')[1]?.split(' : ')[0]);
        expect(targets.sort()).toEqual(targeted.map((node) => stateIdOf(node.path)).sort());
      });

      it("labels every transition with its event, guard and actions by the definition's names", () => {
        for (const t of allTransitions(machine)) {
          const guard = nameOf(t.guard);
          const actions = t.actions.map(nameOf).filter((a): a is string => a !== undefined);
          const candidates = (t.target ?? [undefined]).map((target) =>
            lines(text).filter(
              (line) =>
                (target
                  ? line.includes(` --> ${stateIdOf(target.path)} : `)
                  : !line.includes('-->')) &&
                (!guard || line.includes(`[${guard}`)) &&
                actions.every((action) => line.includes(action)),
            ),
          );
          for (const found of candidates)
            expect(found.length, `${t.source.id} ${t.eventType}`).toBeGreaterThan(0);
        }
      });

      it('names every guard and action the machine implements', () => {
        for (const guard of Object.keys(machine.implementations.guards)) {
          // A guard used only inside another one (canDo = and(hasToolCalls, …)) is not drawn.
          const used = allTransitions(machine).some((t) => nameOf(t.guard) === guard);
          if (used) expect(text).toContain(`[${guard}`);
        }
        for (const action of Object.keys(machine.implementations.actions)) {
          expect(text, action).toMatch(new RegExp(`[ /,(]${action}\\b`));
        }
      });

      it('marks the initial state and every final state', () => {
        const initial = machine.root.initial.target[0] as AnyStateNode;
        expect(lines(text)).toContain(`[*] --> ${stateIdOf(initial.path)}`);
        for (const node of nodesOf(machine).filter((n) => n.type === 'final')) {
          expect(lines(text)).toContain(`${stateIdOf(node.path)} --> [*]`);
        }
      });

      it('is deterministic', () => {
        expect(toMermaid(machine)).toBe(text);
      });
    });
  }

  it("draws the chain's machine-wide transitions from an 'any state' node that invokes effects", () => {
    const text = toMermaid(chainMachine);
    expect(lines(text)).toContain('state "any state" as any');
    expect(lines(text)).toContain('any : invoke effects');
    expect(lines(text)).toContain('any --> s_failed : ABORT / failOnAbort');
    expect(text).toMatch(/any --> s_stopping : after maxExecutionTime \[isCutShortInDoing\]/);
    // Targetless transitions are written inside their state, entry actions too.
    expect(lines(text)).toContain(
      's_preparing : always [shouldWarnIterations] / insertIterationWarning',
    );
    expect(lines(text)).toContain('s_thinking : entry / onEnterThinking, requestModelCall');
  });

  it("labels the support-triage machine's invokes done/error by src and its timeouts by delay", () => {
    const text = toMermaid(triageMachine);
    expect(lines(text)).toContain('s_classifying : invoke classifyTicket');
    expect(lines(text)).toContain(
      's_classifying --> s_escalated : done#58; classifyTicket [classificationFailed] / escalate',
    );
    expect(lines(text)).toContain(
      's_researching --> s_escalated : error#58; researchTicket / escalate',
    );
    expect(lines(text)).toContain('s_drafting --> s_escalated : after agentTimeout / escalate');
    expect(lines(text)).toContain(
      's_awaitingReview --> s_drafting : REVISE [canRevise] / recordRevisionNotes',
    );
  });

  it("puts the tool loop's nested states in a composite box and writes fixed params", () => {
    const text = toMermaid(toolLoopMachine);
    expect(lines(text)).toContain('state "running" as s_running {');
    expect(lines(text)).toContain('[*] --> s_running__nextRound');
    expect(lines(text)).toContain(
      's_running__nextRound --> s_running__converging : always [isOverRoundLimit] / stopWith(max-rounds)',
    );
    // A transition out of the box is drawn from the box; a re-entry as a loop.
    expect(lines(text)).toContain(
      's_running --> s_failed : after loopTimeout [hasTimeout] / failOnTimeout, cancelEffects(timeout)',
    );
    expect(lines(text)).toContain(
      's_running__planning --> s_running__planning : plan.done [canRetryPlan] / recordPlanError',
    );
  });
});

describe('toMermaid on parallel and history states', () => {
  const text = toMermaid(playerMachine);
  const block = (id: string) => {
    const all = lines(text);
    const start = all.findIndex((line) => line.endsWith(`as ${id} {`));
    let depth = 0;
    for (let i = start; i < all.length; i++) {
      depth += (all[i]?.endsWith('{') ? 1 : 0) - (all[i] === '}' ? 1 : 0);
      if (depth === 0) return all.slice(start, i + 1);
    }
    throw new Error(`no block ${id}`);
  };

  it('separates the regions of a parallel state with --, each a box of its own', () => {
    const on = block('s_on');
    const playback = on.indexOf('state "playback" as s_on__playback {');
    const divider = on.indexOf('--');
    const volume = on.indexOf('state "volume" as s_on__volume {');
    expect([playback, divider, volume].every((i) => i > 0)).toBe(true);
    expect(playback).toBeLessThan(divider);
    expect(divider).toBeLessThan(volume);
    // Each region has its own initial and final markers.
    expect(block('s_on__playback')).toContain('[*] --> s_on__playback__paused');
    expect(block('s_on__volume')).toContain('s_on__volume__gone --> [*]');
  });

  it('draws a history state as H* with its default target, and transitions into it', () => {
    expect(lines(text)).toContain('state "H*" as s_on__playback__resume');
    expect(lines(text)).toContain('s_on__playback__resume --> s_on__playback__playing');
    expect(lines(text)).toContain('s_on__volume__muted --> s_on__playback__resume : BACK');
  });

  it('writes combined guards, numeric delays, onDone and built-in actions readably', () => {
    expect(lines(text)).toContain(
      's_on__playback__paused --> s_on__playback__playing : PLAY [isReady #38;#38; !hasTrack]',
    );
    expect(text).toContain('[in(#35;player.on.volume.loud) #124;#124; isReady]');
    expect(lines(text)).toContain(
      's_on__playback__playing --> s_on__playback__paused : after 1500ms',
    );
    expect(lines(text)).toContain('s_on__volume --> s_off : done');
    expect(lines(text)).toContain('s_on --> s_off : POWER');
    // Into its own region: from the parallel state's "any state" node, which sits beside it.
    expect(lines(text)).toContain(
      'any_on --> s_on__playback__paused : RESET / resetVolume, assign',
    );
    expect(lines(text)).toContain('any_on : PING / resetVolume');
    expect(block('s_on')).not.toContain('state "any state of on" as any_on');
  });
});

describe('toMermaid escaping', () => {
  const text = toMermaid(awkwardMachine);
  const LABEL = /^[A-Za-z0-9 _.,/()[\]+*=!?@$~^'#;-]*$/;
  const ID = /^(s_[A-Za-z0-9_]*|any(_[A-Za-z0-9_]+)?|\[\*\])$/;

  it('writes only lines the stateDiagram grammar reads one way', () => {
    const body = lines(text).slice(4).filter(Boolean);
    for (const line of body) {
      const declared = /^state "([^"]*)" as (\S+)( \{)?$/.exec(line);
      const arrow = /^(\S+) --> (\S+)(?: : (.*))?$/.exec(line);
      const description = /^(\S+) : (.*)$/.exec(line);
      if (declared) {
        expect(declared[1], line).toMatch(LABEL);
        expect(declared[2], line).toMatch(ID);
      } else if (arrow) {
        expect(arrow[1], line).toMatch(ID);
        expect(arrow[2], line).toMatch(ID);
        expect(arrow[3] ?? '', line).toMatch(LABEL);
      } else if (description) {
        expect(description[1], line).toMatch(ID);
        expect(description[2], line).toMatch(LABEL);
      } else {
        expect(['}', '--'], line).toContain(line);
      }
    }
  });

  it('breaks the keywords Mermaid finds anywhere on a line, in labels and state names', () => {
    // The line a `direction` option writes is the only direction statement.
    expect(text).not.toMatch(/direction\s+(TB|BT|LR|RL)/i);
    expect(text).not.toMatch(/\[\[(fork|join|choice)\]\]/i);
    expect(lines(text)).toContain('state "turn #100;irection TB" as s_turn_20xdirection_20xTB');
    expect(lines(text)).toContain('s_turn_20xdirection_20xTB : entry / set #100;irection BT');
    expect(lines(text)).toContain('s_note --> s_turn_20xdirection_20xTB : #100;irection LR');
    expect(lines(text)).toContain('state "#91;[fork]]" as s__5bx_5bxfork_5dx_5dx');
  });

  it('keeps Mermaid keywords used as state keys out of the ids', () => {
    expect(lines(text)).toContain('state "state" as s_state');
    expect(lines(text)).toContain('state "needs-review" as s_needs_2dxreview {');
    expect(lines(text)).toContain('s_state --> s_note : a#58;b');
  });
});

describe('stateIdOf / stateIdsOf', () => {
  it('gives every path its own Mermaid-safe id', () => {
    const paths = [
      ['a_b'],
      ['a', 'b'],
      ['a__b'],
      ['a', '_b'],
      ['a_', 'b'],
      ['a-b'],
      ['a', '-b'],
      ['café'],
      ['caf', 'é'],
      ['a_2dxb'],
      ['state'],
      [],
    ];
    const ids = paths.map(stateIdOf);
    expect(new Set(ids).size).toBe(paths.length);
    for (const id of ids) expect(id).toMatch(/^s_[A-Za-z0-9_]*$/);
    expect(stateIdOf(['running', 'planning'])).toBe('s_running__planning');
  });

  it("names the states of a snapshot's value, ancestors first", () => {
    expect(stateIdsOf('thinking')).toEqual(['s_thinking']);
    expect(stateIdsOf({ running: 'planning' })).toEqual(['s_running', 's_running__planning']);
    expect(stateIdsOf({ on: { playback: 'paused', volume: 'loud' } })).toEqual([
      's_on',
      's_on__playback',
      's_on__playback__paused',
      's_on__volume',
      's_on__volume__loud',
    ]);
  });

  it('finds every state of a real snapshot among the diagram ids', async () => {
    const { createActor } = await import('xstate');
    const actor = createActor(playerMachine).start();
    actor.send({ type: 'POWER' });
    const text = toMermaid(playerMachine);
    for (const id of stateIdsOf(actor.getSnapshot().value)) expect(text).toContain(`as ${id}`);
    actor.stop();
  });
});

describe('toMermaid options and bad input', () => {
  it('sets the direction, drops the title, hides details on request', () => {
    const text = toMermaid(chainMachine, { direction: 'LR', title: false, details: false });
    expect(text.startsWith('stateDiagram-v2\n  direction LR\n')).toBe(true);
    expect(text).not.toContain('entry /');
    expect(text).not.toContain('invoke effects');
    // Transitions without a target are policy, not detail: they stay.
    expect(text).toContain('s_preparing : always [shouldWarnIterations]');
  });

  it('names the bad option and what it got', () => {
    expect(() => toMermaid(chainMachine, { direction: 'XY' as never })).toThrow(
      /`direction` must be one of TB, BT, LR, RL, got string "XY"/,
    );
    expect(() => toMermaid(chainMachine, { title: 3 as never })).toThrow(
      /`title` must be a string or false/,
    );
    expect(() => toMermaid(chainMachine, { details: 'yes' as never })).toThrow(
      /`details` must be a boolean/,
    );
  });

  it('says what it got instead of a machine', () => {
    expect(() => toMermaid({} as never)).toThrow(
      /toMermaid: `machine` must be an XState v5 state machine .*got a plain object/,
    );
    expect(() => toMermaid(undefined as never)).toThrow(/got undefined/);
  });

  it('renders every fixture without throwing', () => {
    for (const machine of Object.values(machines))
      expect(toMermaid(machine)).toContain('stateDiagram-v2');
  });
});
