// `statecraft/durable`: the durable-run journal's entry types, the JournalStore interface a
// custom store implements, and the journal format version.

export {
  JOURNAL_FORMAT_VERSION,
  type JournalEntry,
  type RunStatus,
} from './durable/journal-entry.js';
export type { FileJournalStore } from './durable/stores/file-store.js';
export type { JournalStore, RunListing, UnreadableRun } from './durable/stores/journal-store.js';
export type { StoreOptions } from './durable/stores/store-options.js';
