// Holds the lock of run 'r' in the store at argv[2] until killed (at most 20 s).
import { fileStore } from '../../../src/durable/stores/file-store.js';

const store = fileStore(process.argv[2] as string);
await store.acquire?.('r');
process.stdout.write('held\n');
setTimeout(() => process.exit(0), 20_000);
