import type { Transcript } from '../transcript.js';
import { readSnapshot, type SelfRefSnapshot } from './experiences.js';
import { joinSections, renderBlock } from './prompt-blocks.js';
import type { ReducedTurnContext } from './reduce-turn-context.js';
import {
  placeSystemMessage,
  resolveSystemPrompt,
  type SystemPromptSources,
} from './system-prompt.js';

/** The principle added when tools are mounted, unless `mustPrinciples` says otherwise. */
export const NATIVE_TOOL_CALLING_PRINCIPLE =
  'Call tools only through the native tool-calling interface; never write a tool call as text.';

/** A tool as the prompt sees it: any `Tool` from defineTool fits. */
export interface PromptTool {
  readonly name: string;
  /** What the tool is for: the `<use>` line above its best practices. */
  readonly description?: string;
  /** Advice rendered into the `<tool_best_practices>` block (deduplicated, see below). */
  readonly bestPractices?: readonly string[];
}

/** What a turn's caller promises about its prompt (the seed's prompt contract). */
export interface PromptContract extends SystemPromptSources {
  /** Tools mounted for this turn; their best practices are rendered into the system prompt. */
  readonly tools?: readonly PromptTool[];
  /**
   * Rules the model must follow, rendered as a `<must_principles>` block at the end of the
   * system prompt. Default: the native tool-calling principle when tools are mounted; `[]`
   * renders none.
   */
  readonly mustPrinciples?: readonly string[];
}

export interface CompiledTurnContext {
  /** The transcript with the resolved system prompt placed (without rendered tool blocks). */
  readonly transcript: Transcript;
  /** The resolved system prompt; `undefined` when none is sent. */
  readonly systemPrompt: string | undefined;
  /**
   * The messages to send: `transcript` with the tool best-practices block rendered before the
   * system prompt and the must-principles block after it.
   */
  readonly messages: Transcript;
  /** The snapshot given, or the one read back from the transcript's system prompt. */
  readonly snapshot: SelfRefSnapshot | undefined;
}

/**
 * Stage 2 of compiling a turn: resolves the system prompt, places it in the transcript, and
 * renders the final messages for the provider. Pure, and idempotent: compiling its own
 * output again yields the same messages.
 * Without a snapshot, one is read back from experiences rendered in the transcript's system
 * prompt (SPEC P3), so a caller that keeps only the transcript keeps them too.
 */
export function convertToLlmRequest(
  reduced: ReducedTurnContext,
  contract: PromptContract = {},
): CompiledTurnContext {
  const snapshot = reduced.snapshot ?? readSnapshot(reduced.transcript);
  const systemPrompt = resolveSystemPrompt(reduced.transcript, snapshot, contract) || undefined;
  const transcript = placeSystemMessage(reduced.transcript, systemPrompt);
  const blocks = toolBlocks(contract);
  // Best practices lead the prompt and principles close it, as the seed renders them.
  const rendered = joinSections(blocks.practices, systemPrompt ?? '', blocks.principles);
  const messages = placeSystemMessage(transcript, rendered);
  return { transcript, systemPrompt, messages, snapshot };
}

// Rendering the blocks costs more than the rest of a compile; a frozen contract (createChain
// freezes its own) cannot change, so its blocks are rendered once.
const renderedBlocks = new WeakMap<PromptContract, { practices: string; principles: string }>();

function toolBlocks(contract: PromptContract): { practices: string; principles: string } {
  const frozen = Object.isFrozen(contract) && (!contract.tools || Object.isFrozen(contract.tools));
  if (!frozen) return renderToolBlocks(contract);
  let blocks = renderedBlocks.get(contract);
  if (!blocks) {
    blocks = renderToolBlocks(contract);
    renderedBlocks.set(contract, blocks);
  }
  return blocks;
}

function renderToolBlocks(contract: PromptContract): { practices: string; principles: string } {
  const tools = contract.tools ?? [];
  const principles =
    contract.mustPrinciples ?? (tools.length ? [NATIVE_TOOL_CALLING_PRINCIPLE] : []);
  return {
    practices: renderBlock('tool_best_practices', tools.flatMap(toolLines)),
    principles: renderBlock(
      'must_principles',
      principles.map((p) => `- ${p}`),
    ),
  };
}

/**
 * One tool's lines of the best-practices block: its description as a `<use tool="name">` line,
 * then `- name: practice` for each practice (each line names its tool, so a line read alone
 * still says what it is about). A tool left without practices gets no lines: its description
 * already reaches the model in the tool's spec.
 */
function toolLines(tool: PromptTool): string[] {
  const description = tool.description?.trim() ?? '';
  const practices = distinctPractices(tool.bestPractices ?? [], description);
  if (practices.length === 0) return [];
  const lines = practices.map((p) => `- ${tool.name}: ${p}`);
  return description ? [`<use tool="${tool.name}">${description}</use>`, ...lines] : lines;
}

/**
 * The practices worth rendering, trimmed, in order: empty ones, repeats of an earlier one and
 * ones that only repeat the description are dropped. "Repeat" compares the normalized texts
 * (see sameText), so a copy that differs only in spacing, case or a final period still counts.
 */
function distinctPractices(practices: readonly string[], description: string): string[] {
  const seen = new Set<string>([sameText(description)]);
  const kept: string[] = [];
  for (const practice of practices) {
    const key = sameText(practice);
    if (key === '' || seen.has(key)) continue;
    seen.add(key);
    kept.push(practice.trim());
  }
  return kept;
}

/**
 * The comparison key of a prompt text: trimmed, every whitespace run one space, lower case,
 * without trailing periods. `\s+` matches a run once and never backtracks: linear.
 */
function sameText(text: string): string {
  const key = text.trim().split(/\s+/).join(' ').toLowerCase();
  let end = key.length;
  while (end > 0 && key[end - 1] === '.') end--;
  return key.slice(0, end);
}
