import type { JournalEntry } from '../journal-entry.js';
import { entryLine, runExistsError, unknownRunError } from './entry-line.js';
import {
  compareListings,
  type JournalStore,
  type RunListing,
  runListingOf,
} from './journal-store.js';
import { assertValidRunId } from './run-id.js';
import { checkStoreOptions, type StoreOptions } from './store-options.js';

/**
 * A journal store in this process's memory, for tests and for runs that need replay but not
 * crash survival. Entries are kept as JSON text: every `read` parses fresh copies, so neither
 * the appender nor a reader can change what was journaled.
 */
export function memoryStore(options?: StoreOptions): JournalStore {
  const { timeoutMs, maxEntryBytes } = checkStoreOptions('memoryStore', options);
  const runs = new Map<string, string[]>();
  const inboxes = new Map<string, string[]>();

  const parsed = (lines: readonly string[]): JournalEntry[] =>
    lines.map((line) => JSON.parse(line) as JournalEntry);

  return {
    timeoutMs,

    async append(runId, entry) {
      const line = entryLine(runId, entry, maxEntryBytes);
      const lines = runs.get(runId);
      if (entry.type === 'start') {
        if (lines !== undefined) throw runExistsError(runId);
        runs.set(runId, [line]);
      } else {
        if (lines === undefined) throw unknownRunError(runId, entry.type);
        lines.push(line);
      }
    },

    async read(runId) {
      assertValidRunId(runId);
      const lines = runs.get(runId);
      return lines === undefined ? undefined : parsed(lines);
    },

    async list() {
      const listings: RunListing[] = [];
      for (const lines of runs.values()) {
        // A listing needs only the first and last entries (a run is never empty); parse those.
        const firstAndLast = [lines[0], lines.at(-1)].filter((line) => line !== undefined);
        listings.push(runListingOf(parsed(firstAndLast)));
      }
      return listings.sort(compareListings);
    },

    async delete(runId) {
      assertValidRunId(runId);
      runs.delete(runId);
      inboxes.delete(runId);
    },

    async post(runId, message) {
      const line = entryLine(runId, message, maxEntryBytes);
      if (!runs.has(runId)) throw unknownRunError(runId, message.type);
      const inbox = inboxes.get(runId) ?? [];
      inbox.push(line);
      inboxes.set(runId, inbox);
    },

    async posted(runId) {
      assertValidRunId(runId);
      return parsed(inboxes.get(runId) ?? []);
    },
  };
}
