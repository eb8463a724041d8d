import { compileTurn, defineTool, LocalToolRegistry, mutate, responseText, responseToolCalls, userMessage } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { z } from 'zod';

const add = defineTool({ name: 'add', description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }), execute: ({ a, b }) => a + b });
const tools = new LocalToolRegistry([add]);
const model = new ScriptedModel([{ toolCalls: [{ name: 'add', arguments: { a: 2, b: 'three' } }] },
  { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] }, { text: '2 + 3 = 5' }]);
const contract = { systemPrompt: 'Use the tools for arithmetic.', tools: tools.list() };

let turn = compileTurn({ transcript: [userMessage('What is 2 + 3?')], contract });
while (turn.transcript.last?.role !== 'assistant') { // until the model answers without calling a tool
  const response = await model.generate({ messages: turn.messages, tools: tools.specs() });
  const calls = responseToolCalls(response);
  const results = await Promise.all(calls.map((call) => tools.run(call)));
  turn = compileTurn({ transcript: turn.transcript, mutations: [mutate.assistantMessage(responseText(response), calls), ...results.map(mutate.toolResult)], contract });
  console.log('model:', responseText(response) || calls.map((c, i) => `${c.name}(${JSON.stringify(c.arguments)}) → ${results[i]?.error ?? results[i]?.output}`).join());
}
console.log(`transcript: ${turn.transcript.toArray().map((m) => m.role).join(', ')}`);
