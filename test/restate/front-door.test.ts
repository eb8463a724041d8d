// Q9 on Restate, for real: a deployment whose workers hold a secret refuses a client without
// it on every handler a client can reach, keeps the handlers only the workflow calls off the
// ingress, and keeps what it stores of a run sealed: neither attaching to a run's output nor
// the admin API's SQL shows what a tool returned. A client with the secret works as before.
import { randomBytes } from 'node:crypto';
import { JournalError, type JournalStore } from 'statecraft';
import { RestateCredentialError, restateRuns } from 'statecraft/restate';
import { describe, expect, it } from 'vitest';
import { describeJournalStoreContract } from '../durable/stores/journal-store-contract.js';
import { useDeployment } from './use-deployment.js';
import { CARD_NUMBER } from './workload.js';

const deployed = useDeployment({ processes: 1 });
/** In the run's input: sealed too, never readable on the admin API. */
const NOTE = 'SSN 078-05-1120';

const until = async (what: string, check: () => Promise<boolean>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

/** The credential error `work` fails with, checked to be one with `reason`. */
async function refused(work: Promise<unknown>, reason: string): Promise<RestateCredentialError> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(RestateCredentialError.isInstance(error), String(error)).toBe(true);
  expect((error as RestateCredentialError).reason).toBe(reason);
  return error as RestateCredentialError;
}

/** Every row of an admin SQL query, as text. */
async function adminRows(query: string): Promise<string> {
  const response = await fetch(`${deployed().server.adminUrl}/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query }),
  });
  expect(response.status).toBe(200);
  return response.text();
}

/** The journals the contract's tests expect to start from: none (every run is deleted). */
async function emptied(): Promise<JournalStore> {
  const { store } = deployed().runs({ timeoutMs: 10_000 });
  for (const run of await store.list()) await store.delete(run.runId);
  return store;
}

describe('statecraft on Restate, behind its front door', { timeout: 60_000 }, () => {
  // Sealed entries and signed requests change nothing a store promises.
  describeJournalStoreContract('restateStore with a secret', emptied);

  it('refuses a client without the secret on every handler it can reach; one with it works as before', async () => {
    const owner = deployed().runs();
    await owner.submit('card-1', 'card', `${NOTE}, card 1`);
    await until(
      'the run to wait for approval',
      async () => (await owner.status('card-1'))?.state === 'awaiting-approval',
    );
    const journal = (await owner.store.read('card-1')) ?? [];
    expect(JSON.stringify(journal)).toContain(CARD_NUMBER);

    const stranger = restateRuns({ url: deployed().server.url });
    const { store } = stranger;
    // Read: the journal, the inbox, the list of runs, the status.
    const error = await refused(store.read('card-1'), 'missing');
    expect(error.message).toMatch(/statecraftJournal\/card-1\/read was refused.*`secret`/);
    await refused(store.posted?.('card-1') ?? Promise.resolve(), 'missing');
    await refused(store.list(), 'missing');
    await refused(stranger.status('card-1'), 'missing');
    await refused(stranger.approvals.list('card-1'), 'missing');
    // Decide, through approvals or straight to the inbox.
    await refused(stranger.approvals.approve('card-1', 'p1'), 'missing');
    await refused(
      store.post?.('card-1', { type: 'decision', callId: 'p1', approved: true, at: Date.now() }) ??
        Promise.resolve(),
      'missing',
    );
    // Submit: refused before it takes the id.
    await refused(stranger.submit('card-2', 'card', 'card 2'), 'missing');
    expect(await owner.status('card-2')).toBeUndefined();
    // Fence, append, delete.
    await refused(store.acquire?.('card-1') ?? Promise.resolve(), 'missing');
    await refused(store.append('card-1', { type: 'forged', n: 1 }), 'missing');
    await refused(store.delete('card-1'), 'missing');

    // Another secret is refused too, and says so; so is a signature that is not one.
    const impostor = deployed().runs({ secret: 'not-the-deployment-secret-but-long-enough' });
    await refused(impostor.store.read('card-1'), 'mismatch');
    await refused(impostor.approvals.approve('card-1', 'p1'), 'mismatch');
    await refused(impostor.store.append('card-1', { type: 'forged', n: 2 }), 'mismatch');
    await refused(impostor.store.delete('card-1'), 'mismatch');
    for (const signature of ['v1=', 'v1=AAAA', 'forged']) {
      const response = await fetch(`${deployed().server.url}/statecraftJournal/card-1/delete`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-statecraft-signature': signature },
        body: 'null',
      });
      expect(response.status, signature).toBe(401);
      expect(await response.text()).toMatch(/statecraft-credential mismatch/);
    }

    // The handlers only the workflow calls are not on the ingress at all.
    for (const path of ['statecraftJournal/card-1/markWorkflow', 'statecraftRun/card-1/wake']) {
      const response = await fetch(`${deployed().server.url}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify('approval:p1'),
      });
      expect(response.status, path).toBe(400);
      expect(await response.text()).toMatch(/not public/);
    }

    // A raw submission without a signature takes its id (Restate runs a workflow once per id)
    // but runs nothing: the owner learns why, on the result and on submitting the id again.
    const raw = await fetch(`${deployed().server.url}/statecraftRun/card-3/run/send`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent: 'card', input: 'card 3' }),
    });
    expect(raw.status).toBe(202);
    const takenId = await refused(owner.result('card-3'), 'missing');
    expect(takenId.message).toMatch(/submitted without a valid credential.*new id/);
    await expect(owner.submit('card-3', 'card', 'card 3')).rejects.toSatisfy(
      (e: unknown) => JournalError.isInstance(e) && e.reason === 'run-exists',
    );

    // Nothing the stranger did changed the run: the owner approves it and it ends.
    expect(await owner.approvals.approve('card-1', 'p1')).toBe(true);
    const result = await owner.result<{ text: string }>('card-1');
    expect(result.text).toBe(`card 1: ${CARD_NUMBER}, charge-1`);
    const after = (await owner.store.read('card-1')) ?? [];
    expect(after.slice(0, journal.length)).toEqual(journal);
    expect(after.some((entry) => entry.type === 'forged')).toBe(false);
    expect((await owner.store.list()).map((run) => run.runId)).toContain('card-1');

    // Attaching to the run's output, which Restate's ingress serves to anyone, gives it sealed.
    const attached = await fetch(
      `${deployed().server.url}/restate/workflow/statecraftRun/card-1/attach`,
    );
    const output = await attached.text();
    expect(output).toMatch(/"sealed":"v1\./);
    expect(output).not.toContain(CARD_NUMBER);
    await refused(stranger.result('card-1'), 'missing');
    await refused(impostor.result('card-1'), 'mismatch');

    // Nor does the admin API's SQL show it: every state value and journal entry is sealed.
    const state = await adminRows('SELECT service_name, service_key, key, value_utf8 FROM state');
    expect(state).toContain('card-1');
    // Journal payloads come as protobuf (hex) and as arrays of byte values.
    const steps = await adminRows('SELECT raw, entry_json FROM sys_journal');
    expect(steps).toContain('card-1');
    for (const secret of [CARD_NUMBER, NOTE]) {
      expect(state).not.toContain(secret);
      expect(steps).not.toContain(Buffer.from(secret).toString('hex'));
      expect(steps).not.toContain([...Buffer.from(secret)].join(','));
    }
    // And Restate, which keeps every request's headers, never saw the secret.
    const secret = String(deployed().secret);
    expect(steps).not.toContain(secret);
    expect(steps).not.toContain(Buffer.from(secret).toString('hex'));
  });

  it('replaces the secret without losing a run: one parked under the old secret ends under the new', async () => {
    const old = String(deployed().secret);
    const fresh = randomBytes(32).toString('base64url');
    const before = deployed().runs();
    await before.submit('rotate-1', 'card', 'card 7');
    await until(
      'the run to wait for approval',
      async () => (await before.status('rotate-1'))?.state === 'awaiting-approval',
    );
    // The new secret first (it signs and seals), the old one still accepted and opening.
    await deployed().restartWorkers([fresh, old]);
    const during = deployed().runs();
    expect(await during.approvals.approve('rotate-1', 'p7')).toBe(true);
    const result = await during.result<{ text: string }>('rotate-1');
    expect(result.text).toBe(`card 7: ${CARD_NUMBER}, charge-7`);
    // Its journal holds entries sealed with each; a client with the old one alone is let in
    // but opens only the older ones.
    expect((await during.store.read('rotate-1'))?.at(-1)).toMatchObject({ type: 'end' });
    await refused(before.store.read('rotate-1'), 'mismatch');

    // Once the old secret is dropped, it is refused; the new one alone runs new runs.
    await deployed().restartWorkers(fresh);
    const after = deployed().runs();
    await after.submit('rotate-2', 'trip', 'trip 8');
    const trip = await after.result<{ text: string }>('rotate-2');
    expect(trip.text).toBe('trip 8: reserve-8, charge-8, ship-8');
    await refused(before.status('rotate-2'), 'mismatch');
  });
});
