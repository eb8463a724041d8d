// Bad worker and client options fail at construction, naming each one (no server needed).
import { ConfigError } from 'statecraft';
import {
  registerDeployment,
  restateRuns,
  serveCluster,
  serveWorker,
  startLocalRestate,
} from 'statecraft/restate';
import { describe, expect, it } from 'vitest';
import { tripChain } from './workload.js';

async function problemsOf(work: () => Promise<unknown>): Promise<string[]> {
  const error = await work().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(ConfigError.isInstance(error), String(error)).toBe(true);
  return (error as ConfigError).problems.map((p) => p.option).sort();
}

describe('statecraft/restate options', () => {
  it('serveWorker names every bad option', async () => {
    expect(
      await problemsOf(() =>
        serveWorker({
          agents: { trip: tripChain(), broken: {} },
          url: 'nowhere',
          proces: 2,
        } as never),
      ),
    ).toEqual(['agents.broken', 'proces', 'url']);
    const error = await serveWorker({
      agents: { trip: tripChain() },
      url: 'http://x:1',
      hots: '0.0.0.0',
    } as never).catch((e: unknown) => e as Error);
    expect(String((error as Error).message)).toMatch(/did you mean `host`\?/);
    expect(await problemsOf(() => serveWorker({ agents: {}, url: 'http://x:1' }))).toEqual([
      'agents',
    ]);
  });

  it('serveCluster refuses a process count that is not a whole number ≥ 1', async () => {
    const agents = { trip: tripChain() };
    expect(
      await problemsOf(() => serveCluster({ agents, url: 'http://127.0.0.1:1', processes: 0 })),
    ).toEqual(['processes']);
  });

  it('registerDeployment and startLocalRestate name their bad options', async () => {
    expect(
      await problemsOf(() =>
        registerDeployment({
          adminUrl: 'x',
          workerUrl: 'http://127.0.0.1:1',
          forse: true,
        } as never),
      ),
    ).toEqual(['adminUrl', 'forse']);
    expect(
      await problemsOf(() => startLocalRestate({ ingressPort: -1, startTimeoutMs: 0 })),
    ).toEqual(['ingressPort', 'startTimeoutMs']);
  });

  it('restateRuns checks its options and run ids before any request', async () => {
    expect(() => restateRuns({ url: 'http://127.0.0.1:1', retries: 1 } as never)).toThrow(
      /retries/,
    );
    const runs = restateRuns({ url: 'http://127.0.0.1:1' });
    await expect(runs.submit('bad id', 'trip', 'x')).rejects.toMatchObject({
      reason: 'invalid-run-id',
    });
    await expect(runs.submit('ok-id', '', 'x')).rejects.toThrow(/agent is the name/);
  });
});
