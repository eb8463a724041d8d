import { defineTool } from 'statecraft';
import { vi } from 'vitest';
import { z } from 'zod';

/** A `search` tool whose calls are counted, shared by the tool-loop tests. */
export function searchTool() {
  const execute = vi.fn(({ q }: { q: string }) => `results for ${q}`);
  const tool = defineTool({
    name: 'search',
    description: 'Searches the web.',
    input: z.object({ q: z.string() }),
    execute,
  });
  return { tool, execute };
}
