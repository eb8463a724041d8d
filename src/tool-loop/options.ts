import type { ToolLoopConfig } from '../../machines/tool-loop.js';
import type { ApprovalTimeoutPolicy } from '../approvals/approval.js';
import type { Chain } from '../chain/chain.js';
import type { LanguageModel } from '../model/language-model.js';
import {
  checkModel,
  checkToolCallControls,
  countOrInfinity,
  integerAtLeast,
  optionalDelay,
  optionalPositive,
  runName,
} from '../options/checks.js';
import type { EveryKeyListed } from '../options/keys.js';
import { OptionProblems } from '../options/problems.js';
import type { PlannerContext } from '../plan/planner-context.js';
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

/** Every option createToolLoop knows: any other key is refused as a typo (SPEC Q4). */
export const TOOL_LOOP_OPTION_KEYS = [
  'model',
  'name',
  'planner',
  'tools',
  'enabled',
  'maxRounds',
  'maxToolCalls',
  'concurrency',
  'timeout',
  'planRetries',
  'instant',
  'respond',
  'instructions',
  'beforeToolCall',
  'afterToolCall',
  'invalidToolCall',
  'approvalTimeoutMs',
  'onApprovalTimeout',
  'maxApprovalReasonLength',
] as const satisfies readonly (keyof ToolLoopOptions)[];

// tsc fails here, naming the option, when ToolLoopOptions gains one the list lacks.
const _everyToolLoopOptionListed: EveryKeyListed<ToolLoopOptions, typeof TOOL_LOOP_OPTION_KEYS> =
  true;

/**
 * Validates every option (SPEC T8), reporting every problem at once (unknown keys, with the
 * nearest known name, first), and derives the machine's config. `problems` may hold the
 * caller's own findings (e.g. about `tools`): they are thrown together with these.
 */
export function toolLoopConfig(
  options: ToolLoopOptions,
  tools: readonly AnyTool[],
  problems: OptionProblems = new OptionProblems('createToolLoop'),
): ToolLoopConfig {
  problems.unknownKeys(options, TOOL_LOOP_OPTION_KEYS);
  checkToolCallControls(options, problems);
  if (options.model !== undefined) problems.check(() => checkModel('model', options.model));
  problems.check(() => runName('name', options.name, 'tool-loop'));
  if (options.planner !== undefined && typeof options.planner !== 'function') {
    problems.add('planner', 'must be a function (context, { signal }) => plan');
  }
  if (options.model === undefined && options.planner === undefined && tools.length > 0) {
    problems.add('model', 'is required unless a `planner` function is given');
  }
  if (options.enabled !== undefined && typeof options.enabled !== 'boolean') {
    problems.add('enabled', `must be a boolean; got ${String(options.enabled)}`);
  }
  const maxRounds = problems.check(() => integerAtLeast('maxRounds', options.maxRounds, 0, 5));
  const maxToolCalls = problems.check(() =>
    countOrInfinity('maxToolCalls', options.maxToolCalls, undefined),
  );
  problems.check(() => optionalPositive('concurrency', options.concurrency, true));
  const timeout = problems.check(() => optionalDelay('timeout', options.timeout));
  const planRetries = problems.check(() =>
    integerAtLeast('planRetries', options.planRetries, 0, 1),
  );
  if (options.instant !== undefined && typeof options.instant !== 'boolean') {
    problems.add('instant', `must be a boolean; got ${String(options.instant)}`);
  }
  const respond = options.respond ?? options.model !== undefined;
  if (
    typeof respond !== 'boolean' &&
    typeof respond !== 'function' &&
    (typeof respond !== 'object' || respond === null || typeof respond.invoke !== 'function')
  ) {
    problems.add(
      'respond',
      'must be true (a call to `model`), false, a chain from createChain(), or a function',
    );
  }
  if (respond === true && options.model === undefined) {
    problems.add('respond', 'is true, but there is no `model` to respond with');
  }
  if (options.instructions !== undefined && typeof options.instructions !== 'string') {
    problems.add('instructions', 'must be a string');
  }
  // Before anything is derived: a failed check left its value undefined.
  problems.throwIfAny();
  return {
    ...(options.enabled === false && { enabled: false }),
    // Defined: their checks passed, or throwIfAny would have thrown.
    maxRounds: maxRounds as number,
    // Infinity is no limit: the config leaves it out.
    ...(maxToolCalls !== undefined && Number.isFinite(maxToolCalls) && { maxToolCalls }),
    ...(timeout !== undefined && { timeout }),
    planRetries: planRetries as number,
    respond: respond !== false,
    ...(options.onApprovalTimeout === 'fail' && { approvalTimeout: 'fail' as const }),
    // Only when given: a journal begun before the option existed resumes with the same config.
    ...(options.maxApprovalReasonLength !== undefined && {
      maxApprovalReasonLength: options.maxApprovalReasonLength,
    }),
  };
}
