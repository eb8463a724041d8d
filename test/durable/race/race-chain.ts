// The chain every process of the claim race runs (claim-race.test.ts): one tool call, then an
// answer. The tool's behaviour is the process's own: the creator's hangs, so that each of its
// runs is left with the call in flight when it is killed; a racer's counts how often it ran.
import { createChain, defineTool, type JournalStore } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

export const ANSWER = 'booked';

export function raceChain(book: (runId: string) => Promise<string>) {
  const model = new ScriptedModel((request) =>
    request.messages.toArray().some((message) => message.role === 'tool')
      ? { text: ANSWER }
      : { toolCalls: [{ id: 'c1', name: 'book', arguments: { what: 'seat' } }] },
  );
  const tool = defineTool({
    name: 'book',
    description: 'Books a seat.',
    input: z.object({ what: z.string() }),
    execute: (_args, context) => book(String(context.idempotencyKey).split(':')[0] as string),
  });
  return createChain({ model, tools: [tool] });
}

export type RaceStore = JournalStore;
