// A worker deployment for the Restate tests and bench: `processes` cluster workers serving the
// workload's agents. argv: <ingress url> <port> <processes>. Prints `worker <pid>` for each
// process as it listens, then `ready`.
import cluster from 'node:cluster';
import { serveCluster } from 'statecraft/restate';
import { workloadAgents } from './workload.js';

const [url = '', port = '0', processes = '2'] = process.argv.slice(2);
if (cluster.isPrimary) {
  cluster.on('listening', (worker) => console.log(`worker ${worker.process.pid}`));
}
const workers = await serveCluster({
  agents: workloadAgents(),
  url,
  port: Number(port),
  processes: Number(processes),
});
if (workers) {
  console.log('ready');
  process.once('SIGTERM', () => void workers.close().then(() => process.exit(0)));
}
