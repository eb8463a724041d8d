import { createChain, defineTool } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

const add = defineTool({ name: 'add', description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
const model = new ScriptedModel([ // stands in for a real model; it replays these answers
  { toolCalls: [{ name: 'add', arguments: { a: 2, b: 'three' } }] }, // a bad call comes back as data
  { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
  { text: 'The sum is {"answer": 5}.' }, // JSON found in prose, checked against outputSchema
]);
const chain = createChain({ model, tools: [add], outputSchema: z.object({ answer: z.number() }) });

for await (const event of chain.stream('What is 2 + 3?')) {
  if (event.type === 'state') console.log(`state: ${event.state}`);
  if (event.type === 'tool-call') console.log(`  call ${event.toolCall.name}(${JSON.stringify(event.toolCall.arguments)})`);
  if (event.type === 'tool-result') console.log(`  → ${event.result.error?.replace(/\s+/g, ' ') ?? event.result.output}`);
  if (event.type === 'final' && event.output.status === 'succeeded') console.log('result:', event.output.result);
}
