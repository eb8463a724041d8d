import type { Transcript } from '../transcript.js';
import type { ExperienceMutation } from './mutations.js';
import { renderBlock, stripBlocks } from './prompt-blocks.js';

/** A lesson the agent keeps across compactions, shown to the model in its system prompt. */
export interface Experience {
  readonly id: number;
  readonly text: string;
}

/**
 * The agent's persistent self-description (the seed's self-reference): the system prompt it
 * started from and the experiences it has accumulated. When present it decides the system
 * prompt (SPEC P3). Plain JSON.
 */
export interface SelfRefSnapshot {
  readonly basePrompt?: string;
  readonly experiences: readonly Experience[];
}

/**
 * Applies one batch of experience mutations: all forgets first, then the remembers, whose ids
 * continue from the highest id that remains. A remember whose text (trimmed) is already
 * stored, or empty, is dropped. A snapshot is created on first use, taking the transcript's
 * leading system message (without rendered blocks) as its base prompt.
 */
export function applyExperienceBatch(
  snapshot: SelfRefSnapshot | undefined,
  batch: readonly ExperienceMutation[],
  transcript: Transcript,
): SelfRefSnapshot {
  const base = snapshot ?? createSnapshot(transcript);
  const forgotten = new Set<number>();
  for (const m of batch) if (m.type === 'experienceForget') forgotten.add(m.id);
  const experiences = base.experiences.filter((e) => !forgotten.has(e.id));
  let nextId = experiences.reduce((max, e) => Math.max(max, e.id), 0) + 1;
  const known = new Set(experiences.map((e) => e.text));
  for (const m of batch) {
    if (m.type !== 'experienceRemember') continue;
    const text = m.text.trim();
    if (!text || known.has(text)) continue;
    known.add(text);
    experiences.push({ id: nextId++, text });
  }
  return base.basePrompt === undefined
    ? { experiences }
    : { basePrompt: base.basePrompt, experiences };
}

function createSnapshot(transcript: Transcript): SelfRefSnapshot {
  const first = transcript.first;
  if (first?.role !== 'system') return { experiences: [] };
  return { basePrompt: stripBlocks(first.content), experiences: [] };
}

/** The `<experiences>` block of the system prompt: one `[id] text` line each. */
export function renderExperiences(experiences: readonly Experience[]): string {
  return renderBlock(
    'experiences',
    experiences.map((e) => `[${e.id}] ${e.text}`),
  );
}
