// serveCluster in a process of its own (a cluster's primary must be a script's main process),
// for worker-cluster.test.ts. argv[2]: `respawn` (kill one worker, then all, and report the
// ports replacements listen on) or `busy <port>` (start on a port already taken).
import cluster from 'node:cluster';
import { serveCluster } from 'statecraft/restate';
import { tripChain } from './workload.js';

const [mode = 'respawn', busyPort = '0'] = process.argv.slice(2);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const options = { agents: { trip: tripChain() }, url: 'http://127.0.0.1:1', processes: 2 };

if (mode === 'busy') {
  const started = await serveCluster({ ...options, port: Number(busyPort) }).then(
    () => 'started',
    (error: unknown) => `refused: ${String((error as Error).message)}`,
  );
  if (cluster.isPrimary) console.log(JSON.stringify({ started }));
} else {
  const workers = await serveCluster({ ...options, port: 0 });
  if (workers) {
    const listened = new Map<number, number>();
    cluster.on('listening', (worker, address) => {
      if (worker.process.pid !== undefined) listened.set(worker.process.pid, address.port);
    });
    const first = workers.pids();
    const first0 = first[0] as number;
    process.kill(first0, 'SIGKILL');
    while (workers.pids().length < 2 || workers.pids().includes(first0)) await pause(50);
    const second = workers.pids();
    for (const pid of second) process.kill(pid, 'SIGKILL');
    while (workers.pids().length < 2 || workers.pids().some((p) => second.includes(p))) {
      await pause(50);
    }
    // Both replaced and listening (a replacement killed before it listened is replaced too).
    const replaced = () => {
      const pids = workers.pids();
      return pids.length === 2 && pids.every((pid) => listened.has(pid) && !second.includes(pid));
    };
    while (!replaced()) await pause(50);
    const third = workers.pids();
    await workers.close();
    console.log(
      JSON.stringify({
        port: workers.port,
        first,
        second,
        third,
        listened: [...listened.values()],
        after: workers.pids(),
      }),
    );
  }
}
// The primary is done; a worker process keeps serving until its primary stops it.
if (cluster.isPrimary) process.exit(0);
