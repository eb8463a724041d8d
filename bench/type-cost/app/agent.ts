import { createChain, createToolLoop, type LanguageModel } from 'statecraft';
import { z } from 'zod';
import { createEvent } from './tools/calendar.js';
import { readFile, writeFile } from './tools/files.js';
import { fetchDocument, search } from './tools/search.js';
import { createTicket, refund } from './tools/tickets.js';

export const tools = [
  readFile,
  writeFile,
  search,
  fetchDocument,
  createEvent,
  createTicket,
  refund,
];

export const Triage = z.object({
  category: z.enum(['billing', 'bug', 'question']),
  summary: z.string(),
  actions: z.array(z.object({ tool: z.string(), why: z.string() })),
  customer: z.object({ id: z.string(), sentiment: z.number().min(-1).max(1) }).nullable(),
});

export function agents(model: LanguageModel) {
  const triage = createChain({ model, tools, outputSchema: Triage, maxIterations: 8 });
  const loop = createToolLoop({ model, tools, maxRounds: 3 });
  const answer = createChain({ model, tools: [search, fetchDocument] });
  return { triage, loop, answer };
}
