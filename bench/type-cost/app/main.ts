// A small app for `npm run bench` (bench/type-cost.ts): what statecraft's types cost tsc beyond
// the quickstart. Seven tools of nested zod objects, two chains and a tool loop, over 7 files.
import { ScriptedModel } from 'statecraft/testing';
import { agents } from './agent.js';
import { research } from './research.js';

const model = new ScriptedModel([
  { text: '{"category":"bug","summary":"crash","actions":[],"customer":null}' },
]);
const { triage, loop, answer } = agents(model);

const run = await triage.invoke('The app crashes on start.');
if (run.status === 'succeeded') console.log(run.result.category, run.result.actions.length);
for await (const event of answer.stream('Where is the manual?')) {
  if (event.type === 'final') console.log(event.result?.result.length);
}
await research(loop);
