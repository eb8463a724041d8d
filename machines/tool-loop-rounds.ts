import { isRecord } from '../src/is-record.js';
import { normalizePlan } from '../src/plan/plan.js';
import type { ToolExecutionRecord } from '../src/plan/records.js';
import { addUsage } from '../src/usage.js';
import type { PlanOutcome, ToolLoopArgs, ToolLoopContext } from './tool-loop-types.js';

// The tool loop's rounds (SPEC T2, T7): each plan the planner answers, its retries when an
// answer is no plan, the commands of the round as they finish, and the round once it is over;
// and the tool call budget (SPEC H3) the plans are checked against. A guard here has the name
// the machine gives it; an action's body is named in its comment. Pure.

type ContextArgs = Pick<ToolLoopArgs, 'context'>;

/** SPEC H3: no command can run any more; no planner call is made for a plan that could not run. */
export function isToolCallBudgetSpent({ context }: ContextArgs): boolean {
  const { maxToolCalls } = context.config;
  return maxToolCalls !== undefined && context.donePlans.length >= maxToolCalls;
}

/** The plan's commands would take the run past maxToolCalls: none of them runs. */
export function isOverToolCallBudget({ context }: ContextArgs): boolean {
  const { maxToolCalls } = context.config;
  return (
    maxToolCalls !== undefined &&
    context.donePlans.length + (context.plan?.executionCommands.length ?? 0) > maxToolCalls
  );
}

/** The planner's answer is no plan: anything but an object. */
export function isMalformedPlan(_: unknown, params: { outcome: PlanOutcome }): boolean {
  return !isRecord(params.outcome.raw);
}

/** A malformed plan with attempts left: the planner is asked again, told what was wrong. */
export function canRetryPlan({ context }: ContextArgs, params: { outcome: PlanOutcome }): boolean {
  return !isRecord(params.outcome.raw) && context.planAttempts < context.config.planRetries;
}

/** Action `recordPlan`: the round's plan, normalized, and what planning it spent. */
export function withPlan(
  { context }: ContextArgs,
  params: { outcome: PlanOutcome },
): Partial<ToolLoopContext> {
  const plan = normalizePlan(params.outcome.raw);
  return {
    plan,
    plans: [
      ...context.plans,
      { roundIndex: context.roundIndex, plan, shortCircuited: params.outcome.shortCircuited },
    ],
    planAttempts: 0,
    planError: undefined,
    usage: addUsage(context.usage, params.outcome.usage),
  };
}

/**
 * Action `recordPlanError`: a malformed answer is data for the planner's next attempt, not a
 * silent empty plan.
 */
export function withPlanError(
  { context }: ContextArgs,
  params: { outcome: PlanOutcome },
): Partial<ToolLoopContext> {
  return {
    planAttempts: context.planAttempts + 1,
    planError: params.outcome.error ?? 'Your answer was not a JSON object.',
    usage: addUsage(context.usage, params.outcome.usage),
  };
}

/**
 * Action `recordFinishedCommand`: kept until the round ends, so a round cut short keeps it
 * (SPEC Q8).
 */
export function withFinishedCommand(
  { context }: ContextArgs,
  params: { index: number; record: ToolExecutionRecord },
): Partial<ToolLoopContext> {
  return { roundRecords: [...context.roundRecords, params] };
}

/** Action `recordRound`: the round is over; its records are the next planner call's input. */
export function withRound(
  { context }: ContextArgs,
  params: { records: readonly ToolExecutionRecord[] },
): Partial<ToolLoopContext> {
  return {
    donePlans: [...context.donePlans, ...params.records],
    lastRoundRecords: params.records,
    roundIndex: context.roundIndex + 1,
    roundRecords: [],
  };
}
