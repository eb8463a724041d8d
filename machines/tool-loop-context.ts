import { ZERO_USAGE } from '../src/usage.js';
import { NO_APPROVALS } from './approvals.js';
import type { ToolLoopContext, ToolLoopInput } from './tool-loop-types.js';

// The context a tool loop run starts with, from its input. Pure.

/** The machine's initial context. */
export function initialContext({ input }: { input: ToolLoopInput }): ToolLoopContext {
  return {
    config: input.config,
    userInput: input.userInput,
    extraRequirement: input.extraRequirement ?? '',
    availableTools: input.availableTools,
    donePlans: [],
    lastRoundRecords: [],
    roundIndex: 0,
    roundRecords: [],
    plan: undefined,
    plans: [],
    planAttempts: 0,
    planError: undefined,
    usage: ZERO_USAGE,
    stopReason: undefined,
    convergence: undefined,
    response: undefined,
    failure: undefined,
    approvals: NO_APPROVALS,
  };
}
