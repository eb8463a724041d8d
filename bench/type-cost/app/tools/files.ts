import { defineTool } from 'statecraft';
import { z } from 'zod';

export const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a text file.',
  input: z.object({
    path: z.string(),
    options: z
      .object({ encoding: z.enum(['utf8', 'latin1']), maxBytes: z.number().int().positive() })
      .partial()
      .optional(),
  }),
  execute: ({ path, options }) => ({ path, bytes: options?.maxBytes ?? 0, text: '' }),
});

export const writeFile = defineTool({
  name: 'write_file',
  description: 'Writes a text file.',
  input: z.object({
    path: z.string(),
    content: z.string(),
    mode: z.object({ append: z.boolean(), createDirs: z.boolean().default(false) }),
  }),
  needsApproval: ({ path }) => path.startsWith('/etc'),
  execute: async ({ path, content, mode }) => ({
    path,
    written: content.length,
    appended: mode.append,
  }),
});
