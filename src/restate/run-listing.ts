import * as restate from '@restatedev/restate-sdk';
import type { RunListing } from '../durable/stores/journal-store.js';
import { compareListings } from '../durable/stores/journal-store.js';
import { admit } from './admission.js';
import type { Credential } from './credential.js';
import { RestateHttp, type RestateHttpOptions } from './ingress.js';
import { type JournalListing, LISTING } from './journal-object.js';
import { RestateRequestError } from './request-error.js';
import { JOURNAL_SERVICE, LISTING_SERVICE } from './service-names.js';

// `list()` of a Restate store: every run's listing, kept beside its journal (journal-object.ts),
// read with one SQL query over Restate's state on the admin API, the only place that sees
// every key of a virtual object. Clients should never reach the admin API (it reads and
// changes everything), so they ask the workers, which do, on their private network: the
// `statecraftListing` service checks the client's credential like every other handler.

const LISTING_QUERY = `SELECT service_key, value_utf8 FROM state WHERE service_name = '${JOURNAL_SERVICE}' AND key = '${LISTING}'`;
/** Attempts of the listing query: its engine briefly fails while partitions move or start. */
const LISTING_ATTEMPTS = 5;

/** Every run the deployment holds, oldest first, read from the admin API at `admin`. */
export async function listRuns(admin: RestateHttp): Promise<RunListing[]> {
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
}

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

/** What the listing service answers: the runs, or that its workers were not given adminUrl. */
export type ListingReply =
  | { readonly ok: true; readonly value: RunListing[] }
  | { readonly ok: false; readonly reason: 'no-admin-url' };

export interface ListingServiceOptions {
  readonly credential?: Credential | undefined;
  /** Restate's admin API, as the workers reach it; without it the service says so. */
  readonly adminUrl?: string | undefined;
  readonly timeoutMs?: number | undefined;
  readonly http?: RestateHttpOptions | undefined;
}

export function listingService(options: ListingServiceOptions) {
  const { credential, adminUrl, timeoutMs = 30_000 } = options;
  const admin =
    adminUrl === undefined
      ? undefined
      : new RestateHttp(adminUrl, timeoutMs, { headers: options.http?.headers });
  return restate.service({
    name: LISTING_SERVICE,
    handlers: {
      async list(ctx: restate.Context): Promise<ListingReply> {
        admit(credential, ctx);
        if (admin === undefined) return { ok: false, reason: 'no-admin-url' };
        const value = await ctx.run('list runs', () => listRuns(admin), { maxRetryAttempts: 3 });
        return { ok: true, value };
      },
    },
  });
}
