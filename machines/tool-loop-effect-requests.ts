import type { PlannerContext } from '../src/plan/planner-context.js';
import type {
  ExecuteInput,
  RespondInput,
  ToolLoopArgs,
  ToolLoopEffectRequest,
} from './tool-loop-types.js';

// What the tool loop asks of its `effects` actor: each function is the request an action
// sends (`sendTo('effects', …)`), named in its comment. The host performs it and answers with
// an event; the machine never waits on anything else. Pure.

type ContextArgs = Pick<ToolLoopArgs, 'context'>;

/** Action `requestPlan`: what the planner reads for this round. */
export function planRequest({ context }: ContextArgs): ToolLoopEffectRequest {
  return {
    type: 'plan',
    input: {
      userInput: context.userInput,
      extraRequirement: context.extraRequirement,
      availableTools: context.availableTools,
      donePlans: context.donePlans,
      lastRoundResult: context.lastRoundRecords,
      roundIndex: context.roundIndex,
      maxRounds: context.config.maxRounds,
      ...(context.planError !== undefined && { planError: context.planError }),
    } satisfies PlannerContext,
  };
}

/**
 * Action `requestExecution`: the round's commands. Sent on the way into `executing` only: a
 * return from `awaitingApproval` is the same round.
 */
export function executionRequest({ context }: ContextArgs): ToolLoopEffectRequest {
  return {
    type: 'execute',
    input: {
      roundIndex: context.roundIndex,
      commands: context.plan?.executionCommands ?? [],
    } satisfies ExecuteInput,
  };
}

/** Action `requestResponse`: the final response, with the records' convergence (SPEC T8). */
export function responseRequest({ context }: ContextArgs): ToolLoopEffectRequest {
  return {
    type: 'respond',
    input: {
      userInput: context.userInput,
      extraRequirement: context.extraRequirement,
      convergence: context.convergence,
    } satisfies RespondInput,
  };
}

/**
 * Action `cancelEffects`: the host aborts what is in flight and drops its answer: the loop has
 * stopped.
 */
export function cancelRequest(
  _: unknown,
  params: { reason: 'timeout' | 'abort' },
): ToolLoopEffectRequest {
  return { type: 'cancel', reason: params.reason };
}
