// Tagged blocks rendered into the system prompt. Each is stripped before it is rendered
// again, so compiling a prompt that already holds them (a transcript that went through
// compileTurn before) yields the same text instead of a second copy. The experiences block
// is also read back (see experiences.ts), so finding and stripping share one scan: the block
// read back is exactly the block stripped.

export const BLOCK_TAGS = ['experiences', 'tool_best_practices', 'must_principles'] as const;
export type BlockTag = (typeof BLOCK_TAGS)[number];

/** One block found in a prompt, by offsets into it. */
interface FoundBlock {
  readonly tag: BlockTag;
  /** Where the text between `<tag>` and `</tag>` starts and ends. */
  readonly bodyStart: number;
  readonly bodyEnd: number;
  /** The block with the whitespace around it, never reaching back before the previous block. */
  readonly start: number;
  readonly end: number;
}

/**
 * Every block of `text`, in order. A scan rather than the regex
 * `\s*<(tags)>[\s\S]*?</\1>\s*`, which backtracks quadratically over a long run of
 * whitespace or over openings that never close (system prompts hold model-written experiences,
 * SPEC Q1). Same result: the leftmost opening that has a closing wins, up to its first closing.
 */
function findBlocks(text: string): FoundBlock[] {
  const next = new Map<BlockTag, number>(); // where each tag next opens at or after `from`; -1: never
  const blocks: FoundBlock[] = [];
  let from = 0; // where the text not yet covered by a block starts
  for (;;) {
    let tag: BlockTag | undefined;
    let open = -1;
    for (const candidate of BLOCK_TAGS) {
      let at = next.get(candidate);
      if (at === undefined || (at >= 0 && at < from)) {
        at = text.indexOf(`<${candidate}>`, from);
        next.set(candidate, at);
      }
      if (at >= 0 && (open < 0 || at < open)) {
        open = at;
        tag = candidate;
      }
    }
    if (tag === undefined) return blocks;
    const closing = `</${tag}>`;
    const bodyStart = open + tag.length + 2;
    const close = text.indexOf(closing, bodyStart);
    if (close < 0) {
      // No closing after this opening, so none after any later opening of the tag either.
      next.set(tag, -1);
      continue;
    }
    let start = open;
    while (start > from && isSpace(text[start - 1] as string)) start--;
    let end = close + closing.length;
    while (end < text.length && isSpace(text[end] as string)) end++;
    blocks.push({ tag, bodyStart, bodyEnd: close, start, end });
    from = end;
  }
}

/**
 * `text` without any block statecraft rendered into it, trimmed: each `<tag>…</tag>` with the
 * whitespace around it becomes a blank line.
 */
export function stripBlocks(text: string): string {
  const parts: string[] = [];
  let from = 0;
  for (const block of findBlocks(text)) {
    parts.push(text.slice(from, block.start), '\n\n');
    from = block.end;
  }
  parts.push(text.slice(from));
  return parts.join('').trim();
}

/** What stands between `<tag>` and `</tag>` in each block of `tag` that stripBlocks removes. */
export function blockBodies(text: string, tag: BlockTag): string[] {
  // Most prompts hold no block of this tag: skip the scan for them.
  if (!text.includes(`<${tag}>`)) return [];
  return findBlocks(text)
    .filter((block) => block.tag === tag)
    .map((block) => text.slice(block.bodyStart, block.bodyEnd));
}

const SPACE = /\s/;

/** One character of regex `\s`, tested alone: linear however long the run. */
function isSpace(char: string): boolean {
  return SPACE.test(char);
}

/** One block: `<tag>`, the lines, `</tag>`; nothing when there are no lines. */
export function renderBlock(tag: BlockTag, lines: readonly string[]): string {
  if (lines.length === 0) return '';
  return `<${tag}>\n${lines.join('\n')}\n</${tag}>`;
}

/** Joins prompt sections with a blank line, skipping empty ones. */
export function joinSections(...sections: readonly string[]): string {
  return sections.filter((section) => section.trim() !== '').join('\n\n');
}
