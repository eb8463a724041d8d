import { StatecraftError, type StatecraftErrorOptions } from '../errors.js';
import type { ToolCall } from '../messages.js';

// SPEC H4 (LangChain's `handle_parsing_errors`): what happens when a call's arguments are not
// valid JSON or fail the tool's schema. By default the model reads what was wrong and can
// correct it ('return-to-model'); 'fail' ends the run; a string is what the model reads
// instead; a function words it from the problem.

/** A call whose arguments could not be used, as `invalidToolCall` is told of it. */
export interface InvalidToolCall {
  readonly call: ToolCall;
  /** `json`: the arguments are not valid JSON; `schema`: they fail the tool's input schema. */
  readonly problem: 'json' | 'schema';
  /** What the model reads by default, e.g. "Invalid arguments for tool 'add': …". */
  readonly message: string;
}

export type InvalidToolCallPolicy =
  | 'return-to-model'
  | 'fail'
  | string
  | ((invalid: InvalidToolCall) => string);

/** The run ends with this (as a ChainError's cause) under `invalidToolCall: 'fail'`. */
export class InvalidToolCallError extends StatecraftError {
  static override readonly code: string = 'INVALID_TOOL_CALL';
  readonly callId: string;
  readonly toolName: string;
  readonly problem: 'json' | 'schema';

  constructor(invalid: InvalidToolCall, options?: StatecraftErrorOptions) {
    super(invalid.message, options);
    this.callId = invalid.call.id;
    this.toolName = invalid.call.name;
    this.problem = invalid.problem;
  }
}

/** The text the model reads for `invalid` under `policy`; throws InvalidToolCallError for 'fail'. */
export function invalidCallText(
  invalid: InvalidToolCall,
  policy: InvalidToolCallPolicy | undefined,
): string {
  if (policy === undefined || policy === 'return-to-model') return invalid.message;
  if (policy === 'fail') throw new InvalidToolCallError(invalid);
  if (typeof policy === 'function') return String(policy(invalid));
  return policy;
}

/** Reports what is wrong with an `invalidToolCall` option; undefined when it is fine. */
export function invalidToolCallProblem(policy: unknown): string | undefined {
  if (policy === undefined || typeof policy === 'string' || typeof policy === 'function') {
    return undefined;
  }
  return "must be 'return-to-model', 'fail', a string the model reads, or a function (invalid) => string";
}
