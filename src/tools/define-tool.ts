import type { z } from 'zod';
import type { NeedsApproval } from '../approvals/approval.js';
import { ConfigError } from '../errors.js';
import type { JsonSchema, ToolSpec } from '../model/language-model.js';
import { MAX_DELAY_MS } from '../options/checks.js';
import { isZodSchema, toJsonSchema } from '../schema.js';

export interface ToolContext {
  /** Aborted when the run is cancelled or the tool times out; pass it to fetch, child processes… */
  readonly signal: AbortSignal;
  readonly toolCallId: string;
  /**
   * In a durable run: `<runId>:<toolCallId>`, the same on every attempt of this call. A call
   * that was running when its process died is issued once more on resume, with the same key:
   * pass it to the service the tool changes (a payment's idempotency key, an upsert's id) so
   * the second attempt is harmless. Undefined outside durable runs.
   */
  readonly idempotencyKey?: string;
}

/**
 * What a tool's `input` must be, as far as types go: a zod 4 schema (classic or mini), known by
 * the type it parses to. Why not `z.ZodType`: checking a schema against `z.ZodType` makes tsc
 * compare the schema's whole class with zod's (every method, each generic), about 70,000 type
 * instantiations for one `z.object`, seconds of type-checking in an app. Reading this one
 * property infers the same argument type for a few hundred. At run time `defineTool` still
 * requires a real zod schema (ConfigError otherwise).
 */
export interface ToolInputSchema<Args = unknown> {
  readonly _zod: { readonly output: Args };
}

/** The arguments `execute` receives: the output type of the tool's input schema (`z.output`). */
export type ToolArgs<Input extends ToolInputSchema> = Input['_zod']['output'];

export interface ToolDefinition<Input extends ToolInputSchema, Output> {
  /** Letters, digits, `_` and `-`, at most 64 characters (the strictest provider rule). */
  readonly name: string;
  readonly description: string;
  /** A zod object schema; arguments are validated against it before `execute` runs. */
  readonly input: Input;
  readonly execute: (args: ToolArgs<Input>, context: ToolContext) => Output | Promise<Output>;
  /** Warn the model, once, when it repeats an identical call in one run (SPEC C8). */
  readonly duplicateCallWarn?: boolean;
  /**
   * A successful call of this tool, alone in its step, ends the run with its output as the
   * answer (SPEC R4, LangChain's `return_direct`); the answer is validated like a model's.
   * A stream it returns is read to its end first: the output is then the array of its items.
   * Decided by the tool's name, not by who runs it: when a connected remote executor lists a
   * tool of this name and sets `shadowLocalTools`, the remote runs the call (SPEC C10) and its
   * output still ends the run; without `shadowLocalTools` that collision is refused.
   */
  readonly returnDirect?: boolean;
  /** Advice rendered into the system prompt's tool best-practices block (SPEC P3). */
  readonly bestPractices?: readonly string[];
  /**
   * A person approves each call before it runs (SPEC H2): `true`, or a predicate of the
   * validated arguments. The run waits in `awaitingApproval`; the step's other calls go on.
   * Decided by the tool's name, like returnDirect.
   */
  readonly needsApproval?: NeedsApproval<ToolArgs<Input>>;
  /** Milliseconds a call of this tool waits for a decision; overrides the chain's default. */
  readonly approvalTimeoutMs?: number;
}

// The default stays z.ZodType so a plain `Tool` keeps zod's methods on `input`.
export interface Tool<Input extends ToolInputSchema = z.ZodType, Output = unknown>
  extends ToolDefinition<Input, Output> {
  /** JSON Schema of `input`, derived once at definition. */
  readonly inputSchema: JsonSchema;
  /** What the model is told about this tool. */
  readonly spec: ToolSpec;
}

/** Any tool, whatever its input and output types: what registries and runtimes hold. */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds tools of every argument type.
export type AnyTool = Tool<any, unknown>;

/** Tool names every provider accepts: letters, digits, `_` and `-`, 1 to 64 characters. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** Defines a tool. Invalid options throw a ConfigError naming the option. */
export function defineTool<Input extends ToolInputSchema, Output>(
  definition: ToolDefinition<Input, Output>,
): Tool<Input, Output> {
  const { name, description, input, execute } = definition;
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    throw new ConfigError(
      'name',
      `tool names must match ${TOOL_NAME} (letters, digits, _ and -, 1 to 64 characters); got ${JSON.stringify(name)}`,
    );
  }
  const where = `tool '${name}'`;
  if (typeof description !== 'string' || description.trim() === '') {
    throw new ConfigError(
      'description',
      `${where} needs a non-empty description: the model chooses tools by it`,
    );
  }
  if (!isZodSchema(input)) {
    throw new ConfigError(
      'input',
      `${where} needs a zod schema, e.g. z.object({ path: z.string() })`,
    );
  }
  let inputSchema: JsonSchema;
  try {
    inputSchema = toJsonSchema(input);
  } catch (error) {
    // e.g. z.date() or z.bigint(): values JSON cannot carry, so a provider cannot send them.
    throw new ConfigError(
      'input',
      `${where} has a schema with no JSON Schema form: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  if (inputSchema.type !== 'object') {
    throw new ConfigError(
      'input',
      `${where} needs an object schema (providers pass arguments as a JSON object); got type ${JSON.stringify(inputSchema.type)}`,
    );
  }
  if (typeof execute !== 'function') {
    throw new ConfigError(
      'execute',
      `${where} needs an execute(args, { signal, toolCallId }) function`,
    );
  }
  if (
    definition.bestPractices !== undefined &&
    (!Array.isArray(definition.bestPractices) ||
      definition.bestPractices.some((p) => typeof p !== 'string'))
  ) {
    throw new ConfigError('bestPractices', `${where}: bestPractices must be an array of strings`);
  }
  const { needsApproval, approvalTimeoutMs } = definition;
  if (
    needsApproval !== undefined &&
    typeof needsApproval !== 'boolean' &&
    typeof needsApproval !== 'function'
  ) {
    throw new ConfigError(
      'needsApproval',
      `${where}: needsApproval must be true, false or a function (args, context) => boolean`,
    );
  }
  if (
    approvalTimeoutMs !== undefined &&
    !(
      typeof approvalTimeoutMs === 'number' &&
      approvalTimeoutMs > 0 &&
      approvalTimeoutMs <= MAX_DELAY_MS
    )
  ) {
    throw new ConfigError(
      'approvalTimeoutMs',
      `${where}: approvalTimeoutMs must be a number of milliseconds above 0, at most ${MAX_DELAY_MS}; got ${String(approvalTimeoutMs)}`,
    );
  }
  return Object.freeze({
    ...definition,
    inputSchema,
    spec: Object.freeze({ name, description, inputSchema }),
  });
}
