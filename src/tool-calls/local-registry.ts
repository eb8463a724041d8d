import { ConfigError } from '../errors.js';
import { isAsyncIterable } from '../host/async-iterable.js';
import { jsonSafeOutput } from '../json-safe.js';
import { failedToolResult, type ToolCall, type ToolResult } from '../messages.js';
import type { ToolSpec } from '../model/language-model.js';
import { ABORTED, raceAbort } from '../race-abort.js';
import { formatZodError } from '../schema.js';
import type { AnyTool } from '../tools/define-tool.js';
import { type InvalidToolCallPolicy, invalidCallText } from '../tools/invalid-tool-call.js';
import { isToolOutput } from '../tools/tool-output.js';

export interface RunToolOptions {
  readonly signal?: AbortSignal;
  /** Handed to the tool in its context (durable runs; see ToolContext). */
  readonly idempotencyKey?: string;
  /** What the model reads for arguments that are not JSON or fail the schema (SPEC H4). */
  readonly invalidToolCall?: InvalidToolCallPolicy;
}

// One signal that never aborts, for callers that pass none: tools may rely on `signal` existing.
const NEVER_ABORTED = new AbortController().signal;

/**
 * The local tool executor (the seed's MiniDrive): tools defined in this process, looked up by
 * name. `run` never throws: an unknown name, arguments that are not JSON or fail the tool's
 * schema, an exception and a cancellation all come back as a failed ToolResult whose `error`
 * the model reads and can act on — except invalid arguments under `invalidToolCall: 'fail'`,
 * which throw an InvalidToolCallError for the run to end with.
 */
export class LocalToolRegistry {
  readonly #tools = new Map<string, AnyTool>();

  constructor(tools: readonly AnyTool[] = []) {
    if (!Array.isArray(tools))
      throw new ConfigError('tools', 'must be an array of tools from defineTool()');
    for (const [index, tool] of tools.entries()) {
      if (
        typeof tool !== 'object' ||
        tool === null ||
        typeof tool.execute !== 'function' ||
        !tool.spec
      ) {
        throw new ConfigError(
          'tools',
          `tools[${index}] is not a tool; create tools with defineTool()`,
        );
      }
      if (this.#tools.has(tool.name)) {
        throw new ConfigError(
          'tools',
          `two tools are named '${tool.name}'; tool names must be unique`,
        );
      }
      this.#tools.set(tool.name, tool);
    }
  }

  get size(): number {
    return this.#tools.size;
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  get(name: string): AnyTool | undefined {
    return this.#tools.get(name);
  }

  list(): AnyTool[] {
    return [...this.#tools.values()];
  }

  /** What the model is told about these tools, in registration order. */
  specs(): ToolSpec[] {
    return this.list().map((tool) => tool.spec);
  }

  async run(call: ToolCall, options: RunToolOptions = {}): Promise<ToolResult> {
    const tool = this.#tools.get(call.name);
    if (!tool) {
      const available = [...this.#tools.keys()];
      // A call the provider could not even parse (e.g. Gemini's MALFORMED_FUNCTION_CALL) may
      // have no real name: its own error says more than "unknown tool" alone.
      const why = call.argumentsError === undefined ? '' : ` ${call.argumentsError}`;
      return failedToolResult(
        call,
        `Unknown tool '${call.name}'.${why} ${available.length ? `Available tools: ${available.join(', ')}.` : 'No tools are available.'}`,
      );
    }
    return runTool(tool, call, options);
  }
}

/**
 * Runs one tool for one call; never throws but under `invalidToolCall: 'fail'` (see LocalToolRegistry). An abort answers at once
 * with a cancelled result, even when the tool ignores its signal and keeps running: the run
 * must not wait on a tool that does not cooperate. An output JSON cannot carry (a BigInt, a
 * cycle) is made safe here, where it is made (see jsonSafeOutput).
 */
export async function runTool(
  tool: AnyTool,
  call: ToolCall,
  options: RunToolOptions = {},
): Promise<ToolResult> {
  const signal = options.signal ?? NEVER_ABORTED;
  if (signal.aborted)
    return failedToolResult(call, `Tool '${call.name}' was cancelled before it started.`);
  // Under invalidToolCall 'fail' these throw an InvalidToolCallError: the run ends with it.
  if (call.argumentsError !== undefined) {
    const message = `The arguments for tool '${call.name}' are not valid JSON (${call.argumentsError}). Send a JSON object matching the tool's schema.`;
    const text = invalidCallText({ call, problem: 'json', message }, options.invalidToolCall);
    return failedToolResult(call, text);
  }
  const parsed = tool.input.safeParse(call.arguments);
  if (!parsed.success) {
    const message = `Invalid arguments for tool '${call.name}':\n${formatZodError(parsed.error)}`;
    const text = invalidCallText({ call, problem: 'schema', message }, options.invalidToolCall);
    return failedToolResult(call, text);
  }
  try {
    const execution = (async () =>
      tool.execute(parsed.data, {
        signal,
        toolCallId: call.id,
        ...(options.idempotencyKey !== undefined && { idempotencyKey: options.idempotencyKey }),
      }))();
    // Without a caller's signal nothing can cancel the tool: skip the race and its listener.
    const output = options.signal ? await raceAbort(execution, signal) : await execution;
    if (output === ABORTED || signal.aborted)
      return failedToolResult(call, `Tool '${call.name}' was cancelled.`);
    // Images and files returned with the output (toolOutput()) travel beside it.
    if (isToolOutput(output)) {
      const result = {
        toolCallId: call.id,
        name: call.name,
        output: jsonSafeOutput(output.output),
        success: true,
      };
      return output.attachments.length === 0
        ? result
        : { ...result, attachments: output.attachments };
    }
    // A stream's chunks are made safe as they are read; anything else here, once.
    const safe = isAsyncIterable(output) ? output : jsonSafeOutput(output);
    return { toolCallId: call.id, name: call.name, output: safe, success: true };
  } catch (error) {
    if (signal.aborted) return failedToolResult(call, `Tool '${call.name}' was cancelled.`);
    return failedToolResult(call, `Tool '${call.name}' failed: ${describeError(error)}`);
  }
}

function describeError(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
