import { ConfigError } from '../src/errors.js';
import type { ToolResult } from '../src/messages.js';
import { responseText } from '../src/model/language-model.js';
import { answersOpenCall } from './chain-steps.js';
import type { ChainArgs, ExecuteToolsOutput, ValidationOutcome } from './chain-types.js';
import { directReturn } from './early-stopping.js';

// What the effects answered, as the chain's guards read it: the model's response or error, a
// tool call's result, a tool step's results, a validation. Each function is the guard of the
// same name. Pure.

type ContextArgs = Pick<ChainArgs, 'context'>;

/** The response being decided on asks for tools: this event's, or the recorded one. */
export function hasToolCalls({ context, event }: ChainArgs): boolean {
  // Checked without building the call list: guards run on every model answer.
  return event.type === 'callModel.done'
    ? event.output.content.some((part) => part.type === 'tool-call')
    : context.toolCalls.length > 0;
}

/** The final call answered with text: an answer to validate. */
export function hasAnswerText({ event }: ChainArgs): boolean {
  return event.type === 'callModel.done' && responseText(event.output).trim() !== '';
}

/**
 * The call could not be made as configured (a remote tool named like a local one): the run
 * fails with the configuration's error, not the provider's.
 */
export function isConfigurationError({ event }: ChainArgs): boolean {
  return event.type === 'callModel.error' && ConfigError.isInstance(event.error);
}

/** A result counts once, for a call of the step in progress. */
export function isOpenCallResult(
  { context }: ContextArgs,
  params: { result: ToolResult },
): boolean {
  return answersOpenCall(context, params.result);
}

/**
 * The step's single successful call of a returnDirect tool ends the run with its output. A
 * blocked duplicate has no result here, and its warning is no answer: it never returns.
 */
export function isDirectReturn(
  { context }: ContextArgs,
  params: { output: ExecuteToolsOutput },
): boolean {
  const { toolCalls, config } = context;
  return directReturn(toolCalls, params.output.results, config.returnDirectTools) !== undefined;
}

/** The answer passed structured output and validateResult. */
export function canSucceed(_: unknown, params: { outcome: ValidationOutcome }): boolean {
  return params.outcome.ok;
}
