import type { ToolLoopConfig } from '../../machines/tool-loop.js';
import type { ApprovalTimeoutPolicy } from '../approvals/approval.js';
import type { Chain } from '../chain/chain.js';
import type { LanguageModel } from '../model/language-model.js';
import { type Describes, describeOptions } from '../options/describe.js';
import {
  count,
  delay,
  flag,
  func,
  integer,
  model,
  name,
  positive,
  satisfies,
  unchecked,
} from '../options/kinds.js';
import { OptionProblems } from '../options/problems.js';
import type { PlannerContext } from '../plan/planner-context.js';
import { TOOL_CALL_CONTROLS } from '../tools/call-controls.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { ToolCallHooks } from '../tools/hooks.js';
import type { InvalidToolCallPolicy } from '../tools/invalid-tool-call.js';

/**
 * A planner of your own: given the round's context (SPEC T3), return the plan as an object,
 * as JSON text, or as an AsyncIterable of JSON text chunks. Returning chunks makes it a
 * streaming planner, which the instant short-circuit (SPEC T5) applies to.
 */
export type Planner = (
  context: PlannerContext,
  options: { readonly signal: AbortSignal },
) => unknown | Promise<unknown>;

/** A final response of your own: given the request and the action results, return the answer. */
export type Responder = (
  input: {
    readonly userInput: string;
    readonly extraRequirement: string;
    readonly actionResults: Readonly<Record<string, unknown>>;
    readonly extraInstruction: string | undefined;
  },
  options: { readonly signal: AbortSignal },
) => string | Promise<string>;

export interface ToolLoopOptions extends ToolCallHooks {
  /** Plans each round (unless `planner` is given) and makes the final response. */
  readonly model?: LanguageModel;
  /** The loop's name in callbacks and run events (default `'tool-loop'`). */
  readonly name?: string;
  /** Replaces the default model planner. */
  readonly planner?: Planner;
  readonly tools?: readonly AnyTool[];
  /**
   * `false` turns the loop off: the planner is never called and no tool runs; the final
   * response is still made, without action results (default true).
   */
  readonly enabled?: boolean;
  /**
   * A hard bound on executed rounds; an integer >= 0 (default 5). Once it is reached the
   * planner is not asked again: the loop goes to the final response.
   */
  readonly maxRounds?: number;
  /**
   * Commands executed per run, over all rounds (SPEC H3): an integer >= 0, or Infinity
   * (default: no limit). A plan whose commands would pass it runs none of them: the loop
   * stops (`stopReason: 'max-tool-calls'`) and goes to the final response with the records
   * it has; once it is reached, the planner is not asked again.
   */
  readonly maxToolCalls?: number;
  /** At most this many commands of a round run at once; an integer > 0 (default: all). */
  readonly concurrency?: number;
  /** Milliseconds for the whole loop, final response included; a number > 0 (default: none). */
  readonly timeout?: number;
  /** Extra attempts a round's planner gets after an answer that is not a plan (default 1). */
  readonly planRetries?: number;
  /** Read a streaming plan (the default planner's, or yours) only up to `nextAction: "response"` (default true). */
  readonly instant?: boolean;
  /**
   * The final response: `true` for a call to `model`, a chain, a function, or `false` for
   * none (the result then carries the action results only). Default: `true` when `model` is
   * given, else `false`.
   */
  readonly respond?: boolean | Chain<unknown> | Responder;
  /** A system prompt for the final model response. */
  readonly instructions?: string;
  /** A command whose arguments fail its tool's schema: as on a chain (SPEC H4); the planner reads it. */
  readonly invalidToolCall?: InvalidToolCallPolicy;
  /**
   * Milliseconds a command that needs approval (SPEC H2) waits for a decision; a tool's own
   * `approvalTimeoutMs` overrides it. Counted from when it began to wait, across restarts.
   * Default: no limit.
   */
  readonly approvalTimeoutMs?: number;
  /** When approvalTimeoutMs passes: 'reject' the command (default; its record reads `Not approved: no decision in time`) or 'fail' the run (a TimeoutError). */
  readonly onApprovalTimeout?: ApprovalTimeoutPolicy;
  /**
   * Characters of a rejected command's reason kept (default 1,000): a longer one is cut
   * before it is journaled or read by the planner, which reads `… [reason cut at N characters]`.
   */
  readonly maxApprovalReasonLength?: number;
}

const notBoolean = (value: unknown) => `must be a boolean; got ${String(value)}`;

/** A response of your own: a chain (anything with invoke) or a function. */
function isResponder(value: unknown): boolean {
  return (
    typeof value === 'boolean' ||
    typeof value === 'function' ||
    (typeof value === 'object' &&
      value !== null &&
      typeof (value as { invoke?: unknown }).invoke === 'function')
  );
}

/**
 * createToolLoop's options described once (see src/options/describe.ts): their check, in the
 * order problems are reported, their defaults and the docs table's default column.
 * ToolLoopOptions stays hand-written (with its doc comments), tied to this description by
 * `Describes` below.
 */
export const TOOL_LOOP_OPTIONS = describeOptions('createToolLoop', {
  ...TOOL_CALL_CONTROLS,
  model: model(),
  name: name('tool-loop'),
  planner: func<Planner>('(context, { signal }) => plan', {
    defaultText: 'the model',
    also: (planner, at) => {
      const { model, tools } = at.options;
      if (model === undefined && planner === undefined && Array.isArray(tools) && tools.length) {
        at.problem('is required unless a `planner` function is given', 'model');
      }
    },
  }),
  enabled: flag({ default: true }, notBoolean),
  maxRounds: integer(0, { default: 5 }),
  maxToolCalls: count({ defaultText: 'none' }),
  concurrency: positive(true, { defaultText: 'all at once' }),
  timeout: delay({ defaultText: 'none' }),
  planRetries: integer(0, { default: 1 }),
  instant: flag({ default: true }, notBoolean),
  respond: satisfies<boolean | Chain<unknown> | Responder>(
    isResponder,
    'must be true (a call to `model`), false, a chain from createChain(), or a function',
    {
      defaultText: 'true with `model`',
      also: (_, at) => {
        if (at.options.respond === true && at.options.model === undefined) {
          at.problem('is true, but there is no `model` to respond with');
        }
      },
    },
  ),
  instructions: satisfies<string>((value) => typeof value === 'string', 'must be a string'),
  // Checked by createToolLoop, which builds the tool registry from them.
  tools: unchecked<readonly AnyTool[], readonly AnyTool[]>({ default: [] }),
});

// tsc fails here, naming the option, when ToolLoopOptions and its description drift apart: a
// key in one only, or a value type the other does not take.
const _described: Describes<ToolLoopOptions, typeof TOOL_LOOP_OPTIONS> = true;

/**
 * Validates every option (SPEC T8), reporting every problem at once (unknown keys, with the
 * nearest known name, first), and derives the machine's config. `problems` may hold the
 * caller's own findings (e.g. about `tools`): they are thrown together with these.
 */
export function toolLoopConfig(
  options: ToolLoopOptions,
  problems: OptionProblems = new OptionProblems('createToolLoop'),
): ToolLoopConfig {
  const checked = TOOL_LOOP_OPTIONS.collect(options, problems);
  // Before anything is derived: a failed check left its value undefined.
  problems.throwIfAny();
  const { maxRounds, maxToolCalls, timeout, planRetries } = checked;
  const respond = options.respond ?? options.model !== undefined;
  return {
    ...(options.enabled === false && { enabled: false }),
    maxRounds,
    // Infinity is no limit: the config leaves it out.
    ...(maxToolCalls !== undefined && Number.isFinite(maxToolCalls) && { maxToolCalls }),
    ...(timeout !== undefined && { timeout }),
    planRetries,
    respond: respond !== false,
    ...(options.onApprovalTimeout === 'fail' && { approvalTimeout: 'fail' as const }),
    // Only when given: a journal begun before the option existed resumes with the same config.
    ...(options.maxApprovalReasonLength !== undefined && {
      maxApprovalReasonLength: options.maxApprovalReasonLength,
    }),
  };
}
