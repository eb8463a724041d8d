import type { Transcript } from '../transcript.js';
import type { ExperienceMutation } from './mutations.js';
import { BLOCK_TAGS, blockBodies, renderBlock, stripBlocks } from './prompt-blocks.js';

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
 * stored, or empty, is dropped. Without a snapshot, one is read back from the transcript's
 * leading system message (see readSnapshot), so experiences rendered there survive a caller
 * that did not carry the snapshot along.
 */
export function applyExperienceBatch(
  snapshot: SelfRefSnapshot | undefined,
  batch: readonly ExperienceMutation[],
  transcript: Transcript,
): SelfRefSnapshot {
  const base = snapshot ?? readSnapshot(transcript) ?? createSnapshot(transcript);
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

/** A fresh snapshot, taking the leading system message (without rendered blocks) as its base. */
function createSnapshot(transcript: Transcript): SelfRefSnapshot {
  const first = transcript.first;
  if (first?.role !== 'system') return { experiences: [] };
  return { basePrompt: stripBlocks(first.content), experiences: [] };
}

/**
 * The snapshot a compiled system prompt carries, as the seed re-parses its self-reference
 * from the conversation: the leading system message's `<experiences>` block read back, its
 * text without blocks as the base prompt — what createSnapshot would have given, plus the
 * experiences. `undefined` when that message holds no experience, so a prompt without one
 * keeps the ordinary priorities (SPEC P3). Linear in the prompt's length (SPEC Q1).
 */
export function readSnapshot(transcript: Transcript): SelfRefSnapshot | undefined {
  const first = transcript.first;
  if (first?.role !== 'system') return undefined;
  const experiences = blockBodies(first.content, 'experiences').flatMap(parseExperiences);
  if (experiences.length === 0) return undefined;
  return { basePrompt: stripBlocks(first.content), experiences };
}

// Lines after the first of an experience are indented by this, so a line of the text that
// looks like `[3] …` is not read back as an experience of its own.
const CONTINUATION = '  ';

/**
 * The `<experiences>` block of the system prompt: one `[id] text` entry each; the further
 * lines of a multi-line text are indented by two spaces (blank ones stay blank).
 */
export function renderExperiences(experiences: readonly Experience[]): string {
  return renderBlock(
    'experiences',
    experiences.map((e) => `[${e.id}] ${neutralTags(e.text).split('\n').map(indent).join('\n')}`),
  );
}

/**
 * `text` with statecraft's block tags made inert (`<experiences>` → `&lt;experiences>`): an
 * experience is model-written, and one holding `</experiences>` would end its block early, so
 * the experiences after it would be read back as part of the base prompt. split/join: linear.
 */
function neutralTags(text: string): string {
  if (!text.includes('<')) return text;
  let out = text;
  for (const tag of BLOCK_TAGS) {
    out = out.split(`<${tag}>`).join(`&lt;${tag}>`).split(`</${tag}>`).join(`&lt;/${tag}>`);
  }
  return out;
}

function indent(line: string, index: number): string {
  return index === 0 || line === '' ? line : CONTINUATION + line;
}

/**
 * The experiences of one rendered block: a line `[id] text` starts one (id: a safe integer);
 * any other line continues the one before, less the two-space indent renderExperiences adds;
 * lines before the first experience are ignored. Texts are trimmed, as remembered ones are.
 * One pass over the lines, no regex: the block is model-written.
 */
function parseExperiences(body: string): Experience[] {
  const experiences: { id: number; lines: string[] }[] = [];
  for (const line of body.split('\n')) {
    const head = experienceHead(line);
    if (head) {
      experiences.push({ id: head.id, lines: [line.slice(head.textStart)] });
    } else {
      const current = experiences[experiences.length - 1];
      current?.lines.push(line.startsWith(CONTINUATION) ? line.slice(CONTINUATION.length) : line);
    }
  }
  return experiences
    .map((e) => ({ id: e.id, text: e.lines.join('\n').trim() }))
    .filter((e) => e.text !== '');
}

/** The id of a line that starts `[digits] ` and where its text starts; else undefined. */
function experienceHead(line: string): { id: number; textStart: number } | undefined {
  if (line[0] !== '[') return undefined;
  let end = 1;
  while (end < line.length && isDigit(line.charCodeAt(end))) end++;
  if (end === 1 || line[end] !== ']' || line[end + 1] !== ' ') return undefined;
  const id = Number(line.slice(1, end));
  return Number.isSafeInteger(id) ? { id, textStart: end + 2 } : undefined;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}
