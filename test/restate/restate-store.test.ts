// restateStore: the JournalStore contract every store keeps, against a real Restate server
// with the journal object served from this process, and what only this store does (fencing,
// batching, its options).
import http from 'node:http';
import { ConfigError, type JournalStore } from 'statecraft';
import {
  type LocalRestate,
  RestateCredentialError,
  registerDeployment,
  restateRuns,
  restateStore,
  serveWorker,
  startLocalRestate,
  type Worker,
} from 'statecraft/restate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeJournalStoreContract,
  journalErrorOf,
  startEntry,
} from '../durable/stores/journal-store-contract.js';
import { tripChain } from './workload.js';

let server: LocalRestate;
let worker: Worker;
beforeAll(async () => {
  server = await startLocalRestate();
  worker = await serveWorker({ agents: { trip: tripChain() }, url: server.url, port: 0 });
  await registerDeployment({
    adminUrl: server.adminUrl,
    workerUrl: `http://127.0.0.1:${worker.port}`,
  });
}, 60_000);

afterAll(async () => {
  await worker?.close();
  const pid = server?.pid();
  await server?.stop();
  if (pid !== undefined) expect(() => process.kill(pid, 0)).toThrow();
}, 30_000);

const storeOf = (): JournalStore =>
  restateStore({ url: server.url, adminUrl: server.adminUrl, timeoutMs: 10_000 });

/** The contract's tests each expect an empty store: every run the server holds is deleted. */
async function emptied(): Promise<JournalStore> {
  const store = storeOf();
  for (const run of await store.list()) await store.delete(run.runId);
  return store;
}

describe('restateStore', { timeout: 30_000 }, () => {
  describeJournalStoreContract('restateStore', emptied);

  it('fences: once another holder acquires a run, the earlier one can write nothing more, released or not', async () => {
    const first = await emptied();
    const second = storeOf();
    await first.append('fenced', startEntry('fenced'));
    const release = await first.acquire?.('fenced');
    await first.append('fenced', { type: 'note', n: 1 });
    const releaseSecond = await second.acquire?.('fenced');
    await journalErrorOf(first.append('fenced', { type: 'note', n: 2 }), 'run-busy');
    await second.append('fenced', { type: 'note', n: 3 });
    // The later holder lets the run go (it parks, or ends): the earlier one is still fenced,
    // with its claim or without one.
    await releaseSecond?.();
    await journalErrorOf(first.append('fenced', { type: 'note', n: 4 }), 'run-busy');
    await release?.();
    await journalErrorOf(first.append('fenced', { type: 'note', n: 5 }), 'run-busy');
    // Whoever claims it next writes again.
    await first.acquire?.('fenced');
    await first.append('fenced', { type: 'note', n: 6 });
    expect(((await second.read('fenced')) ?? []).map((e) => e.n)).toEqual([undefined, 1, 3, 6]);
  });

  it('refuses a malformed request to the journal object rather than failing on it', async () => {
    const store = await emptied();
    await store.append('raw', startEntry('raw'));
    const post = async (handler: string, body: unknown) => {
      const response = await fetch(`${server.url}/statecraftJournal/raw/${handler}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await response.json()) as { ok: boolean; reason?: string };
    };
    expect(await post('append', {})).toMatchObject({ ok: false, reason: 'invalid-entry' });
    expect(await post('append', { lines: ['not json'] })).toMatchObject({ ok: false });
    expect(await post('post', {})).toMatchObject({ ok: false, reason: 'invalid-entry' });
    expect(await post('acquire', 42)).toMatchObject({ ok: false, reason: 'invalid-entry' });
    // The run is not blocked behind them.
    expect(await store.read('raw')).toHaveLength(1);
  });

  it('sends un-awaited appends together, in order, and fails those queued behind a failed one', async () => {
    const store = await emptied();
    await store.append('batched', startEntry('batched'));
    const writes = Array.from({ length: 200 }, (_, n) => store.append('batched', { type: 'n', n }));
    await Promise.all(writes);
    const entries = (await store.read('batched')) ?? [];
    expect(entries.slice(1).map((e) => e.n)).toEqual(Array.from({ length: 200 }, (_, n) => n));

    // An unknown run: the first request fails, and so does every line queued behind it.
    const failed = await Promise.allSettled([
      store.append('no-such-run', { type: 'n', n: 1 }),
      store.append('no-such-run', { type: 'n', n: 2 }),
      store.append('no-such-run', { type: 'n', n: 3 }),
    ]);
    expect(failed.map((f) => f.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await store.read('no-such-run')).toBeUndefined();
  });

  it('names each bad option at construction', () => {
    const error = (() => {
      try {
        restateStore({ url: 'localhost:8080', timeoutMs: -1, retries: 3 } as never);
      } catch (e) {
        return e;
      }
    })();
    expect(ConfigError.isInstance(error)).toBe(true);
    const options = (error as ConfigError).problems.map((p) => p.option).sort();
    expect(options).toEqual(['retries', 'timeoutMs', 'url']);
  });

  it('says list() needs the admin API when neither it nor the workers have its address', async () => {
    const store = restateStore({ url: server.url });
    const error = await store.list().catch((e: unknown) => e);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).option).toBe('adminUrl');
    expect(String(error)).toMatch(/give it to serveWorker \/ serveCluster/);
  });

  it('is refused by workers without a secret when it has one, rather than use an open deployment', async () => {
    const secret = 'a-secret-these-workers-were-never-given';
    const error = await restateStore({ url: server.url, secret })
      .read('any')
      .catch((e: unknown) => e);
    expect(RestateCredentialError.isInstance(error)).toBe(true);
    expect((error as RestateCredentialError).reason).toBe('unexpected');
    expect(String(error)).toMatch(/give serveWorker \/ serveCluster the same `secret`/);
    // Nor does restateRuns submit a run there.
    const runs = restateRuns({ url: server.url, secret });
    await expect(runs.submit('never-1', 'trip', 'trip 1')).rejects.toMatchObject({
      code: 'RESTATE_CREDENTIAL',
      reason: 'unexpected',
    });
    expect(await restateRuns({ url: server.url }).status('never-1')).toBeUndefined();
  });

  it('sends its headers with every request, and says to when a proxy refuses it', async () => {
    // A stand-in for a proxy in front of the ingress that wants its own bearer token.
    const proxy = http.createServer((request, response) => {
      const allowed = request.headers.authorization === 'Bearer proxy-key';
      response.writeHead(allowed ? 200 : 401, { 'content-type': 'application/json' });
      response.end(JSON.stringify(allowed ? { ok: true, value: null } : { message: 'no key' }));
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const { port } = proxy.address() as { port: number };
    try {
      const url = `http://127.0.0.1:${port}`;
      const headers = { authorization: 'Bearer proxy-key' };
      expect(await restateStore({ url, headers }).read('behind-proxy')).toBeUndefined();
      const error = await restateStore({ url })
        .read('behind-proxy')
        .catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'RESTATE_REQUEST_ERROR', status: 401 });
      expect(String(error)).toMatch(/no key.*pass it with the `headers` option/);
    } finally {
      await new Promise((resolve) => proxy.close(resolve));
    }
  });

  it('fails a request to a server that is not there with RestateRequestError, within its timeout', async () => {
    const store = restateStore({ url: 'http://127.0.0.1:9', timeoutMs: 2_000 });
    await expect(store.read('any')).rejects.toMatchObject({ code: 'RESTATE_REQUEST_ERROR' });
  });
});
