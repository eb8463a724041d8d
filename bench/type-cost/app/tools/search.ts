import { defineTool } from 'statecraft';
import { z } from 'zod';

const Filter = z.object({
  field: z.enum(['title', 'body', 'author', 'date']),
  op: z.enum(['eq', 'contains', 'before', 'after']),
  value: z.union([z.string(), z.number()]),
});

export const search = defineTool({
  name: 'search',
  description: 'Searches the knowledge base.',
  input: z.object({
    query: z.string().min(1),
    filters: z.array(Filter).max(5).optional(),
    page: z.object({ size: z.number().int(), cursor: z.string().nullable() }).optional(),
  }),
  execute: ({ query, filters }) => [{ id: 'doc-1', title: query, score: filters?.length ?? 0 }],
});

export const fetchDocument = defineTool({
  name: 'fetch_document',
  description: 'Fetches one document by id.',
  input: z.object({ id: z.string(), sections: z.array(z.string()).default([]) }),
  execute: ({ id, sections }) => ({ id, sections, body: '' }),
});
