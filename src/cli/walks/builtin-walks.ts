import type { AnyStateMachine } from 'xstate';
import { chainMachine } from '../../../machines/chain.js';
import { toolLoopMachine } from '../../../machines/tool-loop.js';
import type { PathsSpec } from '../machine-of.js';
import { chainWalks } from './chain-walk.js';
import { toolLoopWalks } from './tool-loop-walk.js';

// The walks `statecraft paths` knows for the project's own machines, found by the machine's
// config: a Chain's or ToolLoop's `.machine` is a `provide()` copy, with the same config.

export function builtinWalks(machine: AnyStateMachine): readonly PathsSpec[] | undefined {
  if (machine.config === chainMachine.config) {
    return chainWalks(machine as typeof chainMachine);
  }
  if (machine.config === toolLoopMachine.config) {
    return toolLoopWalks(machine as typeof toolLoopMachine);
  }
  return undefined;
}
