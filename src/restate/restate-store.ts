import { randomUUID } from 'node:crypto';
import type { JournalEntry } from '../durable/journal-entry.js';
import { JournalError } from '../durable/journal-error.js';
import { entryLine } from '../durable/stores/entry-line.js';
import type { JournalStore } from '../durable/stores/journal-store.js';
import { assertValidRunId } from '../durable/stores/run-id.js';
import { ConfigError } from '../errors.js';
import { type Describes, describeOptions } from '../options/describe.js';
import { AppendBatches } from './append-batches.js';
import { credentialOf, SECRET } from './credential.js';
import { RestateCredentialError } from './credential-error.js';
import { RestateHttp } from './ingress.js';
import type { JournalReply } from './journal-object.js';
import { address, headers, milliseconds, parseOptions } from './option-checks.js';
import { type ListingReply, listRuns } from './run-listing.js';
import { openLine, sealLine } from './sealing.js';
import { JOURNAL_SERVICE, LISTING_SERVICE } from './service-names.js';

export interface RestateStoreOptions {
  /** Restate's ingress, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /**
   * The secret the deployment's workers were given (`serveWorker` / `serveCluster`): every
   * request is signed with it, and the journals are sealed with it. At least 32 characters;
   * while it is replaced, a list: the first signs and seals, each one opens.
   */
  readonly secret?: string | readonly string[];
  /**
   * Restate's admin API, e.g. `http://127.0.0.1:9070`, for an operator's process on the
   * private network: `list()` then queries it itself instead of asking the workers.
   */
  readonly adminUrl?: string;
  /** Sent with every request, e.g. `{ authorization: 'Bearer …' }` for Restate Cloud or a proxy. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Longest wait for one request, in milliseconds. Default 30 000. */
  readonly timeoutMs?: number;
}

/** restateStore's options described once (see src/options/describe.ts). */
export const RESTATE_STORE_OPTIONS = describeOptions('restateStore', {
  url: address('http://127.0.0.1:8080', { required: true, defaultText: 'required' }),
  secret: SECRET,
  adminUrl: address('http://127.0.0.1:9070', { defaultText: 'none' }),
  headers: headers(),
  timeoutMs: milliseconds({ default: 30_000 }),
});

// tsc fails here, naming the option, when the interface and its description drift apart.
const _described: Describes<RestateStoreOptions, typeof RESTATE_STORE_OPTIONS> = true;

/**
 * A JournalStore whose journals live in Restate (SPEC X3), as the state of the
 * `statecraftJournal` virtual object: every process and machine that reaches the server sees
 * the same runs, and they survive the server's kill -9. It serves `chain.invoke(input,
 * { runId, store })`, `resume`, `approvals(store)` and the runs of the `statecraftRun`
 * workflow alike, so moving from `fileStore` to Restate changes the store, not the code.
 *
 * An append resolves once Restate has committed it. Appends made while one is on its way go
 * together in the next request, so a run's un-awaited entries cost one round trip, not one
 * each. `acquire` fences: a worker that takes a run over makes every later write of the
 * earlier holder fail with `run-busy`, so a zombie attempt can never interleave its entries.
 * With a `secret`, every request is signed and every entry sealed (see credential.ts).
 */
export function restateStore(options: RestateStoreOptions): JournalStore {
  const { timeoutMs } = parseOptions(RESTATE_STORE_OPTIONS, options);
  const { url, adminUrl, headers } = options;
  const credential = credentialOf(options.secret);
  const ingress = new RestateHttp(url, timeoutMs, { headers, credential });
  const admin =
    adminUrl === undefined ? undefined : new RestateHttp(adminUrl, timeoutMs, { headers });
  /** This store's claim on each run it writes (see acquire). */
  const holders = new Map<string, string>();
  /** Runs this store just created: it holds them already, from their start entry. */
  const claimedAtStart = new Set<string>();
  const batches = new AppendBatches((runId, lines) =>
    call(runId, 'append', { lines, ...(holders.has(runId) && { holder: holders.get(runId) }) }),
  );

  async function call<T>(runId: string, handler: string, body?: unknown): Promise<T> {
    const reply = await ingress.invoke<JournalReply<T>>(
      { service: JOURNAL_SERVICE, key: runId, handler },
      body,
    );
    if (!reply.ok) throw new JournalError(reply.reason, reply.message, { runId });
    return reply.value;
  }

  /** The line Restate keeps for `entry`: sealed when this store has a secret. */
  function keptLine(runId: string, entry: JournalEntry): string {
    const line = entryLine(runId, entry);
    return credential ? sealLine(credential, runId, entry, line) : line;
  }

  function entryOf(runId: string, line: string): JournalEntry {
    const opened = openLine(credential, runId, line);
    if (opened.ok) return opened.entry as JournalEntry;
    throw new RestateCredentialError(
      `${url}/${JOURNAL_SERVICE}/${runId}`,
      200,
      opened.reason,
      `the journal of run '${runId}' is sealed with ${opened.reason === 'missing' ? 'a secret' : 'another secret'}`,
    );
  }

  return {
    // AppendBatches fails the lines queued behind a refused request with it.
    orderedAppends: true,
    async append(runId, entry) {
      const line = keptLine(runId, entry);
      if (entry.type !== 'start') return batches.add(runId, line);
      // A run's creator holds it from its start entry (see acquire): one request, not two.
      const holder = randomUUID();
      holders.set(runId, holder);
      try {
        await batches.add(runId, line);
        claimedAtStart.add(runId);
      } catch (error) {
        if (holders.get(runId) === holder) holders.delete(runId);
        throw error;
      }
    },
    async read(runId) {
      assertValidRunId(runId);
      const lines = await call<string[] | null>(runId, 'read');
      return lines === null ? undefined : lines.map((line) => entryOf(runId, line));
    },
    async list() {
      if (admin !== undefined) return listRuns(admin);
      const reply = await ingress.invoke<ListingReply>({
        service: LISTING_SERVICE,
        handler: 'list',
      });
      if (reply.ok) return reply.value;
      throw new ConfigError(
        'adminUrl',
        "restateStore: list() asks the workers, which read the runs from Restate's admin API, and they have no adminUrl: give it to serveWorker / serveCluster (or, in an operator's process on the private network, to this store)",
      );
    },
    async delete(runId) {
      assertValidRunId(runId);
      await call(runId, 'delete');
    },
    async acquire(runId) {
      assertValidRunId(runId);
      let holder = holders.get(runId);
      if (holder === undefined || !claimedAtStart.delete(runId)) {
        holder = randomUUID();
        await call(runId, 'acquire', holder);
        holders.set(runId, holder);
      }
      const claim = holder;
      // Nothing to tell the server: a claim stands until another writer claims the run, so a
      // writer that let it go and is still around (a zombie attempt) stays fenced out.
      return async () => {
        if (holders.get(runId) !== claim) return;
        await batches.settled(runId);
        holders.delete(runId);
      };
    },
    async post(runId, message) {
      await call(runId, 'post', keptLine(runId, message));
    },
    async posted(runId) {
      assertValidRunId(runId);
      const lines = await call<string[]>(runId, 'posted');
      return lines.map((line) => entryOf(runId, line));
    },
  };
}
