// A Restate server and a worker deployment, started for real on 127.0.0.1 for the Restate
// tests and `npm run bench:restate`: the server from the @restatedev/restate-server package,
// the workers as a child process running `serveCluster` over test/restate/worker-main.ts,
// holding a secret of their own that every client must be given (see `runs()`).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type LocalRestate,
  type RestateRuns,
  type RestateStoreOptions,
  registerDeployment,
  restateRuns,
  startLocalRestate,
} from 'statecraft/restate';
import { freePort } from '../../src/restate/local-server.js';
import { EFFECT_LOG_ENV, EFFECT_MS_ENV, type EffectLine, SECRET_ENV } from './workload.js';

const WORKER_MAIN = fileURLToPath(new URL('./worker-main.ts', import.meta.url));
const START_TIMEOUT_MS = 60_000;

/**
 * Restate's HTTP/2 connections carry at most this many invocations each; more open another
 * connection, which Node's cluster hands to the next worker process. Kept low so that a small
 * test load spreads over both processes (the server's default is 128).
 */
const STREAMS_PER_CONNECTION = '8';

export interface Workers {
  /** The primary's pid and its worker processes' pids. */
  readonly primary: number;
  workerPids(): number[];
  /** Resolves once the primary printed `worker <pid>` for a new worker (a replacement). */
  nextWorker(): Promise<number>;
  /** SIGKILLs the primary and every worker: all of them die at once. */
  crash(): Promise<void>;
  stop(): Promise<void>;
}

export interface Deployment {
  readonly server: LocalRestate;
  /** The workers' secret (a list while it is replaced): a client without it is refused. */
  readonly secret: string | readonly string[];
  /** A client of this deployment with its secret (and `options`, e.g. adminUrl). */
  runs(options?: Partial<RestateStoreOptions>): RestateRuns;
  workers: Workers;
  readonly port: number;
  /** The effect log every worker appends to. */
  readonly effectLog: string;
  effects(): EffectLine[];
  startWorkers(): Promise<Workers>;
  /** Stops the workers and starts them again holding `secret` (a rotation). */
  restartWorkers(secret: string | readonly string[]): Promise<Workers>;
  /** Everything this deployment started is gone (server and workers). */
  stop(): Promise<void>;
  /** Every pid this deployment ever started. */
  readonly pids: Set<number>;
}

export async function startDeployment(
  options: { processes?: number; effectMs?: number } = {},
): Promise<Deployment> {
  const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-restate-test-'));
  const effectLog = path.join(dir, 'effects.jsonl');
  writeFileSync(effectLog, '');
  const pids = new Set<number>();
  const server = await startLocalRestate({
    baseDir: path.join(dir, 'restate'),
    env: { RESTATE_WORKER__INVOKER__HTTP2_STREAMS_PER_CONNECTION_LIMIT: STREAMS_PER_CONNECTION },
  });
  const serverPid = server.pid();
  if (serverPid !== undefined) pids.add(serverPid);
  const port = await freePort();
  let secret: string | readonly string[] = randomBytes(32).toString('base64url');
  const env = {
    ...process.env,
    RESTATE_LOGGING: 'ERROR',
    [EFFECT_LOG_ENV]: effectLog,
    [EFFECT_MS_ENV]: String(options.effectMs ?? 0),
  };

  async function startWorkers(): Promise<Workers> {
    const child = spawn(
      process.execPath,
      [
        '--conditions=statecraft-source',
        '--import',
        'tsx',
        WORKER_MAIN,
        server.url,
        String(port),
        String(options.processes ?? 2),
        server.adminUrl,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...env, [SECRET_ENV]: typeof secret === 'string' ? secret : secret.join(',') },
      },
    );
    return workersOf(child, pids);
  }

  const deployment: Deployment = {
    server,
    get secret() {
      return secret;
    },
    runs: (runOptions = {}) => restateRuns({ url: server.url, secret, ...runOptions }),
    workers: await startWorkers(),
    port,
    effectLog,
    pids,
    // Only whole lines: a worker may be appending one as the log is read.
    effects: () =>
      readFileSync(effectLog, 'utf8')
        .split('\n')
        .slice(0, -1)
        .map((line) => JSON.parse(line) as EffectLine),
    async restartWorkers(next) {
      await deployment.workers.stop();
      secret = next;
      deployment.workers = await startWorkers();
      return deployment.workers;
    },
    async startWorkers() {
      deployment.workers = await startWorkers();
      return deployment.workers;
    },
    async stop() {
      await deployment.workers.stop();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  await registerDeployment({ adminUrl: server.adminUrl, workerUrl: `http://127.0.0.1:${port}` });
  return deployment;
}

async function workersOf(child: ChildProcess, pids: Set<number>): Promise<Workers> {
  if (child.pid === undefined) throw new Error('the worker deployment did not start');
  const primary = child.pid;
  pids.add(primary);
  const live = new Set<number>();
  let stderr = '';
  let stdout = '';
  const waiters: ((pid: number) => void)[] = [];
  child.stderr?.on('data', (chunk) => {
    stderr += String(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.once('exit', (code, signal) =>
      reject(new Error(`worker deployment exited (${signal ?? code}) before ready:\n${stderr}`)),
    );
    child.stdout?.on('data', (chunk) => {
      stdout += String(chunk);
      const lines = stdout.split('\n');
      stdout = lines.pop() ?? '';
      for (const line of lines) {
        const worker = /^worker (\d+)$/.exec(line);
        if (worker) {
          const pid = Number(worker[1]);
          live.add(pid);
          pids.add(pid);
          waiters.shift()?.(pid);
        }
        if (line === 'ready') resolve();
      }
    });
  });
  ready.catch(() => {});
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    ready,
    new Promise((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`worker deployment not ready in ${START_TIMEOUT_MS} ms`)),
        START_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  const killAll = () => {
    for (const pid of [...live, primary]) signal(pid, 'SIGKILL');
    live.clear();
  };
  return {
    primary,
    workerPids: () => [...live].filter(isAlive),
    nextWorker: () =>
      new Promise<number>((resolve, reject) => {
        const timeout = setTimeout(() => reject(new Error('no replacement worker')), 30_000);
        waiters.push((pid) => {
          clearTimeout(timeout);
          resolve(pid);
        });
      }),
    async crash() {
      killAll();
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const grace = setTimeout(killAll, 10_000);
        await exited;
        clearTimeout(grace);
      }
      // Whatever the primary left (it should have stopped its workers) goes now.
      killAll();
    },
  };
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // gone already
  }
}
