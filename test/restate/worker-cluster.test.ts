// serveCluster, with real worker processes killed with SIGKILL (no Restate server needed).
import { execFile } from 'node:child_process';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isAlive } from './deployment.js';

const run = promisify(execFile);
const CHILD = fileURLToPath(new URL('./cluster-child.ts', import.meta.url));

async function child(...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(
    process.execPath,
    ['--conditions=statecraft-source', '--import', 'tsx', CHILD, ...args],
    { timeout: 60_000, env: { ...process.env, RESTATE_LOGGING: 'ERROR' } },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}');
}

describe('serveCluster', { timeout: 90_000 }, () => {
  it('replaces dead workers on the same port, even after every one died, and close() ends them', async () => {
    const seen = await child('respawn');
    const { port, first, second, third, listened, after } = seen as {
      port: number;
      first: number[];
      second: number[];
      third: number[];
      listened: number[];
      after: number[];
    };
    expect(port).toBeGreaterThan(0);
    expect(first).toHaveLength(2);
    expect(second).toHaveLength(2);
    expect(third).toHaveLength(2);
    expect(third.some((pid) => second.includes(pid))).toBe(false);
    // Every replacement listens on the port Restate was given.
    expect(listened.every((p) => p === port)).toBe(true);
    expect(after).toEqual([]);
    expect([...first, ...second, ...third].filter(isAlive)).toEqual([]);
  });

  it('fails to start, naming the worker, when its workers cannot listen', async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const address = taken.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    try {
      const seen = await child('busy', String(port));
      expect(String(seen.started)).toMatch(/^refused: serveCluster: worker process \d+ exited/);
    } finally {
      taken.close();
    }
  });
});
