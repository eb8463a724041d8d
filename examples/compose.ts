import { createChain, parallel, pipe, type RunCallbacks } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

const classify = createChain({
  name: 'classify', // its object result is cached for the chains after it
  model: new ScriptedModel([{ text: '{"topic": "billing", "urgent": true}' }]),
  outputSchema: z.object({ topic: z.string(), urgent: z.boolean() }),
});
const reply = createChain({ name: 'reply', model: new ScriptedModel(() => ({ text: 'On it.' })) });
type Triage = { result: { topic: string; urgent: boolean } };

const app = pipe(
  (ticket: string) => `Classify: ${ticket}`,
  classify,
  parallel({
    queue: (t: Triage) => (t.result.urgent ? 'priority' : 'normal'), // concurrently
    answer: pipe((t: Triage) => `Reply about ${t.result.topic}`, reply),
  }),
  ({ queue, answer }) =>
    `[${queue}] ${answer.result} (${JSON.stringify(answer.intermediateResults)})`,
);
const depth = new Map<string | undefined, number>(); // runs form a tree by parentRunId
const log: RunCallbacks = {
  onStart: ({ runId, parentRunId, kind, name }) => {
    depth.set(runId, (depth.get(parentRunId) ?? -1) + 1);
    console.log(`${'  '.repeat(depth.get(runId) ?? 0)}${kind} ${name}`);
  },
};
console.log(await app.invoke('I was charged twice', { callbacks: log }));
