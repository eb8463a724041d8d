// Tagged blocks rendered into the system prompt. Each is stripped before it is rendered
// again, so compiling a prompt that already holds them (a transcript that went through
// compileTurn before) yields the same text instead of a second copy.

export const BLOCK_TAGS = ['experiences', 'tool_best_practices', 'must_principles'] as const;
export type BlockTag = (typeof BLOCK_TAGS)[number];

const BLOCK_PATTERN = new RegExp(`\\s*<(${BLOCK_TAGS.join('|')})>[\\s\\S]*?</\\1>\\s*`, 'g');

/** `text` without any block statecraft rendered into it, trimmed. */
export function stripBlocks(text: string): string {
  return text.replace(BLOCK_PATTERN, '\n\n').trim();
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
