// Bad worker and client options fail at construction, naming each one (no server needed).
import { ConfigError } from 'statecraft';
import {
  registerDeployment,
  restateRuns,
  restateStore,
  serveCluster,
  serveWorker,
  startLocalRestate,
  statecraftServices,
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
    expect(await problemsOf(() => serveWorker({ agents: {}, url: 'http://127.0.0.1:1' }))).toEqual([
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

  it('checks the secret, adminUrl and headers on both sides, nearest name for a typo', async () => {
    const error = (() => {
      try {
        restateStore({ url: 'http://127.0.0.1:1', secert: 'x'.repeat(40) } as never);
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(String(error?.message)).toMatch(/did you mean `secret`\?/);
    expect(
      await problemsOf(async () =>
        restateRuns({
          url: 'http://127.0.0.1:1',
          secret: 'too short',
          headers: { 'content-type': 'text/plain', 'bad name': 'v', 'x-ok': 1 } as never,
        }),
      ),
    ).toEqual(['headers.bad name', 'headers.content-type', 'headers.x-ok', 'secret']);
    const agents = { trip: tripChain() };
    expect(
      await problemsOf(() =>
        serveWorker({ agents, url: 'http://127.0.0.1:1', secret: 42, adminUrl: ':9070' } as never),
      ),
    ).toEqual(['adminUrl', 'secret']);
    expect(
      await problemsOf(async () =>
        statecraftServices({ agents, store: restateStore({ url: 'http://x:1' }), secret: '' }),
      ),
    ).toEqual(['secret']);
    // While a secret is replaced, a list of different ones, each long enough.
    const long = 'x'.repeat(40);
    for (const secret of [[], [long, long], [long, 'short']]) {
      expect(await problemsOf(async () => restateStore({ url: 'http://x:1', secret }))).toEqual([
        'secret',
      ]);
    }
    expect(() => restateStore({ url: 'http://x:1', secret: [long, 'y'.repeat(40)] })).not.toThrow();
    expect(
      await problemsOf(() =>
        registerDeployment({
          adminUrl: 'http://127.0.0.1:1',
          workerUrl: 'http://127.0.0.1:2',
          headers: { 'x-statecraft-signature': 'forged' },
        }),
      ),
    ).toEqual(['headers.x-statecraft-signature']);
  });

  it('refuses to serve without a secret a Restate on another machine', async () => {
    const agents = { trip: tripChain() };
    const away = (url: string) => serveWorker({ agents, url, port: 0 });
    const error = await away('http://restate.internal:8080').catch((e: unknown) => e as Error);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.option)).toEqual(['secret']);
    expect(String(error)).toMatch(/required when Restate is on another machine/);
    expect(await problemsOf(() => away('http://10.0.0.7:8080'))).toEqual(['secret']);
    expect(
      await problemsOf(() => serveCluster({ agents, url: 'https://restate.example.com' })),
    ).toEqual(['secret']);
  });

  it('startLocalRestate listens on 127.0.0.1 only, whatever its env says', async () => {
    expect(
      await problemsOf(() =>
        startLocalRestate({
          env: {
            RESTATE_ADMIN__BIND_ADDRESS: '0.0.0.0:9070',
            RESTATE_BIND_IP: '0.0.0.0',
            RESTATE_LOG_FILTER: 7 as never,
          },
        }),
      ),
    ).toEqual(['env.RESTATE_ADMIN__BIND_ADDRESS', 'env.RESTATE_BIND_IP', 'env.RESTATE_LOG_FILTER']);
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
