import type { ChainConfig, ChainWarning } from '../../machines/chain.js';
import type { EarlyStopping } from '../../machines/early-stopping.js';
import type { ApprovalTimeoutPolicy } from '../approvals/approval.js';
import type { PromptContract, PromptTool } from '../compile/convert-to-llm-request.js';
import { type ModelPrices, priceOf } from '../cost.js';
import { ConfigError } from '../errors.js';
import type { JsonSchema, LanguageModel, ResponseFormat } from '../model/language-model.js';
import { type Describes, describeOptions, type OptionContext } from '../options/describe.js';
import {
  count,
  delay,
  flag,
  func,
  integer,
  model,
  name,
  object,
  oneOf,
  positive,
  satisfies,
  timeLimit,
  unchecked,
} from '../options/kinds.js';
import { checkResponseFormat } from '../options/model-request-options.js';
import { OptionProblems } from '../options/problems.js';
import type { StandardSchema } from '../structured/output-schema.js';
import { TOOL_CALL_CONTROLS } from '../tools/call-controls.js';
import type { AnyTool } from '../tools/define-tool.js';
import type { ToolCallHooks } from '../tools/hooks.js';
import type { InvalidToolCallPolicy } from '../tools/invalid-tool-call.js';
import type { RemoteToolExecutor } from '../tools/remote-executor.js';

/** The seed's default note for tool results (SPEC C5). */
export const DEFAULT_TOOL_RESPONSE_INSTRUCTIONS =
  'Some tools return their results as streams. Once you have what you need, stop the stream with the stop_stream tool.';

export type ValidateResult<T> = (
  result: T,
) =>
  | { readonly ok: true }
  | { readonly ok: false; readonly message: string }
  | Promise<{ readonly ok: true } | { readonly ok: false; readonly message: string }>;

export interface ChainOptions<T = string> extends ToolCallHooks {
  readonly model: LanguageModel;
  /** The chain's name in callbacks and run events (default `'chain'`). */
  readonly name?: string;
  readonly tools?: readonly AnyTool[];
  readonly systemPrompt?: string;
  readonly baseInstruction?: string;
  readonly mustPrinciples?: readonly string[];
  /**
   * Generations allowed per run (default 10): an integer >= 0, or `Infinity` for no limit.
   * Reaching it without an answer is a ProtocolError (see earlyStopping). 0 makes no model
   * call: with earlyStopping 'force' the run answers with the stop message, else it fails.
   */
  readonly maxIterations?: number;
  /**
   * Tokens allowed per run, summed over every model call (default 128,000). Checked before
   * each call as well as after (SPEC H3): a call expected to cross it is not made, and the run
   * stops as at any limit (earlyStopping applies; without it, a TokenLimitError with
   * `estimate`). A call that crossed it anyway fails the run (TokenLimitError), early
   * stopping or not. The expected spend: the previous call's input tokens plus a quarter of
   * the characters added since (the first call: of the whole conversation and system
   * prompt), plus `modelSettings.maxOutputTokens`, or else the largest output of the run so far.
   */
  readonly maxTokens?: number;
  /**
   * Tool calls allowed per run: an integer >= 0, or Infinity (default: no limit). A response
   * whose calls would take the run past it runs none of them: its message is left out of the
   * transcript, and one last model call without tools answers (the result's `stopped` is
   * `{ reason: 'maxToolCalls', method: 'generate' }`), if it fits maxTokens and maxCost.
   */
  readonly maxToolCalls?: number;
  /**
   * US dollars allowed per run, a number > 0, priced with `prices` (required with it).
   * Checked before and after each call, as maxTokens is: CostLimitError.
   */
  readonly maxCost?: number;
  /**
   * The model's prices in US dollars per million tokens, `{ inputPerMillion, outputPerMillion,
   * cachedInputPerMillion? }`, or such prices by model id (the chain's model's `modelId` must
   * be one). With them a run's cost is on its result (`cost`), its `details()` and its spans.
   */
  readonly prices?: ModelPrices;
  /**
   * Milliseconds a run may take (at most 2^31 - 1). When it passes, the model call, tool calls
   * or validation in flight are cancelled (their signals aborted, their answers dropped) and
   * the run fails with a TimeoutError (see earlyStopping). The final model call of
   * `earlyStopping: 'generate'` is not bounded by it; your `signal` still reaches it.
   * 0 makes no model call (the time is checked before the first one, as LangChain's
   * AgentExecutor does): with earlyStopping 'force' the run answers with the stop message,
   * else it fails with a TimeoutError.
   */
  readonly maxExecutionTime?: number;
  /**
   * What a run does when it reaches maxIterations or maxExecutionTime (LangChain's
   * early_stopping_method). Default: it fails (ProtocolError, TimeoutError).
   * - 'force': it succeeds with a stop message as result and text, not validated (so not
   *   with an outputSchema or a JSON responseFormat).
   * - 'generate': one last model call without tools, told to answer from what it has; its
   *   answer is validated like any, and a missing or invalid one fails the run (ProtocolError).
   *   That call is made only if it fits maxTokens and maxCost: otherwise the run fails as it
   *   would without earlyStopping, with the error of the limit reached.
   * It also applies when the next call would cross maxTokens or maxCost (SPEC H3), and at
   * maxIterations the tools the last generation asked for run first (as in LangChain's
   * AgentExecutor), so the final answer of 'generate' reads their results.
   * The result's `stopped` says which limit and method ended the run.
   */
  readonly earlyStopping?: EarlyStopping;
  readonly warningPrompt?: { readonly iterations?: string; readonly tokens?: string };
  /** >= 0: absolute; < 0: this far from the limit. Required for each warning prompt given. */
  readonly warningThreshold?: { readonly iterations?: number; readonly tokens?: number };
  /** A system note added after tool results; `false` for none. Default: the stream note, when a stream opens. */
  readonly toolResponseInstructions?: string | false;
  /** Overrides the response format derived from `outputSchema`. */
  readonly responseFormat?: ResponseFormat;
  /** Final answers are parsed as JSON (from prose or fenced blocks) and validated against it. */
  readonly outputSchema?: StandardSchema<T> | JsonSchema;
  readonly validateResult?: ValidateResult<T>;
  /**
   * A tool call whose arguments are not JSON or fail the tool's schema (SPEC H4):
   * 'return-to-model' (default: the model reads what was wrong), 'fail' (the run ends, a
   * ChainError caused by an InvalidToolCallError), a string the model reads instead, or a
   * function that words it.
   */
  readonly invalidToolCall?: InvalidToolCallPolicy;
  /**
   * Milliseconds a call that needs approval (SPEC H2) waits for a decision; a tool's own
   * `approvalTimeoutMs` overrides it. Counted from when it began to wait, across restarts.
   * Default: no limit (the run's maxExecutionTime, if set, still bounds the run).
   */
  readonly approvalTimeoutMs?: number;
  /** When approvalTimeoutMs passes: 'reject' the call (default; the model reads `Not approved: no decision in time`) or 'fail' the run (a TimeoutError). */
  readonly onApprovalTimeout?: ApprovalTimeoutPolicy;
  /**
   * Characters of a rejected call's reason kept (default 1,000), wherever the decision came
   * from: a longer one is cut before it is journaled or sent, and the model reads
   * `… [reason cut at N characters]` where it was cut.
   */
  readonly maxApprovalReasonLength?: number;
  readonly warnRecursiveCalls?: boolean;
  readonly catchIntermediateResult?: boolean;
  readonly resultCacheKey?: string;
  readonly remote?: RemoteToolExecutor;
  /** At most this many tool calls of one step run at once (p-limit). Default: all. */
  readonly toolConcurrency?: number;
  /** A tool call still running after this long is answered with a failed result. */
  readonly toolTimeoutMs?: number;
  /** Items read from a streaming tool per step (default 5). */
  readonly streamBatchSize?: number;
  /** Sent with every model call. */
  readonly modelSettings?: {
    readonly temperature?: number;
    readonly topP?: number;
    readonly maxOutputTokens?: number;
    readonly seed?: number;
  };
}

function warning(
  kind: 'iterations' | 'tokens',
  prompt: unknown,
  threshold: unknown,
): ChainWarning | undefined {
  if (prompt === undefined && threshold === undefined) return undefined;
  if (typeof prompt !== 'string' || prompt.trim() === '') {
    throw new ConfigError(
      `warningPrompt.${kind}`,
      `needs a non-empty text when warningThreshold.${kind} is set`,
    );
  }
  if (typeof threshold !== 'number' || !Number.isFinite(threshold)) {
    throw new ConfigError(
      `warningThreshold.${kind}`,
      'needs a number: >= 0 for an absolute count, < 0 for "this far from the limit"',
    );
  }
  return { prompt, threshold };
}

/**
 * 'force' with structured output is always invalid, so refused here rather than at the limit:
 * the stop message is text, it could not pass a schema, and a result that skipped the schema
 * would lie about T.
 */
function forceWithText(options: Readonly<Record<string, unknown>>): void {
  const format = (options.responseFormat as { type?: unknown } | null | undefined)?.type;
  const structured =
    options.outputSchema !== undefined
      ? 'outputSchema'
      : format && format !== 'text'
        ? `responseFormat (${JSON.stringify(format)})`
        : undefined;
  if (structured) {
    throw new ConfigError(
      'earlyStopping',
      `'force' cannot be combined with ${structured}: it ends a run with a text stop message, which is not structured output; use 'generate', whose final answer is validated like any`,
    );
  }
}

/** A nested warnings object, as its check left it. */
type Warnings = { readonly iterations?: unknown; readonly tokens?: unknown } | undefined;

/** A text warning and its threshold, given together; each kind's problem named once. */
function checkWarnings(thresholds: Warnings, at: OptionContext): void {
  const prompts = at.values.warningPrompt as Warnings;
  for (const kind of ['iterations', 'tokens'] as const) {
    at.problems.check(() => warning(kind, prompts?.[kind], thresholds?.[kind]));
  }
}

/** The prices, when given, for the chain's model; maxCost needs them. */
function checkPrices(_: unknown, at: OptionContext): void {
  const { prices, model } = at.options;
  if (prices !== undefined) {
    const modelId = (model as { modelId?: unknown } | undefined)?.modelId;
    at.problems.check(() => priceOf('prices', prices, String(modelId)));
  }
  if (at.values.maxCost !== undefined && prices === undefined) {
    at.problem('needs `prices` to price what the run spends', 'maxCost');
  }
}

const isText = (value: unknown) => typeof value === 'string';
const notText = (value: unknown) => `must be a string; got ${typeof value}`;
const finite = () =>
  satisfies<number>(
    (value) => typeof value === 'number' && Number.isFinite(value),
    (value) => `must be a finite number; got ${String(value)}`,
  );

/**
 * createChain's options described once (see src/options/describe.ts): their check, in the
 * order problems are reported, their defaults and the docs table's default column.
 * ChainOptions stays hand-written (generic in the result type, with its doc comments), tied
 * to this description by `Describes` below.
 */
export const CHAIN_OPTIONS = describeOptions('createChain', {
  model: model({ required: true, defaultText: 'required' }),
  name: name('chain'),
  maxIterations: count({ default: 10 }),
  maxToolCalls: count({ defaultText: 'none' }),
  maxCost: positive(false, { defaultText: 'none' }),
  // Checked by `checkPrices`, which needs the model's id.
  prices: unchecked<ModelPrices>({ defaultText: 'none', also: checkPrices }),
  maxTokens: integer(1, { default: 128_000 }),
  toolConcurrency: positive(true, { defaultText: 'all at once' }),
  toolTimeoutMs: delay({ defaultText: 'none' }),
  streamBatchSize: integer(1, { default: 5 }),
  maxExecutionTime: timeLimit({ defaultText: 'none' }),
  earlyStopping: oneOf(['force', 'generate'], {
    defaultText: 'none (fail)',
    also: (earlyStopping, at) => {
      if (earlyStopping === 'force') at.problems.check(() => forceWithText(at.options));
    },
  }),
  systemPrompt: satisfies<string>(isText, notText),
  baseInstruction: satisfies<string>(isText, notText),
  mustPrinciples: satisfies<readonly string[]>(
    (value) => Array.isArray(value) && value.every(isText),
    'must be an array of strings',
  ),
  warnRecursiveCalls: flag({ default: true }),
  catchIntermediateResult: flag({ default: true }),
  ...TOOL_CALL_CONTROLS,
  validateResult: func<ValidateResult<unknown>>(
    '(result) => { ok: true } | { ok: false, message }',
  ),
  resultCacheKey: satisfies<string>(
    (value) => typeof value === 'string' && value !== '',
    'must be a non-empty string',
  ),
  remote: satisfies<RemoteToolExecutor>(
    (value) =>
      typeof value === 'object' &&
      value !== null &&
      typeof (value as RemoteToolExecutor).execute === 'function' &&
      typeof (value as RemoteToolExecutor).listTools === 'function',
    'must implement listTools() and execute(call, { signal })',
  ),
  toolResponseInstructions: satisfies<string | false>(
    (value) => value === false || typeof value === 'string',
    'must be a string, or false for none',
    { defaultText: 'the stream note, when a stream opens' },
  ),
  responseFormat: {
    check: (value: unknown, at: OptionContext): ResponseFormat | undefined => {
      const before = at.problems.size;
      checkResponseFormat(at.problems, at.name, value);
      return at.problems.size === before ? (value as ResponseFormat) : undefined;
    },
  },
  modelSettings: object({
    temperature: finite(),
    topP: finite(),
    maxOutputTokens: integer(1),
    seed: satisfies<number>(
      (value) => typeof value === 'number' && Number.isInteger(value),
      (value) => `must be an integer; got ${String(value)}`,
    ),
  }),
  warningPrompt: object({ iterations: unchecked<string>(), tokens: unchecked<string>() }),
  warningThreshold: object(
    { iterations: unchecked<number>(), tokens: unchecked<number>() },
    { also: checkWarnings },
  ),
  // Checked by createChain, which builds the tool registry and the structured output from them.
  tools: unchecked<readonly AnyTool[], readonly AnyTool[]>({ default: [] }),
  outputSchema: unchecked(),
});

// tsc fails here, naming the option, when ChainOptions and its description drift apart: a
// key in one only, or a value type the other does not take.
const _described: Describes<ChainOptions<unknown>, typeof CHAIN_OPTIONS> = true;

/**
 * Validates every option, reporting every problem at once (unknown keys, with the nearest
 * known name, first), and derives the machine's config. `options` is an object (createChain
 * checks). `problems` may hold the caller's own findings (e.g. about `tools`): they are thrown
 * together with these.
 */
export function chainConfig(
  options: ChainOptions<unknown>,
  tools: readonly AnyTool[],
  problems: OptionProblems = new OptionProblems('createChain'),
): ChainConfig {
  const checked = CHAIN_OPTIONS.collect(options, problems);
  // Before anything is derived: a failed check left its value undefined.
  problems.throwIfAny();
  const { maxIterations, maxTokens, maxToolCalls, maxCost, maxExecutionTime } = checked;
  const settings = checked.modelSettings;
  const warnings = {
    iterations: warning(
      'iterations',
      options.warningPrompt?.iterations,
      options.warningThreshold?.iterations,
    ),
    tokens: warning('tokens', options.warningPrompt?.tokens, options.warningThreshold?.tokens),
  };
  const instructions = options.toolResponseInstructions;
  // Frozen, with copies of the caller's arrays: the compile pipeline renders a frozen
  // contract's tool blocks once, which is only right if nothing can change it afterwards.
  const contract: PromptContract = Object.freeze({
    ...(options.systemPrompt !== undefined && { systemPrompt: options.systemPrompt }),
    ...(options.baseInstruction !== undefined && { baseInstruction: options.baseInstruction }),
    ...(options.mustPrinciples !== undefined && {
      mustPrinciples: Object.freeze([...options.mustPrinciples]),
    }),
    tools: Object.freeze(tools.map(promptTool)),
  });
  return {
    maxIterations,
    maxTokens,
    // Infinity is no limit: the config leaves it out.
    ...(maxToolCalls !== undefined && Number.isFinite(maxToolCalls) && { maxToolCalls }),
    ...(maxCost !== undefined && { maxCost }),
    ...(options.prices !== undefined && {
      prices: priceOf('prices', options.prices, String(options.model.modelId)),
    }),
    ...(typeof settings?.maxOutputTokens === 'number' && {
      maxOutputTokens: settings.maxOutputTokens,
    }),
    warnings: {
      ...(warnings.iterations && { iterations: warnings.iterations }),
      ...(warnings.tokens && { tokens: warnings.tokens }),
    },
    ...(instructions !== false && {
      toolResponseInstructions:
        instructions === undefined
          ? { text: DEFAULT_TOOL_RESPONSE_INSTRUCTIONS, when: 'streams' as const }
          : { text: instructions, when: 'always' as const },
    }),
    warnRecursiveCalls: checked.warnRecursiveCalls,
    duplicateWarnTools: tools.filter((t) => t.duplicateCallWarn).map((t) => t.name),
    returnDirectTools: tools.filter((t) => t.returnDirect).map((t) => t.name),
    ...(maxExecutionTime !== undefined && { maxExecutionTime }),
    ...(checked.earlyStopping !== undefined && { earlyStopping: checked.earlyStopping }),
    ...(options.onApprovalTimeout === 'fail' && { approvalTimeout: 'fail' as const }),
    // Only when given: a journal begun before the option existed resumes with the same config.
    ...(options.maxApprovalReasonLength !== undefined && {
      maxApprovalReasonLength: options.maxApprovalReasonLength,
    }),
    catchIntermediateResult: checked.catchIntermediateResult,
    ...(options.resultCacheKey !== undefined && { resultCacheKey: options.resultCacheKey }),
    contract,
  };
}

/**
 * A tool's entry in the frozen contract: its name, its description (the `<use>` line of the
 * best-practices block) and a copy of its best practices. The description comes from the
 * tool, or from its spec for a tool object built without defineTool.
 */
function promptTool(tool: AnyTool): PromptTool {
  const description = tool.description || tool.spec?.description;
  return Object.freeze({
    name: tool.name,
    ...(description && { description }),
    ...(tool.bestPractices && { bestPractices: Object.freeze([...tool.bestPractices]) }),
  });
}
