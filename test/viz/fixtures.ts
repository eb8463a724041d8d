import {
  type AnyStateMachine,
  type AnyStateNode,
  and,
  assign,
  fromCallback,
  not,
  or,
  setup,
  stateIn,
} from 'xstate';
import { createTriageAgents } from '../../examples/support-triage/agents.js';
import { createTriageMachine } from '../../examples/support-triage/machine.js';
import { createScriptedModels } from '../../examples/support-triage/models.js';
import { chainMachine } from '../../machines/chain.js';
import { toolLoopMachine } from '../../machines/tool-loop.js';

// The machines the export is checked on: the project's two, the support-triage example's
// (invokes and `after`), and three written for the export: a parallel media player with a
// history state and combined guards, a machine that is itself parallel and acts in whichever
// state it is, and one whose names Mermaid's grammar would misread.

export const triageMachine = createTriageMachine(createTriageAgents(createScriptedModels()));

export const playerMachine = setup({
  guards: { isReady: () => true, hasTrack: () => true },
  actions: { resetVolume: () => {} },
}).createMachine({
  id: 'player',
  initial: 'off',
  states: {
    off: { on: { POWER: 'on' } },
    on: {
      type: 'parallel',
      on: {
        POWER: 'off',
        RESET: { target: '.playback.paused', actions: ['resetVolume', assign({})] },
        PING: { actions: 'resetVolume' },
      },
      states: {
        playback: {
          initial: 'paused',
          states: {
            paused: {
              on: { PLAY: { target: 'playing', guard: and(['isReady', not('hasTrack')]) } },
            },
            playing: {
              on: {
                PAUSE: 'paused',
                DUCK: {
                  target: '#player.on.volume.muted',
                  guard: or([stateIn('#player.on.volume.loud'), 'isReady']),
                },
              },
              after: { 1500: 'paused' },
            },
            resume: { type: 'history', history: 'deep', target: 'playing' },
          },
        },
        volume: {
          initial: 'loud',
          states: {
            loud: { on: { MUTE: 'muted', DONE: 'gone' } },
            muted: { on: { UNMUTE: 'loud', BACK: '#player.on.playback.resume' } },
            gone: { type: 'final' },
          },
          onDone: { target: '#player.off' },
        },
      },
    },
  },
});

/**
 * A parallel machine: the machine's own entry, exit, invoke, targetless transition and
 * transition into a region have no composite box of its own to go on (Mermaid allows no `--`
 * at the top level).
 */
export const parallelRootMachine = setup({
  actions: { boot: () => {}, shutdown: () => {}, log: () => {} },
  actors: { heartbeat: fromCallback(() => () => {}) },
}).createMachine({
  id: 'editor',
  type: 'parallel',
  entry: 'boot',
  exit: 'shutdown',
  invoke: { id: 'heartbeat', src: 'heartbeat' },
  on: { PING: { actions: 'log' }, RESET: '.text.clean' },
  states: {
    text: {
      initial: 'clean',
      states: { clean: { on: { TYPE: 'dirty' } }, dirty: { on: { SAVE: 'clean' } } },
    },
    connection: {
      initial: 'online',
      states: { online: { on: { DROP: 'offline' } }, offline: { on: { RETRY: 'online' } } },
    },
  },
});

/** Keys, events, guards and actions with the characters Mermaid's grammar would misread. */
export const awkwardMachine = setup({
  guards: { 'is:ready "now"': () => true },
  actions: { 'log #1; 50%': () => {}, 'set direction BT': () => {} },
}).createMachine({
  id: 'awkward',
  initial: 'state',
  states: {
    // Mermaid keywords as keys: they must not be read as statements.
    state: {
      on: {
        'a:b': 'note',
        'say "hi" {x} <b> a|b': { target: 'default', guard: 'is:ready "now"' },
      },
    },
    note: {
      on: {
        'x --> y; z': { target: 'needs-review', actions: 'log #1; 50%' },
        // `direction LR` anywhere on a line is Mermaid's direction statement; `[[fork]]` in a
        // state's name, a fork pseudo-state.
        'direction LR': 'turn direction TB',
      },
    },
    'turn direction TB': { entry: 'set direction BT', on: { 'then Direction rl': '[[fork]]' } },
    '[[fork]]': {},
    default: { entry: 'log #1; 50%', on: { 'café 🚀': 'needs-review' } },
    'needs-review': {
      initial: 'class',
      states: { class: { on: { '%% not a comment': '#awkward.done' } } },
    },
    done: { type: 'final' },
  },
});

export const machines: Record<string, AnyStateMachine> = {
  chain: chainMachine,
  toolLoop: toolLoopMachine,
  supportTriage: triageMachine,
  player: playerMachine,
  parallelRoot: parallelRootMachine,
  awkward: awkwardMachine,
};

/** Every state node below the root, depth first, in document order. */
export function nodesOf(machine: AnyStateMachine): AnyStateNode[] {
  const below = (node: AnyStateNode): AnyStateNode[] =>
    Object.values(node.states).flatMap((child) => [child, ...below(child)]);
  return below(machine.root);
}
