// Starts run 'r' in the store at argv[2] (unless it is there) and holds it until killed (at
// most 20 s).
import { JOURNAL_FORMAT_VERSION } from '../../../src/durable/journal-entry.js';
import { fileStore } from '../../../src/durable/stores/file-store.js';

const store = fileStore(process.argv[2] as string);
if ((await store.read('r')) === undefined) {
  await store.append('r', {
    type: 'start',
    version: JOURNAL_FORMAT_VERSION,
    runId: 'r',
    kind: 'chain',
    startedAt: Date.now(),
    input: 'hi',
  });
}
await store.acquire?.('r');
process.stdout.write('held\n');
setTimeout(() => process.exit(0), 20_000);
