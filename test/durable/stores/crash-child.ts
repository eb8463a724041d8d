// Run by file-store-crash.test.ts in a child process, which it then kills with SIGKILL:
// appends entries to a fileStore and prints the seq of each append once it has resolved
// (0 for the start entry), so the test knows exactly which entries were confirmed.
// Usage: node --import tsx crash-child.ts <dir>
import { fileStore } from '../../../src/durable/stores/file-store.js';
import { CRASH_RUN_ID, crashStartEntry, crashStepEntry } from './crash-workload.js';

const MAX_STEPS = 5_000; // stop by itself if nobody kills it

const dir = process.argv[2];
if (dir === undefined) throw new Error('usage: crash-child.ts <dir>');
const store = fileStore(dir);
// Writes to a pipe are synchronous on Linux: a printed seq has left this process before the
// next append starts, so a kill cannot lose the news of a confirmed append.
process.stdout.write('ready\n');
await store.append(CRASH_RUN_ID, crashStartEntry());
process.stdout.write('0\n');
for (let seq = 1; seq <= MAX_STEPS; seq++) {
  await store.append(CRASH_RUN_ID, crashStepEntry(seq));
  process.stdout.write(`${seq}\n`);
}
