// A process of the claim race (claim-race.test.ts).
// - `create <dir> <count>`: starts runs race-0 … race-<count-1>, each left with its tool call
//   in flight, prints `ready` once every one has journaled that call, and waits to be killed.
// - `race <dir>`: on each IPC message { runId, at }, resumes that run at `at` (epoch ms, so
//   that every racer starts at once) and answers with what happened.
import { fileStore, JournalError } from 'statecraft';
import { raceChain } from './race-chain.js';

const [mode, dir, count] = process.argv.slice(2) as [string, string, string?];
const store = fileStore(dir);

if (mode === 'create') {
  const chain = raceChain(() => new Promise<string>(() => {}));
  const runIds = Array.from({ length: Number(count) }, (_, i) => `race-${i}`);
  for (const runId of runIds) void chain.invoke('book a seat', { runId, store }).catch(() => {});
  for (;;) {
    const journals = await Promise.all(runIds.map((runId) => store.read(runId)));
    if (journals.every((entries) => entries?.some((entry) => entry.type === 'call'))) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  process.stdout.write('ready\n');
  setTimeout(() => process.exit(1), 120_000);
} else {
  const ran = new Map<string, number>();
  const chain = raceChain(async (runId) => {
    ran.set(runId, (ran.get(runId) ?? 0) + 1);
    return 'seat 12A';
  });
  process.on('message', async (message: { runId: string; at: number }) => {
    const { runId, at } = message;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
    let reply: Record<string, unknown>;
    try {
      const result = await chain.resume(runId, { store });
      const live = result.details().modelCalls.filter((call) => !call.replayed).length;
      reply = { outcome: 'done', text: result.text, liveModelCalls: live };
    } catch (error) {
      const busy = JournalError.isInstance(error) && error.reason === 'run-busy';
      reply = { outcome: busy ? 'busy' : 'error', message: String(error) };
    }
    process.send?.({ runId, pid: process.pid, toolRuns: ran.get(runId) ?? 0, ...reply });
  });
  process.send?.({ ready: true });
}
