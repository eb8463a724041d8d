import type { Transcript } from '../transcript.js';
import type { SelfRefSnapshot } from './experiences.js';
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

/** What a turn's caller promises about its prompt (the seed's prompt contract). */
export interface PromptContract extends SystemPromptSources {
  /** Tools mounted for this turn; their `bestPractices` are rendered into the system prompt. */
  readonly tools?: readonly { readonly name: string; readonly bestPractices?: readonly string[] }[];
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
  readonly snapshot: SelfRefSnapshot | undefined;
}

/**
 * Stage 2 of compiling a turn: resolves the system prompt, places it in the transcript, and
 * renders the final messages for the provider. Pure, and idempotent: compiling its own
 * output again yields the same messages.
 */
export function convertToLlmRequest(
  reduced: ReducedTurnContext,
  contract: PromptContract = {},
): CompiledTurnContext {
  const systemPrompt =
    resolveSystemPrompt(reduced.transcript, reduced.snapshot, contract) || undefined;
  const transcript = placeSystemMessage(reduced.transcript, systemPrompt);
  const blocks = toolBlocks(contract);
  // Best practices lead the prompt and principles close it, as the seed renders them.
  const rendered = joinSections(blocks.practices, systemPrompt ?? '', blocks.principles);
  const messages = placeSystemMessage(transcript, rendered);
  return { transcript, systemPrompt, messages, snapshot: reduced.snapshot };
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
  const practices = tools.flatMap((tool) =>
    (tool.bestPractices ?? []).map((p) => `- ${tool.name}: ${p}`),
  );
  const principles =
    contract.mustPrinciples ?? (tools.length ? [NATIVE_TOOL_CALLING_PRINCIPLE] : []);
  return {
    practices: renderBlock('tool_best_practices', practices),
    principles: renderBlock(
      'must_principles',
      principles.map((p) => `- ${p}`),
    ),
  };
}
