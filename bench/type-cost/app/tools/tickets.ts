import { defineTool } from 'statecraft';
import { z } from 'zod';

export const createTicket = defineTool({
  name: 'create_ticket',
  description: 'Opens a support ticket.',
  input: z.object({
    customer: z.object({
      id: z.string(),
      plan: z.enum(['free', 'pro', 'enterprise']),
      contact: z.object({ email: z.email(), phone: z.string().optional() }),
    }),
    priority: z.enum(['low', 'normal', 'high', 'urgent']),
    tags: z.array(z.string()).max(10),
    body: z.string(),
  }),
  returnDirect: false,
  execute: ({ customer, priority, tags }) => ({
    ticket: `${customer.id}-${priority}`,
    tagCount: tags.length,
  }),
});

export const refund = defineTool({
  name: 'refund',
  description: 'Refunds an order.',
  input: z.object({
    orderId: z.string(),
    amount: z.object({ cents: z.number().int(), currency: z.enum(['EUR', 'USD']) }),
    reason: z.string().max(200),
  }),
  needsApproval: true,
  execute: async ({ orderId, amount }, { idempotencyKey }) => ({
    orderId,
    refunded: amount.cents,
    key: idempotencyKey ?? null,
  }),
});
