import { StatecraftError } from '../errors.js';
import { failedToolResult, type ToolCall, type ToolResult } from '../messages.js';
import type { AnyTool } from './define-tool.js';

// SPEC H1 (the seed's before_call / after_call): code of yours around every tool call of a
// run, local or remote, known or not. `beforeToolCall` may cancel a call (the model reads a
// failed result, the tool never runs) or replace its arguments (checked again by the tool's
// schema); `afterToolCall` sees each executed call's result. Hooks set on a chain or tool loop
// apply to each of its runs; hooks passed to one run apply to it, after the chain's.

/** What a hook is told besides the call: the run's signal, and the call's stable key. */
export interface ToolHookContext {
  /** Aborted when the run is cancelled or stops: pass it to what the hook awaits. */
  readonly signal: AbortSignal;
  /** In a durable run, `<runId>:<toolCallId>` (see ToolContext). */
  readonly idempotencyKey?: string;
}

/** What `beforeToolCall` decides: nothing (run the call), cancel it, or new arguments. */
export type BeforeToolCallDecision =
  | undefined
  // biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing (a block body with no `return`) is typed void, not undefined
  | void
  | { readonly cancel: string }
  | { readonly arguments: unknown };

/** Called before every tool call; `tool` is undefined for an unknown or remote tool. */
export type BeforeToolCall = (
  call: ToolCall,
  tool: AnyTool | undefined,
  context: ToolHookContext,
) => BeforeToolCallDecision | Promise<BeforeToolCallDecision>;

/** Called after every executed call (not after one `beforeToolCall` cancelled). */
export type AfterToolCall = (
  call: ToolCall,
  tool: AnyTool | undefined,
  result: ToolResult,
  context: ToolHookContext,
) => void | Promise<void>;

/** The hook options of a chain, a tool loop, or one run. */
export interface ToolCallHooks {
  readonly beforeToolCall?: BeforeToolCall;
  readonly afterToolCall?: AfterToolCall;
}

/** What the hooks did to a call, for details(). */
export interface HookedCall {
  /** The reason `beforeToolCall` gave to cancel it. */
  readonly cancelled?: string;
  /** The arguments `beforeToolCall` put in place of the model's. */
  readonly replacedArguments?: unknown;
}

/**
 * A hook threw (or rejected): the run fails with this error, once the step's other calls have
 * settled, and keeps its partial result. `hook` names which, `callId` the call.
 */
export class ToolHookError extends StatecraftError {
  static override readonly code: string = 'TOOL_HOOK_ERROR';
  readonly hook: 'beforeToolCall' | 'afterToolCall';
  readonly callId: string;
  /** The call's result, when it ran and afterToolCall then threw: the run records it. */
  readonly result: ToolResult | undefined;

  constructor(
    hook: 'beforeToolCall' | 'afterToolCall',
    call: ToolCall,
    cause: unknown,
    result?: ToolResult,
  ) {
    super(
      `${hook} failed for tool call ${call.id} ('${call.name}'): ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.hook = hook;
    this.callId = call.id;
    this.result = result;
  }
}

/** The words a durable run's journal keeps of an afterToolCall failure: its cause's. */
export function hookFailureText(error: ToolHookError): string {
  const { cause } = error;
  return cause instanceof Error ? cause.message : String(cause);
}

/**
 * The afterToolCall failure of a call a durable run's journal holds as finished with one: on
 * resume the call is answered from the journal, and its step fails as it did.
 */
export function journaledHookFailure(
  call: ToolCall,
  text: string,
  result: ToolResult,
): ToolHookError {
  return new ToolHookError('afterToolCall', call, new Error(text), result);
}

/** A run's hooks: the chain's (or loop's) first, then the run's own. */
export class ToolHooks {
  readonly #layers: readonly ToolCallHooks[];

  private constructor(layers: readonly ToolCallHooks[]) {
    this.#layers = layers;
  }

  /** The hooks of a run, or undefined when neither layer has any (no cost per call then). */
  static of(...layers: (ToolCallHooks | undefined)[]): ToolHooks | undefined {
    const set = layers.filter(
      (layer): layer is ToolCallHooks =>
        layer?.beforeToolCall !== undefined || layer?.afterToolCall !== undefined,
    );
    return set.length === 0 ? undefined : new ToolHooks(set);
  }

  /**
   * Runs `call` through the hooks: `execute` is what runs it (with the arguments the hooks
   * leave). Resolves with its result and what the hooks did; rejects with a ToolHookError.
   */
  async around(
    call: ToolCall,
    tool: AnyTool | undefined,
    context: ToolHookContext,
    execute: (call: ToolCall) => Promise<ToolResult>,
  ): Promise<{ readonly result: ToolResult; readonly hooked: HookedCall | undefined }> {
    let current = call;
    let replaced = false;
    for (const { beforeToolCall } of this.#layers) {
      if (!beforeToolCall) continue;
      let decision: BeforeToolCallDecision;
      try {
        decision = await beforeToolCall(current, tool, context);
      } catch (error) {
        throw new ToolHookError('beforeToolCall', call, error);
      }
      if (decision && 'cancel' in decision) {
        const reason = String(decision.cancel);
        return {
          result: failedToolResult(call, `Cancelled: ${reason}`),
          hooked: { cancelled: reason, ...(replaced && { replacedArguments: current.arguments }) },
        };
      }
      if (decision && 'arguments' in decision) {
        // New arguments are the call's now: the tool's schema checks them like the model's.
        const { argumentsError: _none, ...rest } = current;
        current = { ...rest, arguments: decision.arguments as ToolCall['arguments'] };
        replaced = true;
      }
    }
    const result = await execute(current);
    for (const { afterToolCall } of this.#layers) {
      if (!afterToolCall) continue;
      try {
        await afterToolCall(current, tool, result, context);
      } catch (error) {
        throw new ToolHookError('afterToolCall', call, error, result);
      }
    }
    return { result, hooked: replaced ? { replacedArguments: current.arguments } : undefined };
  }
}

/**
 * Settles every call of a step, then rethrows the first hook failure: the calls that were
 * running finish (their results are journaled and recorded) before the run fails.
 */
export async function allCallsSettled<T>(calls: readonly (T | Promise<T>)[]): Promise<T[]> {
  const settled = await Promise.allSettled(calls);
  const failed = settled.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<T>).value);
}
