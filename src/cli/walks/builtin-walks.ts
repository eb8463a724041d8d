import type { AnyStateMachine } from 'xstate';
import { chainMachine } from '../../../machines/chain.js';
import { toolLoopMachine } from '../../../machines/tool-loop.js';
import { toMermaid } from '../../viz/to-mermaid.js';
import type { PathsSpec } from '../machine-of.js';
import { chainWalks } from './chain-walk.js';
import { toolLoopWalks } from './tool-loop-walk.js';

// The walks `statecraft paths` knows for the project's own machines, found by the machine's
// config: a Chain's or ToolLoop's `.machine` is a `provide()` copy, with the same config. A
// machine from another copy of the module (the built CLI given machines/chain.ts from source)
// has a config of its own: the same statechart is then recognised by its identical diagram.

function sameChart(machine: AnyStateMachine, ours: AnyStateMachine): boolean {
  return machine.config === ours.config || toMermaid(machine) === toMermaid(ours);
}

export function builtinWalks(machine: AnyStateMachine): readonly PathsSpec[] | undefined {
  if (sameChart(machine, chainMachine)) {
    return chainWalks(machine as typeof chainMachine);
  }
  if (sameChart(machine, toolLoopMachine)) {
    return toolLoopWalks(machine as typeof toolLoopMachine);
  }
  return undefined;
}
