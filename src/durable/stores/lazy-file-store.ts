import path from 'node:path';
import type { FileJournalStore } from './file-store.js';
import { checkFileStoreArguments } from './file-store-arguments.js';
import { assertValidRunId } from './run-id.js';
import type { StoreOptions } from './store-options.js';

/**
 * The public `fileStore`: the same store as file-store.ts, whose file code (claims, index,
 * parser: a dozen modules) loads on the store's first operation instead of with `statecraft`,
 * so an app that never keeps runs on disk does not pay for it at import. Arguments are
 * checked at once, as before, and every method keeps its sync/async shape: the run-id checks
 * that threw synchronously still do.
 */
export function fileStore(dir: string, options?: StoreOptions): FileJournalStore {
  const { timeoutMs } = checkFileStoreArguments(dir, options);
  // file-store.ts's store has every optional JournalStore method.
  let opened: Promise<Required<FileJournalStore>> | undefined;
  const store = (): Promise<Required<FileJournalStore>> => {
    opened ??= import('./file-store.js').then(
      (module) => module.fileStore(dir, options) as Required<FileJournalStore>,
    );
    return opened;
  };
  return {
    dir: path.resolve(dir),
    timeoutMs,
    append: async (runId, entry) => (await store()).append(runId, entry),
    read: async (runId) => (await store()).read(runId),
    list: async () => (await store()).list(),
    acquire(runId) {
      assertValidRunId(runId);
      return store().then((opened) => opened.acquire(runId));
    },
    clearHolder(runId) {
      assertValidRunId(runId);
      return store().then((opened) => opened.clearHolder(runId));
    },
    delete: async (runId) => (await store()).delete(runId),
    post: async (runId, message) => (await store()).post(runId, message),
    posted: async (runId) => (await store()).posted(runId),
  };
}
