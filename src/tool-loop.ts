// `statecraft/tool-loop`: the tool loop's plan and record shapes, and the helpers its default
// planner and responder use.

export {
  type Convergence,
  converge,
  QUOTE_SOURCES_INSTRUCTION,
  toActionResults,
} from './plan/converge.js';
export { type NextAction, normalizePlan, type Plan, type ToolCommand } from './plan/plan.js';
export {
  type PlannerContext,
  plannerMessages,
  planResponseFormat,
} from './plan/planner-context.js';
export type { ToolExecutionRecord } from './plan/records.js';
// The same shapes as zod schemas: what a planner may answer, the plan the loop runs, the
// records and context a planner receives.
export {
  plannerAnswerSchema,
  plannerContextSchema,
  planSchema,
  toolCommandSchema,
  toolExecutionRecordSchema,
  toolSpecSchema,
} from './plan/schemas.js';
