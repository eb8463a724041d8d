// An app's own statechart with three agents inside it (SPEC R5): a support ticket is
// classified, researched and answered by invoked child actors, and the reply waits for a
// human reviewer, simulated here: they ask for one change, then approve. Prints each state
// the app passes through and the app's typed output. Runs on the embedded scripted models.
import { createActor, toPromise } from 'xstate';
import { createTriageAgents } from './agents.js';
import { createTriageMachine, type TriageEvent } from './machine.js';
import { createScriptedModels, sampleTicket } from './models.js';

const machine = createTriageMachine(createTriageAgents(createScriptedModels()));
const actor = createActor(machine, { input: { ticket: sampleTicket } });

const reviews: TriageEvent[] = [
  { type: 'REVISE', notes: 'Tell her when the refund will arrive.' },
  { type: 'APPROVE', reviewer: 'sam@support' },
];
const indent = (text: string) => text.replace(/^/gm, '    ');

console.log('Running on the embedded scripted models.');
console.log(`ticket ${sampleTicket.id} from ${sampleTicket.customer}: "${sampleTicket.subject}"\n`);
const path: string[] = [];
actor.subscribe((snapshot) => {
  const state = snapshot.value;
  if (state === path.at(-1)) return; // the context may change without the state
  path.push(state);
  console.log(state);
  const { triage, findings, draft } = snapshot.context;
  if (state === 'researching' && triage) {
    console.log(`  triage: ${triage.category}, ${triage.urgency} urgency: ${triage.summary}`);
  }
  if (state === 'drafting' && findings && !draft) console.log(`  findings:\n${indent(findings)}`);
  if (state === 'awaitingReview') {
    console.log(`  draft:\n${indent(draft ?? '')}`);
    const review = reviews.shift();
    if (!review) return;
    console.log(`  reviewer: ${JSON.stringify(review)}`);
    // The reviewer answers later, as a person would, not inside this notification.
    setTimeout(() => actor.send(review), 0);
  }
});
actor.start();
const output = await toPromise(actor);

console.log(`\npath: ${path.join(' → ')}`);
console.log('output:', JSON.stringify(output, null, 2));
