// SPEC H2 / X1: a durable run with approvals, crashed after every journal entry and resumed,
// ends as the uncrashed run did, with the same journal: the requests, decisions (from the
// approve callback, or a deadline that rejects or fails the run) and the calls around them
// replay; a decided call is not asked about again and no finished call runs again.
import { type ApproveCallback, createChain, defineTool, memoryStore } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { storeWithPrefix, turnModel } from './helpers.js';

type Options = { approvalTimeoutMs?: number; onApprovalTimeout?: 'fail' };

function chainOf(ran: string[], options: Options) {
  // With deadlines that fail the run, which of two calls waiting alike fails it first is a
  // race: there only one call waits.
  const waits = (table: string) =>
    options.onApprovalTimeout === 'fail' ? table === 'users' : table !== 'scratch';
  const drop = defineTool({
    name: 'drop',
    description: 'Drops a table.',
    input: z.object({ table: z.string() }),
    needsApproval: ({ table }) => waits(table),
    execute: ({ table }, { toolCallId }) => {
      ran.push(toolCallId);
      return `dropped ${table}`;
    },
  });
  const slow = defineTool({
    name: 'slow',
    description: 'Takes a while.',
    input: z.object({}),
    execute: async (_args, { toolCallId }) => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      ran.push(toolCallId);
      return 'slow done';
    },
  });
  const model = turnModel([
    {
      calls: [
        { id: 'c1', name: 'drop', arguments: { table: 'users' } },
        { id: 'c2', name: 'slow', arguments: {} },
        { id: 'c3', name: 'drop', arguments: { table: 'logs' } },
        { id: 'c4', name: 'drop', arguments: { table: 'scratch' } },
      ],
    },
    { text: 'done' },
  ]);
  return createChain({ model, tools: [drop, slow], ...options });
}

type Outcome = { text: string } | { code: string };
const outcome = (promise: Promise<{ text: string }>): Promise<Outcome> =>
  promise.then(
    (r) => ({ text: r.text }),
    (e: { code: string }) => ({ code: e.code }),
  );

const cases: {
  name: string;
  options: { approvalTimeoutMs?: number; onApprovalTimeout?: 'fail' };
  approve: ApproveCallback;
}[] = [
  {
    name: 'decided by the approve callback',
    options: {},
    approve: async (request) => {
      await new Promise((resolve) => setTimeout(resolve, request.callId === 'c1' ? 5 : 25));
      return request.callId === 'c1' ? true : { approved: false, reason: 'no' };
    },
  },
  {
    name: 'rejected by the deadline',
    options: { approvalTimeoutMs: 5 },
    approve: () => undefined,
  },
  {
    name: 'failed by the deadline',
    options: { approvalTimeoutMs: 5, onApprovalTimeout: 'fail' },
    approve: () => undefined,
  },
];

describe('approvals replayed after a crash at every entry', () => {
  for (const { name, options, approve } of cases) {
    it(name, async () => {
      const store = memoryStore();
      const ran: string[] = [];
      const reference = await outcome(
        chainOf(ran, options).invoke('clean', { runId: 'r', store, approve }),
      );
      const entries = (await store.read('r')) ?? [];
      expect(entries.some((e) => e.type === 'decision')).toBe(true);
      for (let count = 1; count <= entries.length; count++) {
        const where = `crash after ${count} of ${entries.length} (${entries[count - 1]?.type})`;
        const crashed = await storeWithPrefix('r', entries, count);
        const again: string[] = [];
        const resumed = await outcome(
          chainOf(again, options).resume('r', { store: crashed, approve }),
        );
        expect(resumed, where).toEqual(reference);
        const prefix = entries.slice(0, count);
        const finished = prefix.filter((e) => e.type === 'result').map((e) => e.callId);
        for (const id of again) expect(finished, `${where}: ${id} ran again`).not.toContain(id);
        const after = (await crashed.read('r')) ?? [];
        const decisions = (list: readonly JournalEntry[]) =>
          list.filter((e) => e.type === 'decision').map((e) => [e.callId, e.approved]);
        expect(decisions(after).sort(), where).toEqual(decisions(entries).sort());
        expect(after.at(-1), where).toEqual(entries.at(-1));
      }
    });
  }
});
