import { type Message, systemMessage } from '../messages.js';
import type { Transcript } from '../transcript.js';
import { renderExperiences, type SelfRefSnapshot } from './experiences.js';
import { joinSections, stripBlocks } from './prompt-blocks.js';

/** Where a turn's system prompt may come from (SPEC P3). */
export interface SystemPromptSources {
  /** Set explicitly by the caller; wins over the transcript's own, even when it is "". */
  readonly systemPrompt?: string;
  /** The fallback when nothing else gives a prompt (the seed's docstring). */
  readonly baseInstruction?: string;
}

/**
 * The system prompt for this turn, by priority: the self-reference snapshot (its base prompt
 * and the experiences block) > the explicit `systemPrompt` (even "") > the transcript's
 * leading system message > `baseInstruction`. `undefined` or "" means: send none.
 * A snapshot without a base prompt of its own builds on what the lower priorities give.
 * convertToLlmRequest passes the snapshot it was given, or the one it read back from
 * experiences rendered in the transcript's system message (which therefore wins too).
 */
export function resolveSystemPrompt(
  transcript: Transcript,
  snapshot: SelfRefSnapshot | undefined,
  sources: SystemPromptSources,
): string | undefined {
  if (!snapshot) return resolveWithoutSnapshot(transcript, sources);
  const base = snapshot.basePrompt ?? resolveWithoutSnapshot(transcript, sources) ?? '';
  return joinSections(base, renderExperiences(snapshot.experiences));
}

function resolveWithoutSnapshot(
  transcript: Transcript,
  sources: SystemPromptSources,
): string | undefined {
  if (sources.systemPrompt !== undefined) return sources.systemPrompt;
  const first = transcript.first;
  if (first?.role === 'system') return stripBlocks(first.content);
  return sources.baseInstruction;
}

/**
 * The transcript with `prompt` as its leading system message: an existing one is replaced,
 * otherwise one is inserted; an empty or missing prompt removes it. O(1): see Transcript.
 */
export function placeSystemMessage(transcript: Transcript, prompt: string | undefined): Transcript {
  const first: Message | undefined = transcript.first;
  const rest = first?.role === 'system' ? transcript.dropFirst() : transcript;
  if (!prompt) return rest;
  if (first?.role === 'system' && first.content === prompt) return transcript;
  return rest.prepend(systemMessage(prompt));
}
