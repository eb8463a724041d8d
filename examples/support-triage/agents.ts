// The three agents the triage machine invokes, on whatever models it is given: a
// classification chain with structured output, a research tool loop over an in-memory
// order book and knowledge base, and a drafting chain.
import { createChain, createToolLoop, defineTool, type LanguageModel } from 'statecraft';
import { z } from 'zod';
import { type TriageAgents, triageSchema } from './machine.js';

interface Order {
  readonly customer: string;
  readonly plan: string;
  readonly charges: readonly { readonly id: string; readonly date: string; readonly usd: number }[];
}

const orders: Readonly<Record<string, Order>> = {
  'A-1043': {
    customer: 'dana@example.com',
    plan: 'Pro monthly',
    charges: [
      { id: 'ch_881', date: '2025-03-01', usd: 29 },
      { id: 'ch_882', date: '2025-03-01', usd: 29 },
    ],
  },
};

const articles = [
  {
    id: 'KB-12',
    title: 'Duplicate charges',
    tags: ['charged', 'twice', 'duplicate', 'refund', 'charge'],
    text: 'A duplicate charge is refunded to the original card; the refund arrives within 5-7 business days.',
  },
  {
    id: 'KB-7',
    title: 'Exporting your data',
    tags: ['export', 'csv', 'download', 'data'],
    text: 'Settings > Data > Export writes every project to a CSV file.',
  },
  {
    id: 'KB-3',
    title: 'Resetting a password',
    tags: ['password', 'reset', 'login'],
    text: 'Use "Forgot password" on the sign-in page; the link is valid for one hour.',
  },
];

export const supportTools = [
  defineTool({
    name: 'lookup_order',
    description: 'Looks an order up by its id: customer, plan and every charge.',
    input: z.object({ orderId: z.string() }),
    // An unknown id throws: the loop records it as a failed result the planner sees (SPEC T6).
    execute: ({ orderId }) => {
      const order = orders[orderId];
      if (!order) throw new Error(`No order ${orderId}`);
      return { orderId, ...order };
    },
  }),
  defineTool({
    name: 'search_kb',
    description: 'Searches the knowledge base; returns the ids and titles of matching articles.',
    input: z.object({ query: z.string() }),
    execute: ({ query }) => {
      const words = query.toLowerCase().split(/\W+/);
      return articles
        .map((a) => ({ id: a.id, title: a.title, hits: a.tags.filter((t) => words.includes(t)) }))
        .filter((a) => a.hits.length > 0)
        .sort((a, b) => b.hits.length - a.hits.length)
        .map(({ id, title }) => ({ id, title }));
    },
  }),
  defineTool({
    name: 'read_article',
    description: 'Reads a knowledge-base article by its id.',
    input: z.object({ id: z.string() }),
    execute: ({ id }) => {
      const article = articles.find((a) => a.id === id);
      if (!article) throw new Error(`No article ${id}`);
      return `${article.title}: ${article.text}`;
    },
  }),
];

export interface TriageModels {
  readonly classifier: LanguageModel;
  readonly researcher: LanguageModel;
  readonly writer: LanguageModel;
}

export function createTriageAgents({ classifier, researcher, writer }: TriageModels): TriageAgents {
  return {
    classify: createChain({
      model: classifier,
      systemPrompt:
        'Classify the support ticket: its category, its urgency, and a one-sentence summary.',
      outputSchema: triageSchema,
      // A model that cannot produce a valid triage in three tries goes to a person.
      maxIterations: 3,
    }),
    // The researcher plans each round (the default model planner) and writes the findings.
    research: createToolLoop({ model: researcher, tools: supportTools, maxRounds: 3 }),
    // SPEC C9: the reply is cached under `reply` next to the classification's fields.
    draft: createChain({ model: writer, resultCacheKey: 'reply', maxIterations: 2 }),
  };
}
