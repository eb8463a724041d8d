import type { ToolLoopResult, ToolLoopRunInput } from '../tool-loop/run-types.js';
import type { ToolLoop } from '../tool-loop/tool-loop.js';
import { createRunnable } from './create-runnable.js';
import { toolLoopRun } from './tool-loop-run.js';
import type { Runnable } from './types.js';

/**
 * A tool loop as a Runnable (SPEC R1). Its planned commands stream as tool calls and its
 * execution records as their results, with ids made of the round and the command's place.
 */
export function fromToolLoop(
  loop: ToolLoop,
  name?: string,
): Runnable<string | ToolLoopRunInput, ToolLoopResult> {
  return createRunnable(toolLoopRun(loop, name));
}
