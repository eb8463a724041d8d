import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Describes, describeOptions, type OptionContext } from '../options/describe.js';
import { satisfies, unchecked } from '../options/kinds.js';
import { milliseconds, parseOptions, port } from './option-checks.js';
import { RestateRequestError } from './request-error.js';

export interface LocalRestateOptions {
  /** Where the server keeps its data; default a new temporary directory, removed by `stop`. */
  readonly baseDir?: string;
  /** Ports; default free ones picked at start. */
  readonly ingressPort?: number;
  readonly adminPort?: number;
  readonly fabricPort?: number;
  /** Longest wait for the server to become healthy. Default 30 000 ms. */
  readonly startTimeoutMs?: number;
  /**
   * Server settings as RESTATE_* environment variables (see `restate-server --dump-config`).
   * The server gets these and its own settings only, none of this process's environment
   * (where API keys and other secrets live); it binds 127.0.0.1, which they cannot change.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** Show the server's log on this process's stderr. Default false. */
  readonly log?: boolean;
}

/** A `restate-server` this process started, on 127.0.0.1 only. */
export interface LocalRestate {
  readonly url: string;
  readonly adminUrl: string;
  readonly baseDir: string;
  /** The server process's id (the server binary itself, not a wrapper). */
  pid(): number | undefined;
  /** Kills the server with SIGKILL, as a crash would: its data stays in baseDir. */
  crash(): Promise<void>;
  /** Starts the server again on the same ports and data (after crash or stop({ keepData })). */
  restart(): Promise<void>;
  /** Stops the server (SIGTERM, then SIGKILL after 10 s) and removes a temporary baseDir. */
  stop(options?: { readonly keepData?: boolean }): Promise<void>;
}

/** startLocalRestate's options described once (see src/options/describe.ts). */
export const LOCAL_RESTATE_OPTIONS = describeOptions('startLocalRestate', {
  baseDir: satisfies<string>((value) => typeof value === 'string', 'must be a directory path', {
    defaultText: 'a new temporary directory',
  }),
  ingressPort: port({ defaultText: 'a free one' }),
  adminPort: port({ defaultText: 'a free one' }),
  fabricPort: port({ defaultText: 'a free one' }),
  startTimeoutMs: milliseconds({ default: 30_000 }),
  env: { check: checkServerEnv, defaultText: 'none' },
  log: unchecked<boolean, boolean>({ default: false }),
});

// tsc fails here, naming the option, when the interface and its description drift apart.
const _described: Describes<LocalRestateOptions, typeof LOCAL_RESTATE_OPTIONS> = true;

/**
 * Starts Restate's server from the `@restatedev/restate-server` npm package (an optional peer
 * dependency), bound to 127.0.0.1 on every port, with telemetry off: for tests, benchmarks and
 * trying statecraft on Restate on one machine. Production runs its own server.
 */
export async function startLocalRestate(options: LocalRestateOptions = {}): Promise<LocalRestate> {
  const { startTimeoutMs, log } = parseOptions(LOCAL_RESTATE_OPTIONS, options);
  const binary = serverBinary();
  const ownDir = options.baseDir === undefined;
  const baseDir = options.baseDir ?? (await mkdtemp(path.join(os.tmpdir(), 'statecraft-restate-')));
  const ingressPort = options.ingressPort ?? (await freePort());
  const adminPort = options.adminPort ?? (await freePort());
  const fabricPort = options.fabricPort ?? (await freePort());
  const url = `http://127.0.0.1:${ingressPort}`;
  const adminUrl = `http://127.0.0.1:${adminPort}`;
  let child: ChildProcess | undefined;

  async function start(): Promise<void> {
    const started = spawn(
      binary,
      ['--base-dir', baseDir, '--node-name', 'statecraft', '--no-logo', '--listen-mode', 'tcp'],
      {
        // Only what the server needs: never this process's environment, which holds the
        // secrets of whatever runs here (the deployment's secret, providers' API keys).
        env: {
          ...DEFAULTS,
          ...options.env,
          RESTATE_BIND_IP: '127.0.0.1',
          RESTATE_ADVERTISED_HOST: '127.0.0.1',
          RESTATE_BIND_ADDRESS: `127.0.0.1:${fabricPort}`,
          RESTATE_ADVERTISED_ADDRESS: `http://127.0.0.1:${fabricPort}`,
          RESTATE_INGRESS__BIND_ADDRESS: `127.0.0.1:${ingressPort}`,
          RESTATE_ADMIN__BIND_ADDRESS: `127.0.0.1:${adminPort}`,
        },
        stdio: ['ignore', 'ignore', log ? 'inherit' : 'ignore'],
      },
    );
    child = started;
    // A test or script that exits without stop() must not leave a server behind.
    const killOnExit = () => started.kill('SIGKILL');
    process.once('exit', killOnExit);
    started.once('exit', () => process.off('exit', killOnExit));
    const exited = new Promise<never>((_, reject) =>
      started.once('exit', (code, signal) =>
        reject(new Error(`restate-server exited during start (${signal ?? `code ${code}`})`)),
      ),
    );
    exited.catch(() => {});
    await Promise.race([healthy(url, adminUrl, startTimeoutMs), exited]);
  }

  async function kill(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    running.kill(signal);
    const timer = setTimeout(() => running.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }

  try {
    await start();
  } catch (error) {
    // Nothing of a server that did not come up is left behind.
    await kill('SIGKILL', 0);
    if (ownDir) await rm(baseDir, { recursive: true, force: true });
    throw error;
  }
  return {
    url,
    adminUrl,
    baseDir,
    pid: () => child?.pid,
    crash: () => kill('SIGKILL', 0),
    async restart() {
      try {
        await start();
      } catch (error) {
        await kill('SIGKILL', 0);
        throw error;
      }
    },
    async stop(stopOptions = {}) {
      await kill('SIGTERM', 10_000);
      if (ownDir && !stopOptions.keepData) await rm(baseDir, { recursive: true, force: true });
    },
  };
}

/** Settings `env` may change; every other one is ours (listening on 127.0.0.1 above all). */
const DEFAULTS: Readonly<Record<string, string>> = {
  RESTATE_DISABLE_TELEMETRY: 'true',
  RESTATE_ADMIN__DISABLE_WEB_UI: 'true',
  RESTATE_LOG_FILTER: 'error',
  RESTATE_DEFAULT_NUM_PARTITIONS: '4',
  RESTATE_ROCKSDB_TOTAL_MEMORY_SIZE: '512MB',
};

/** Settings that would make the server listen or advertise elsewhere than on 127.0.0.1. */
const WHERE_IT_LISTENS = /BIND|LISTEN|ADVERTISED/;

function checkServerEnv(
  env: unknown,
  at: OptionContext,
): Readonly<Record<string, string>> | undefined {
  if (typeof env !== 'object' || env === null || Array.isArray(env)) {
    at.problem('must be an object of RESTATE_* variable names to string values');
    return undefined;
  }
  const before = at.problems.size;
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== 'string') {
      at.problem(`must be a string; got ${typeof value}`, `env.${name}`);
    } else if (WHERE_IT_LISTENS.test(name)) {
      at.problem(
        'startLocalRestate listens on 127.0.0.1 only (run your own restate-server to listen elsewhere)',
        `env.${name}`,
      );
    }
  }
  return at.problems.size === before ? (env as Record<string, string>) : undefined;
}

function serverBinary(): string {
  const require = createRequire(import.meta.url);
  const target = `@restatedev/restate-server-${process.platform}-${process.arch}/bin/restate-server`;
  try {
    return require.resolve(target);
  } catch {
    throw new Error(
      `startLocalRestate needs the Restate server: npm install -D @restatedev/restate-server (no ${target} found)`,
    );
  }
}

/** Polls the admin and ingress health endpoints until both answer, or `timeoutMs` passes. */
async function healthy(url: string, adminUrl: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const probe of [`${adminUrl}/health`, `${url}/restate/health`]) {
    for (;;) {
      try {
        const response = await fetch(probe, { signal: AbortSignal.timeout(1_000) });
        if (response.ok) break;
      } catch {
        // not up yet
      }
      if (Date.now() > deadline) {
        throw new RestateRequestError(probe, 0, `restate-server not healthy after ${timeoutMs} ms`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  // Healthy is not yet serving: its partitions come up just after. Ready when a query over
  // every partition's state answers.
  for (;;) {
    try {
      const response = await fetch(`${adminUrl}/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query: 'SELECT count(*) AS n FROM state' }),
        signal: AbortSignal.timeout(2_000),
      });
      if (response.ok) return;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      throw new RestateRequestError(
        adminUrl,
        0,
        `restate-server partitions not up after ${timeoutMs} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A TCP port free on `host` now (the OS picks it). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
