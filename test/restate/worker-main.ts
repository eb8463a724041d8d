// A worker deployment for the Restate tests and bench: `processes` cluster workers serving the
// workload's agents, with the secret(s) in STATECRAFT_TEST_SECRET. argv: <ingress url> <port>
// <processes> <admin url>. Prints `worker <pid>` for each process as it listens, then `ready`.
import cluster from 'node:cluster';
import { serveCluster } from 'statecraft/restate';
import { SECRET_ENV, workloadAgents } from './workload.js';

const [url = '', port = '0', processes = '2', adminUrl = ''] = process.argv.slice(2);
if (cluster.isPrimary) {
  cluster.on('listening', (worker) => console.log(`worker ${worker.process.pid}`));
}
const workers = await serveCluster({
  agents: workloadAgents(),
  url,
  // One secret, or several (comma-separated) while it is replaced.
  secret: (process.env[SECRET_ENV] ?? '').split(','),
  adminUrl,
  port: Number(port),
  processes: Number(processes),
});
if (workers) {
  console.log('ready');
  process.once('SIGTERM', () => void workers.close().then(() => process.exit(0)));
}
