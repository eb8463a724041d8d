import cluster, { type Worker as ClusterWorker } from 'node:cluster';
import { ConfigError } from '../errors.js';
import { describeOptions } from '../options/describe.js';
import { unchecked } from '../options/kinds.js';
import { freePort } from './local-server.js';
import { parseOptions } from './option-checks.js';
import { serveWorker, WORKER_SPECS, type WorkerOptions } from './worker.js';

/**
 * serveCluster's options: serveWorker's, and `processes`, checked on its own below (its own
 * message, after the others).
 */
export const CLUSTER_OPTIONS = describeOptions('serveCluster', {
  ...WORKER_SPECS,
  processes: unchecked<number, number>({ default: 2 }),
});
/** A worker that dies sooner than this after it started counts as failing to start. */
const QUICK_DEATH_MS = 5_000;
const MAX_RESPAWN_DELAY_MS = 30_000;
/** Longest a worker process may take to listen. */
const LISTEN_TIMEOUT_MS = 60_000;
/** Tells a replacement worker the port its cluster listens on. */
const PORT_ENV = 'STATECRAFT_CLUSTER_PORT';

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
  const { processes } = parseOptions(CLUSTER_OPTIONS, options);
  const { processes: _, ...workerOptions } = options;
  if (!Number.isInteger(processes) || processes < 1) {
    throw new ConfigError('processes', 'serveCluster: processes is a whole number ≥ 1');
  }
  if (!cluster.isPrimary) {
    // A replacement listens on the port the first workers got (with `port: 0`, the one picked
    // then), not on a new one Restate does not know.
    const pinned = Number(process.env[PORT_ENV]);
    try {
      await serveWorker({ ...workerOptions, ...(pinned > 0 && { port: pinned }) });
    } catch (error) {
      // A worker process exists to serve: one that cannot (a port in use) ends, so that its
      // primary learns of it, rather than idling on the cluster's channel forever.
      console.error(`statecraft/restate: worker ${process.pid} cannot serve: ${String(error)}`);
      process.exit(1);
    }
    return undefined;
  }
  return new Cluster(processes, workerOptions.host ?? '127.0.0.1').start(
    workerOptions.port ?? 9080,
  );
}

/** This call's worker processes, their replacements, and their end. */
class Cluster {
  readonly #processes: number;
  readonly #own = new Set<ClusterWorker>();
  readonly #respawn = new Respawn();
  #requestedPort = 0;
  #port = 0;
  #running = false;
  #closing = false;
  readonly #onExit = (worker: ClusterWorker) => {
    if (!this.#own.delete(worker)) return;
    // While starting, a worker that dies fails the start instead; once running, every dead
    // worker is replaced (Respawn slows down a worker that keeps dying as it starts).
    if (this.#closing || !this.#running) return;
    this.#respawn.after(worker, () =>
      this.#fork().catch((error: unknown) => {
        console.error(`statecraft/restate: a replacement worker failed: ${String(error)}`);
      }),
    );
  };

  readonly #host: string;

  constructor(processes: number, host: string) {
    this.#processes = processes;
    this.#host = host;
  }

  async start(port: number): Promise<WorkerCluster> {
    this.#requestedPort = port;
    this.#port = port === 0 ? await freePort(this.#host) : port;
    cluster.on('exit', this.#onExit);
    const started = await Promise.allSettled(
      Array.from({ length: this.#processes }, () => this.#fork()),
    );
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) {
      await this.close();
      throw failure.reason;
    }
    this.#running = true;
    // A worker that listened and died while the others were starting is replaced now.
    for (let missing = this.#processes - this.#own.size; missing > 0; missing--) {
      void this.#fork().catch(() => {});
    }
    return {
      port: this.#port,
      pids: () =>
        [...this.#own].flatMap((worker) =>
          worker.process.pid === undefined || worker.isDead() ? [] : [worker.process.pid],
        ),
      close: () => this.close(),
    };
  }

  /** Forks one worker; resolves with its port once it listens, rejects if it exits first. */
  #fork(): Promise<number> {
    // With `port: 0` the primary picked the port (start): every worker, replacements too,
    // asks for it by number, so they all share it, even after every one of them died.
    const pinned = this.#requestedPort === 0 ? { [PORT_ENV]: String(this.#port) } : {};
    const worker = cluster.fork(pinned);
    this.#own.add(worker);
    this.#respawn.born(worker);
    return new Promise<number>((resolve, reject) => {
      const onExit = (code: number | null, signal: string | null) => {
        clearTimeout(timer);
        reject(
          new Error(
            `serveCluster: worker process ${worker.process.pid} exited (${signal ?? `code ${code}`}) before it listened`,
          ),
        );
      };
      worker.once('exit', onExit);
      const timer = setTimeout(() => {
        worker.off('exit', onExit);
        worker.kill('SIGKILL');
        reject(
          new Error(
            `serveCluster: worker process ${worker.process.pid} did not listen within ${LISTEN_TIMEOUT_MS} ms`,
          ),
        );
      }, LISTEN_TIMEOUT_MS);
      worker.once('listening', (address) => {
        clearTimeout(timer);
        worker.off('exit', onExit);
        resolve(address.port);
      });
    });
  }

  async close(): Promise<void> {
    this.#closing = true;
    this.#respawn.cancel();
    await Promise.all(
      [...this.#own].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            worker.once('exit', () => resolve());
            worker.kill('SIGTERM');
          }),
      ),
    );
    cluster.off('exit', this.#onExit);
  }
}

/** When to replace a dead worker: at once, unless workers keep dying soon after they start. */
class Respawn {
  readonly #bornAt = new WeakMap<ClusterWorker, number>();
  readonly #timers = new Set<NodeJS.Timeout>();
  #quickDeaths = 0;

  /** A worker was forked now: how long it lives decides how soon it is replaced. */
  born(worker: ClusterWorker): void {
    this.#bornAt.set(worker, Date.now());
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
