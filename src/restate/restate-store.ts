import { randomUUID } from 'node:crypto';
import type { JournalEntry } from '../durable/journal-entry.js';
import { JournalError } from '../durable/journal-error.js';
import { entryLine } from '../durable/stores/entry-line.js';
import {
  compareListings,
  type JournalStore,
  type RunListing,
} from '../durable/stores/journal-store.js';
import { assertValidRunId } from '../durable/stores/run-id.js';
import { ConfigError } from '../errors.js';
import { AppendBatches } from './append-batches.js';
import { RestateHttp, RestateRequestError } from './ingress.js';
import { type JournalListing, type JournalReply, LISTING } from './journal-object.js';
import { checkAddress, checkMs, optionProblems } from './option-checks.js';
import { JOURNAL_SERVICE } from './service-names.js';

export interface RestateStoreOptions {
  /** Restate's ingress, e.g. `http://127.0.0.1:8080`. */
  readonly url: string;
  /** Restate's admin API, e.g. `http://127.0.0.1:9070`: `list()` queries it. */
  readonly adminUrl?: string;
  /** Longest wait for one request, in milliseconds. Default 30 000. */
  readonly timeoutMs?: number;
}

const OPTIONS = ['url', 'adminUrl', 'timeoutMs'];

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
 */
export function restateStore(options: RestateStoreOptions): JournalStore {
  const { url, adminUrl, timeoutMs = 30_000 } = checkedOptions(options);
  const ingress = new RestateHttp(url, timeoutMs);
  const admin = adminUrl === undefined ? undefined : new RestateHttp(adminUrl, timeoutMs);
  /** This store's claim on each run it writes (see acquire). */
  const holders = new Map<string, string>();
  /** Runs this store just created: it holds them already, from their start entry. */
  const claimedAtStart = new Set<string>();
  const batches = new AppendBatches((runId, lines) =>
    call(runId, 'append', { lines, ...(holders.has(runId) && { holder: holders.get(runId) }) }),
  );

  async function call<T>(runId: string, handler: string, body?: unknown): Promise<T> {
    const reply = await ingress.post<JournalReply<T>>(
      `/${JOURNAL_SERVICE}/${encodeURIComponent(runId)}/${handler}`,
      body,
    );
    if (!reply.ok) throw new JournalError(reply.reason, reply.message, { runId });
    return reply.value;
  }

  return {
    async append(runId, entry) {
      const line = entryLine(runId, entry);
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
      return lines === null ? undefined : lines.map((line) => JSON.parse(line) as JournalEntry);
    },
    async list() {
      if (admin === undefined) {
        throw new ConfigError(
          'adminUrl',
          'restateStore: list() reads the runs from the admin API; give its address (e.g. http://127.0.0.1:9070)',
        );
      }
      const { rows } = await listingRows(admin);
      const listings: RunListing[] = rows.map((row) => {
        const listing = JSON.parse(row.value_utf8) as JournalListing;
        return {
          runId: row.service_key,
          kind: listing.kind === 'tool-loop' ? 'tool-loop' : 'chain',
          status: listing.status,
          startedAt: listing.startedAt,
        };
      });
      return listings.sort(compareListings);
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
      await call(runId, 'post', entryLine(runId, message));
    },
    async posted(runId) {
      assertValidRunId(runId);
      const lines = await call<string[]>(runId, 'posted');
      return lines.map((line) => JSON.parse(line) as JournalEntry);
    },
  };
}

const LISTING_QUERY = `SELECT service_key, value_utf8 FROM state WHERE service_name = '${JOURNAL_SERVICE}' AND key = '${LISTING}'`;
/** Attempts of the listing query: its engine briefly fails while partitions move or start. */
const LISTING_ATTEMPTS = 5;

async function listingRows(
  admin: RestateHttp,
): Promise<{ rows: { service_key: string; value_utf8: string }[] }> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await admin.post('/query', { query: LISTING_QUERY }, { accept: 'application/json' });
    } catch (error) {
      const transient = RestateRequestError.isInstance(error) && error.status >= 500;
      if (!transient || attempt >= LISTING_ATTEMPTS) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
    }
  }
}

function checkedOptions(options: RestateStoreOptions): RestateStoreOptions {
  const { problems } = optionProblems('restateStore', options, OPTIONS);
  checkAddress(problems, 'url', options.url, 'http://127.0.0.1:8080');
  checkAddress(problems, 'adminUrl', options.adminUrl, 'http://127.0.0.1:9070', true);
  checkMs(problems, 'timeoutMs', options.timeoutMs);
  problems.throwIfAny();
  return options;
}
