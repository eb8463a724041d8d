// Run by durable-attachments.test.ts in a child process: `invoke` starts the run of
// attachments-workload.ts in a fileStore and stops at its last model call (both screenshots
// journaled), printing `waiting` for the test to SIGKILL it; `resume` resumes the run and
// prints `output <json>`.
// Usage: node --conditions=statecraft-source --import tsx attachments-child.ts <dir> <mode>
import { setTimeout as sleep } from 'node:timers/promises';
import { fileStore } from 'statecraft';
import {
  ATTACHMENT_INPUT,
  ATTACHMENT_RUN_ID,
  attachmentChain,
  attachmentModel,
} from './attachments-workload.js';

const [dir, mode] = process.argv.slice(2);
if (dir === undefined || (mode !== 'invoke' && mode !== 'resume'))
  throw new Error('usage: attachments-child.ts <dir> invoke|resume');

// Never outlive a test that lost track of this process.
setTimeout(() => process.exit(3), 20_000).unref();

const model = attachmentModel(async (step) => {
  if (mode === 'invoke' && step === 2) {
    process.stdout.write('waiting\n');
    await sleep(30_000);
  }
});
const store = fileStore(dir);
const chain = attachmentChain(model);
const result =
  mode === 'invoke'
    ? await chain.invoke(ATTACHMENT_INPUT, { runId: ATTACHMENT_RUN_ID, store })
    : await chain.resume(ATTACHMENT_RUN_ID, { store });
process.stdout.write(
  `output ${JSON.stringify({ status: result.status, text: result.text, replayed: result.details().modelCalls.map((call) => call.replayed === true) })}\n`,
);
