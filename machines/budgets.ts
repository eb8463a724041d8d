import { attachmentChars } from '../src/compile/attachment-tokens.js';
import type { PromptContract } from '../src/compile/convert-to-llm-request.js';
import type { ContextMutation } from '../src/compile/mutations.js';
import { costOf, type ModelPrice } from '../src/cost.js';
import type { Message, ToolCall, ToolResult } from '../src/messages.js';
import type { Transcript } from '../src/transcript.js';
import type { Usage } from '../src/usage.js';

// SPEC H3, budgets, as pure functions for the chain's guards: what the next model call will
// probably spend (checked before it is made, as well as after), and how many tool calls a
// run has made. Nothing here waits or does IO.

/** Tokens of text: four characters each, rounded up (a rough rule that holds for English). */
export function estimateTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** What the next call is expected to spend, in tokens. */
export interface CallEstimate {
  readonly inputTokens: number;
  /** The output reserved for it: `maxOutputTokens`, or else the largest output of the run so far. */
  readonly outputTokens: number;
}

export interface EstimateSource {
  /** The run's model calls so far, each with its usage, in order (the chain's steps). */
  readonly steps: readonly { readonly usage: Usage }[];
  /** The transcript as of the last compiled turn. */
  readonly transcript: Transcript;
  /** What the next compile adds to it. */
  readonly pending: readonly ContextMutation[];
  readonly contract: PromptContract;
  /** Texts the next call gets besides these (a note not pending yet). */
  readonly extra?: readonly string[];
  /** The model settings' `maxOutputTokens`, when set. */
  readonly maxOutputTokens?: number | undefined;
}

/**
 * The next call's tokens, before it is compiled. Input: the previous call's input tokens (as
 * the provider counted them) plus chars/4 of what was added since, from that call's answer
 * on; with no previous call, or none that reported input, chars/4 of the whole conversation
 * and the prompt's own texts (tool definitions are not counted: the machine does not see
 * them). Output: `maxOutputTokens` when set, else the largest output of the run so far
 * (nothing before the first call).
 */
export function nextCallEstimate(source: EstimateSource): CallEstimate {
  let largestOutput = 0;
  for (const step of source.steps) largestOutput = Math.max(largestOutput, step.usage.outputTokens);
  const outputTokens = source.maxOutputTokens ?? largestOutput;
  const extra = (source.extra ?? []).reduce((sum, text) => sum + text.length, 0);
  const previous = source.steps.at(-1)?.usage.inputTokens ?? 0;
  const added = previous > 0 ? charsSinceLastAnswer(source.transcript, source.pending) : undefined;
  if (added !== undefined) {
    return { inputTokens: previous + estimateTokens(added + extra), outputTokens };
  }
  let chars = extra + contractChars(source.contract);
  for (let i = 0; i < source.transcript.length; i++) {
    chars += messageChars(source.transcript.at(i) as Message);
  }
  for (const mutation of source.pending) chars += mutationChars(mutation) ?? 0;
  return { inputTokens: estimateTokens(chars), outputTokens };
}

/**
 * Characters added since the last answer, that answer included: the pending mutations and then
 * the transcript, read backwards to the last assistant message. Undefined when a mutation
 * replaces the conversation (a summary): then nothing before it can be trusted.
 */
function charsSinceLastAnswer(
  transcript: Transcript,
  pending: readonly ContextMutation[],
): number | undefined {
  let chars = 0;
  for (let i = pending.length - 1; i >= 0; i--) {
    const mutation = pending[i] as ContextMutation;
    const size = mutationChars(mutation);
    if (size === undefined) return undefined;
    chars += size;
    if (mutation.type === 'assistantMessage' || mutation.type === 'assistantTruncated') {
      return chars;
    }
  }
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript.at(i) as Message;
    chars += messageChars(message);
    if (message.role === 'assistant') return chars;
  }
  return chars;
}

function callsChars(calls: readonly ToolCall[]): number {
  let chars = 0;
  for (const call of calls) chars += call.name.length + jsonChars(call.arguments);
  return chars;
}

function resultChars(result: ToolResult): number {
  const output = result.success ? result.output : result.error;
  return (
    result.name.length +
    (typeof output === 'string' ? output.length : jsonChars(output)) +
    attachmentChars(result.attachments)
  );
}

/** The characters a message sends. */
export function messageChars(message: Message): number {
  switch (message.role) {
    case 'assistant':
      return message.content.length + callsChars(message.toolCalls);
    case 'tool':
      return resultChars(message);
    case 'user':
      return message.content.length + attachmentChars(message.attachments);
    default:
      return message.content.length;
  }
}

/** The characters a mutation adds; undefined for one that replaces the conversation. */
export function mutationChars(mutation: ContextMutation): number | undefined {
  switch (mutation.type) {
    case 'assistantMessage':
      return mutation.content.length + callsChars(mutation.toolCalls);
    case 'toolResult':
      return resultChars(mutation.result);
    case 'toolCancelled':
      return mutation.toolName.length + (mutation.reason?.length ?? 0);
    case 'userMessage':
      return mutation.content.length + attachmentChars(mutation.attachments);
    case 'systemNote':
    case 'assistantTruncated':
      return mutation.content.length;
    case 'experienceRemember':
      return mutation.text.length;
    case 'experienceForget':
      return 0;
    case 'contextReplace':
    case 'contextSummary':
      return undefined;
  }
}

function contractChars(contract: PromptContract): number {
  let chars = (contract.systemPrompt ?? contract.baseInstruction ?? '').length;
  for (const principle of contract.mustPrinciples ?? []) chars += principle.length;
  for (const tool of contract.tools ?? []) {
    chars += tool.name.length + (tool.description?.length ?? 0);
    for (const practice of tool.bestPractices ?? []) chars += practice.length;
  }
  return chars;
}

/** JSON's length of a value; never throws (a value JSON cannot hold counts as its text). */
function jsonChars(value: unknown): number {
  try {
    return (JSON.stringify(value) ?? '').length;
  } catch {
    return String(value).length;
  }
}

/** Tool calls the run has handed to its tools so far: every call of every step that ran tools. */
export function toolCallsMade(
  steps: readonly { readonly toolResults: readonly unknown[] }[],
): number {
  let calls = 0;
  for (const step of steps) calls += step.toolResults.length;
  return calls;
}

/** SPEC H3: `requested` more calls would take the run past `maxToolCalls` (undefined: no limit). */
export function isOverToolCallBudget(
  made: number,
  requested: number,
  maxToolCalls: number | undefined,
): boolean {
  return maxToolCalls !== undefined && made + requested > maxToolCalls;
}

/** The budgets a model call is checked against, before it is made and after. */
export interface CallBudgets {
  readonly maxTokens: number;
  /** US dollars; checked only with `prices`. */
  readonly maxCost?: number | undefined;
  readonly prices?: ModelPrice | undefined;
}

/** What `usage` cost, in US dollars; undefined without prices. */
export function runCost(usage: Usage, prices: ModelPrice | undefined): number | undefined {
  return prices ? costOf(usage, prices) : undefined;
}

/** The tokens of an estimate as a Usage, priced as input that is not cached. */
export function estimateUsage(estimate: CallEstimate): Usage {
  return {
    inputTokens: estimate.inputTokens,
    outputTokens: estimate.outputTokens,
    totalTokens: estimate.inputTokens + estimate.outputTokens,
  };
}

/**
 * The budget a call of `estimate` would cross, spent `usage` so far: none left (spent all of
 * it), or spent plus the estimate over it. Tokens are checked first. Undefined: it fits.
 */
export function budgetCrossed(
  usage: Usage,
  estimate: CallEstimate,
  budgets: CallBudgets,
): 'maxTokens' | 'maxCost' | undefined {
  const next = estimateUsage(estimate);
  if (
    usage.totalTokens >= budgets.maxTokens ||
    usage.totalTokens + next.totalTokens > budgets.maxTokens
  ) {
    return 'maxTokens';
  }
  const { maxCost, prices } = budgets;
  if (maxCost === undefined || !prices) return undefined;
  const spent = costOf(usage, prices);
  return spent >= maxCost || spent + costOf(next, prices) > maxCost ? 'maxCost' : undefined;
}

/** Over the cost budget once `usage` is spent: strictly more than `maxCost`. */
export function isOverCostLimit(usage: Usage, budgets: CallBudgets): boolean {
  const { maxCost, prices } = budgets;
  return maxCost !== undefined && prices !== undefined && costOf(usage, prices) > maxCost;
}
