import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { ConfigError } from '../errors.js';
import { checkOptions, serveWorker, WORKER_OPTIONS, type WorkerOptions } from './worker.js';

const CLUSTER_OPTIONS = [...WORKER_OPTIONS, 'processes'];
/** A worker that dies sooner than this after it started counts as failing to start. */
const QUICK_DEATH_MS = 5_000;
const MAX_RESPAWN_DELAY_MS = 30_000;

/** The primary of a worker cluster: its processes, and how to stop them. */
export interface WorkerCluster {
  /** The port the workers share (the one `port: 0` picked). */
  readonly port: number;
  /** The process ids of the live worker processes. */
  pids(): number[];
  /** Stops every worker process (SIGTERM) and waits for them to exit. */
  close(): Promise<void>;
}

/**
 * Serves the statecraft services from `processes` worker processes sharing one port (Node's
 * `cluster`): register that one address with Restate, which spreads its HTTP/2 connections
 * over them. Call it from the top of your worker script: in the primary it forks and returns
 * the cluster once every process listens (rejecting if one exits first: a bad option, a port
 * in use); in each forked process it serves and returns undefined. A worker that dies later
 * is replaced (Restate retries its invocations on the others meanwhile); one that keeps dying
 * soon after it starts is replaced after a growing delay, up to 30 s, not in a loop.
 */
export async function serveCluster(
  options: WorkerOptions & { readonly processes?: number },
): Promise<WorkerCluster | undefined> {
  checkOptions('serveCluster', options, CLUSTER_OPTIONS);
  const { processes = 2, ...workerOptions } = options;
  if (!Number.isInteger(processes) || processes < 1) {
    throw new ConfigError('processes', 'serveCluster: processes is a whole number ≥ 1');
  }
  if (!cluster.isPrimary) {
    await serveWorker(workerOptions);
    return undefined;
  }
  const started = await Promise.allSettled(Array.from({ length: processes }, startWorker));
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    await stopAll();
    throw failure.reason;
  }
  const [port = workerOptions.port ?? 9080] = started.map((result) =>
    result.status === 'fulfilled' ? result.value : 0,
  );
  const respawn = new Respawn();
  let closing = false;
  cluster.on('exit', (worker) => {
    if (!closing) respawn.after(worker, () => void startWorker().catch(() => {}));
  });
  return {
    port,
    pids: () =>
      liveWorkers().flatMap((worker) =>
        worker.process.pid === undefined ? [] : [worker.process.pid],
      ),
    async close() {
      closing = true;
      respawn.cancel();
      await stopAll();
    },
  };
}

/** Forks one worker; resolves with its port once it listens, rejects if it exits first. */
function startWorker(): Promise<number> {
  const worker = cluster.fork();
  return new Promise<number>((resolve, reject) => {
    const onExit = (code: number | null, signal: string | null) =>
      reject(
        new Error(
          `serveCluster: worker process ${worker.process.pid} exited (${signal ?? `code ${code}`}) before it listened`,
        ),
      );
    worker.once('exit', onExit);
    worker.once('listening', (address) => {
      worker.off('exit', onExit);
      resolve(address.port);
    });
  });
}

function liveWorkers(): ClusterWorker[] {
  return Object.values(cluster.workers ?? {}).flatMap((worker) =>
    worker && !worker.isDead() ? [worker] : [],
  );
}

async function stopAll(): Promise<void> {
  await Promise.all(
    liveWorkers().map(
      (worker) =>
        new Promise<void>((resolve) => {
          worker.once('exit', () => resolve());
          worker.kill('SIGTERM');
        }),
    ),
  );
}

/** When to replace a dead worker: at once, unless workers keep dying soon after they start. */
class Respawn {
  readonly #bornAt = new WeakMap<ClusterWorker, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #quickDeaths = 0;

  constructor() {
    for (const worker of Object.values(cluster.workers ?? {})) {
      if (worker) this.#bornAt.set(worker, Date.now());
    }
    cluster.on('fork', (worker) => this.#bornAt.set(worker, Date.now()));
  }

  after(dead: ClusterWorker, start: () => void): void {
    const lived = Date.now() - (this.#bornAt.get(dead) ?? 0);
    this.#quickDeaths = lived < QUICK_DEATH_MS ? this.#quickDeaths + 1 : 0;
    const delay =
      this.#quickDeaths === 0 ? 0 : Math.min(MAX_RESPAWN_DELAY_MS, 250 * 2 ** this.#quickDeaths);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      start();
    }, delay);
    this.#timers.add(timer);
  }

  cancel(): void {
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}
