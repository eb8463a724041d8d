import { restateRuns } from 'statecraft/restate';
import { startDeployment } from './deployment.js';

const d = await startDeployment({ processes: 2, effectMs: 25 });
const runs = restateRuns({ url: d.server.url });
await runs.submit('deadline-1', 'refund-deadline', 'refund 2');
for (let i = 0; i < 40; i++) {
  const s = await runs.status('deadline-1');
  if (s?.state === 'awaiting-approval') {
    console.log(JSON.stringify(s));
    break;
  }
  await new Promise((r) => setTimeout(r, 50));
}
const crash = process.argv[2] === 'crash';
if (crash) {
  await d.workers.crash();
  await d.server.crash();
  await d.server.restart();
  await d.startWorkers();
  console.log('restarted');
}
for (let i = 0; i < 16; i++) {
  await new Promise((r) => setTimeout(r, 500));
  console.log(JSON.stringify(await runs.status('deadline-1')));
}
console.log(
  (await runs.store.read('deadline-1'))?.map((e) => JSON.stringify(e).slice(0, 150)).join('\n'),
);
await d.stop();
