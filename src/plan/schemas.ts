import { z } from 'zod';
import { type Attachment, attachmentProblem } from '../attachments.js';
import { normalizePlan } from './plan.js';

// The tool loop's JSON as zod schemas a user can import: the plan a planner returns, what the
// loop accepts as one, the records of executed commands, and the context a planner is given.
// They state the shapes of plan.ts, records.ts and planner-context.ts; a test holds them to
// the runtime (normalizePlan, recordOf, the loop's planner calls), so they cannot drift.

/** A JSON object's value, any of them: what tool arguments and results are. */
const jsonObject = z.record(z.string(), z.unknown());

/** An attachment as JSON: `{ mediaType, data | url, name? }` (see attachment()). */
function attachmentSchema() {
  return z.custom<Attachment>((value) => attachmentProblem(value) === undefined, {
    message: 'an attachment must be { mediaType, data (base64) | url, name? }',
  });
}

/** One tool call in a plan, as the loop runs it (`ToolCommand`). */
export const toolCommandSchema = z
  .object({
    /** Why the call is made; its result is keyed by it in `actionResults`. */
    purpose: z.string().trim().min(1).describe('Why this call is made; keys its result.'),
    toolName: z.string().trim().min(1).describe('The name of one of the available tools.'),
    toolKwargs: jsonObject.describe("The tool's arguments, matching its inputSchema."),
    /** What the planner means to do with the result; it comes back as the record's `next`. */
    todoSuggestion: z.string().describe('What to do with the result (may be empty).'),
  })
  .readonly();

/**
 * The plan of one round, as the loop runs it (`Plan`): what `normalizePlan` returns, what a
 * result's `plans` and a stream's `commands-planned` event hold, and the canonical answer a
 * planner gives (the model planner is asked for exactly this, with `planResponseFormat`).
 * `response` ends the loop with no command; `execute` with no command ends it too.
 */
export const planSchema = z
  .object({
    nextAction: z.enum(['execute', 'response']),
    executionCommands: z.array(toolCommandSchema).readonly(),
  })
  .readonly()
  .refine((plan) => plan.nextAction === 'execute' || plan.executionCommands.length === 0, {
    message: "a plan whose nextAction is 'response' runs no command: executionCommands is []",
    path: ['executionCommands'],
  });

/**
 * What the loop accepts from a planner, read leniently as `normalizePlan` reads it: any JSON
 * object is a plan (a string answer is searched for its first one; anything else is a
 * malformed plan, which the loop asks again for, `planRetries`, then fails with a
 * ProtocolError). Parsing yields the plan the loop runs. The keys it reads, each also in
 * snake_case (`next_action`, `execution_commands`, `tool_name`…):
 * - `nextAction`: `execute` or `response`, any case; otherwise `execute` when commands remain;
 * - `executionCommands`, else `toolCommands`: the first list wins, even empty; when it yields
 *   no valid command, a single `toolCommand` object is the list;
 * - in a command, `toolName` (a command without one is dropped), `purpose` (blank:
 *   `Use <toolName>`), `toolKwargs` (not an object: `{}`), `todoSuggestion`, else `next`;
 * - `todoSuggestion`, else `next`: the todo of every command that has none;
 * - `useTool: false`, or an action other than `execute`: respond, running no command.
 */
export const plannerAnswerSchema = z
  .looseObject({
    nextAction: z.unknown().optional(),
    executionCommands: z.unknown().optional(),
    toolCommands: z.unknown().optional(),
    toolCommand: z.unknown().optional(),
    todoSuggestion: z.unknown().optional(),
    next: z.unknown().optional(),
    useTool: z.unknown().optional(),
  })
  .transform((answer) => normalizePlan(answer));

/**
 * What one executed command produced (`ToolExecutionRecord`): the items of a planner's
 * `donePlans` and `lastRoundResult`, and of a result's `toolLogs`. A failed call (an unknown
 * tool, invalid arguments, a tool that threw, a call refused or not approved) has
 * `success: false`, `result: null` and the reason in `error`.
 */
export const toolExecutionRecordSchema = z
  .object({
    purpose: z.string(),
    toolName: z.string(),
    /** The command's `toolKwargs`, as JSON. */
    kwargs: jsonObject,
    todoSuggestion: z.string(),
    /** The same as `todoSuggestion`, under the name planners of the original design read. */
    next: z.string(),
    success: z.boolean(),
    /** The tool's output (JSON); null when it failed. */
    result: z.unknown(),
    /** Why it failed; null when it succeeded. */
    error: z.string().nullable(),
    /** Images and files the tool returned (`toolOutput`); absent when none. */
    attachments: z.array(attachmentSchema()).readonly().optional(),
  })
  .readonly()
  .refine((record) => (record.success ? record.error === null : record.error !== null), {
    message: 'a record has an error exactly when it failed',
    path: ['error'],
  });

/** A tool as a planner sees it: the same as a model's tool list. */
export const toolSpecSchema = z
  .object({
    name: z.string(),
    description: z.string(),
    /** The tool's arguments as JSON Schema. */
    inputSchema: jsonObject,
  })
  .readonly();

/** What a planner is given each round (`PlannerContext`): plain JSON. */
export const plannerContextSchema = z
  .object({
    userInput: z.string(),
    /** The caller's extra requirement for the run; '' when none. */
    extraRequirement: z.string(),
    availableTools: z.array(toolSpecSchema).readonly(),
    /** Every record of every round so far. */
    donePlans: z.array(toolExecutionRecordSchema).readonly(),
    /** The records of the round just executed; [] before the first. */
    lastRoundResult: z.array(toolExecutionRecordSchema).readonly(),
    /** Rounds executed so far: 0 in the first planning call. */
    roundIndex: z.number().int().min(0),
    maxRounds: z.number().int().min(0),
    /** Why the previous answer in this round was not a plan, for the planner to correct. */
    planError: z.string().optional(),
  })
  .readonly();
