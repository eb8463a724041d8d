import { open, readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { bounded } from '../bounded.js';
import {
  isEndEntry,
  isJournalEntry,
  type JournalEntry,
  type RunKind,
  type StartEntry,
} from '../journal-entry.js';
import { JournalError } from '../journal-error.js';
import { entryLine, unknownRunError } from './entry-line.js';
import { checkFileStoreArguments } from './file-store-arguments.js';
import { parseJournalFile } from './journal-file-parser.js';
import { JournalFiles } from './journal-files.js';
import {
  compareListings,
  isReadable,
  type JournalStore,
  type RunListing,
  runListingOf,
  type UnreadableRun,
} from './journal-store.js';
import { PerKeyQueue } from './per-key-queue.js';
import { RunClaims } from './run-claims.js';
import { assertValidRunId, isValidRunId } from './run-id.js';
import { type IndexedRun, RunIndex } from './run-index.js';
import { hasCode, storeFault } from './store-fault.js';
import type { StoreOptions } from './store-options.js';

const EXTENSION = '.jsonl';
/** Messages for a run (JournalStore.post): `<runId>.inbox`, JSON lines, beside its journal. */
const INBOX = '.inbox';
/** Journals list() reads at once when the index does not answer for them. */
const READS_AT_ONCE = 16;

/** `fileStore`'s own additions to a JournalStore. */
export interface FileJournalStore extends JournalStore {
  /** The folder the journals are kept in, resolved. */
  readonly dir: string;
  readonly timeoutMs: number;
  /**
   * Lets go of a run whose holder cannot be asked to: a process on another machine sharing
   * this folder, which is known to be gone. Resolves false when no one holds the run. A live
   * holder on this machine is never cleared (a JournalError `run-busy`). Clearing a holder
   * that still runs is safe for the journal (its later writes are refused) but not for its
   * effects: make sure it is gone.
   */
  clearHolder(runId: string): Promise<boolean>;
}

/**
 * A journal store on one machine: `<dir>/<runId>.jsonl`, one JSON entry per line, the
 * directory created when first needed. Each append opens the file, writes its line, fsyncs
 * and closes before it resolves, so a confirmed entry survives `kill -9` and power loss.
 *
 * One process writes a run at a time, decided in the journal itself (run-claim.ts): taking a
 * run over is exclusive under any interleaving of processes, and entries of a writer that was
 * superseded are refused. A failed append (a full disk) leaves at most a torn last line, which
 * the next append cuts off before it writes. Every fault is a JournalError whose reason says
 * what to do (`no-space`, `no-permission`, `too-large`, `timed-out`, `store-failed`), and every
 * operation gives up after `timeoutMs`. `list()` reads an index, not every journal.
 */
export function fileStore(dir: string, options?: StoreOptions): FileJournalStore {
  const { timeoutMs, maxEntryBytes } = checkFileStoreArguments(dir, options);
  const root = path.resolve(dir);
  const files = new JournalFiles(root);
  const claims = new RunClaims(files);
  const index = new RunIndex(root);
  const queue = new PerKeyQueue();
  const timed = <T>(work: () => Promise<T>, doing: string, runId?: string) =>
    bounded(
      work().catch((error: unknown) => {
        throw storeFault(error, doing, { ...(runId !== undefined && { runId }) });
      }),
      timeoutMs,
      doing,
      runId,
    );

  async function appendEntry(runId: string, entry: JournalEntry, line: string): Promise<void> {
    if (entry.type === 'start') {
      await claims.create(runId, line);
      // entryLine checked it is a whole start entry.
      const { kind, startedAt } = entry as StartEntry;
      await index.started(runId, kind, startedAt);
      return;
    }
    await claims.append(runId, line, isEndEntry(entry));
    if (isEndEntry(entry)) await index.ended(runId, entry.status);
  }

  async function readRun(runId: string): Promise<JournalEntry[] | undefined> {
    const bytes = await files.read(runId);
    if (bytes === undefined) return undefined;
    const { entries } = parseJournalFile(bytes, files.journal(runId), runId);
    // Only a torn start line: the run was never confirmed started.
    return entries.length === 0 ? undefined : entries;
  }

  /** A journal's listing, read from its file; undefined when it is not a journal of ours. */
  async function listingOf(runId: string): Promise<RunListing | UnreadableRun | undefined> {
    let bytes: Buffer | undefined;
    try {
      bytes = await files.read(runId);
    } catch (error) {
      // A folder named like a journal, or one we may not read: not one of ours to list.
      if (hasCode(error, 'EISDIR')) return undefined;
      throw error;
    }
    if (bytes === undefined) return undefined; // deleted while listing
    try {
      const { entries } = parseJournalFile(bytes, files.journal(runId), runId);
      return entries.length === 0 ? undefined : runListingOf(entries);
    } catch (error) {
      if (!JournalError.isInstance(error)) throw error;
      // Not a statecraft journal at all (its first line is no start entry): someone else's file.
      if (error.line === 1 && error.reason === 'corrupt' && !startsLikeAJournal(bytes)) {
        return undefined;
      }
      const start = startOf(bytes);
      return {
        runId,
        status: 'unreadable',
        reason: error.reason === 'newer-version' ? 'newer-version' : 'corrupt',
        problem: error.message,
        ...start,
      };
    }
  }

  async function list(): Promise<readonly (RunListing | UnreadableRun)[]> {
    let names: string[];
    try {
      names = await readdir(root);
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return [];
      throw error;
    }
    const known = await index.load();
    const listings: (RunListing | UnreadableRun)[] = [];
    const toRead: string[] = [];
    for (const name of names) {
      const runId = name.endsWith(EXTENSION) ? name.slice(0, -EXTENSION.length) : undefined;
      if (!isValidRunId(runId)) continue; // not a journal of ours (the index among them)
      const indexed = known.get(runId);
      if (indexed && isEnded(indexed)) {
        listings.push({
          runId,
          kind: indexed.kind,
          status: indexed.status,
          startedAt: indexed.startedAt,
        });
      } else toRead.push(runId);
    }
    // Running runs, and runs the index missed: read, a few at a time.
    const learned: RunListing[] = [];
    for (let from = 0; from < toRead.length; from += READS_AT_ONCE) {
      const batch = toRead.slice(from, from + READS_AT_ONCE);
      for (const listing of await Promise.all(batch.map(listingOf))) {
        if (listing === undefined) continue;
        listings.push(listing);
        if (isReadable(listing)) learned.push(listing);
      }
    }
    await index.learned(learned, known);
    await index.compact(listings.filter(isReadable));
    await files.removeStaleTemporaries(names);
    return listings.sort(compareListings);
  }

  return {
    dir: root,
    timeoutMs,

    async append(runId, entry) {
      const line = entryLine(runId, entry, maxEntryBytes);
      await timed(
        () => queue.run(runId, () => appendEntry(runId, entry, line)),
        `appending a "${entry.type}" entry`,
        runId,
      );
    },

    async read(runId) {
      assertValidRunId(runId);
      return timed(() => readRun(runId), 'reading the journal', runId);
    },

    list: () => timed(list, 'listing the runs'),

    acquire(runId) {
      assertValidRunId(runId);
      return timed(() => queue.run(runId, () => claims.acquire(runId)), 'claiming the run', runId);
    },

    clearHolder(runId) {
      assertValidRunId(runId);
      return timed(
        () => queue.run(runId, () => claims.clearHolder(runId)),
        'clearing the run',
        runId,
      );
    },

    async delete(runId) {
      assertValidRunId(runId);
      await timed(
        () =>
          queue.run(runId, async () => {
            await files.remove(files.journal(runId));
            claims.forget(runId);
            await files.remove(path.join(root, `${runId}${INBOX}`));
            await index.deleted(runId);
          }),
        'deleting the run',
        runId,
      );
    },

    async post(runId, message) {
      const line = entryLine(runId, message, maxEntryBytes);
      await timed(
        async () => {
          if ((await readRun(runId)) === undefined) throw unknownRunError(runId, message.type);
          // Any process may post: O_APPEND keeps each line whole, fsync keeps it.
          const handle = await open(path.join(root, `${runId}${INBOX}`), 'a');
          try {
            await handle.appendFile(`${line}\n`);
            await handle.sync();
          } finally {
            await handle.close();
          }
        },
        `posting a "${message.type}" message`,
        runId,
      );
    },

    async posted(runId) {
      assertValidRunId(runId);
      return timed(() => readInbox(path.join(root, `${runId}${INBOX}`)), 'reading messages', runId);
    },
  };
}

function isEnded(indexed: IndexedRun): indexed is Required<IndexedRun> {
  return (
    indexed.kind !== undefined && indexed.startedAt !== undefined && indexed.status !== undefined
  );
}

/** Whether a file's first line is at least a start entry of some run (maybe a broken one). */
function startsLikeAJournal(bytes: Buffer): boolean {
  try {
    const first = JSON.parse(firstLine(bytes)) as unknown;
    return isJournalEntry(first) && first.type === 'start';
  } catch {
    return false;
  }
}

/** The kind and start time of an unreadable journal, when its first line tells them. */
function startOf(bytes: Buffer): { kind?: RunKind; startedAt?: number } {
  try {
    const first = JSON.parse(firstLine(bytes)) as { kind?: unknown; startedAt?: unknown };
    return {
      ...((first.kind === 'chain' || first.kind === 'tool-loop') && { kind: first.kind }),
      ...(typeof first.startedAt === 'number' && { startedAt: first.startedAt }),
    };
  } catch {
    return {};
  }
}

function firstLine(bytes: Buffer): string {
  const end = bytes.indexOf(0x0a);
  return bytes.toString('utf8', 0, end === -1 ? bytes.length : end);
}

async function readInbox(file: string): Promise<JournalEntry[]> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if (hasCode(error, 'ENOENT')) return [];
    throw error;
  }
  // A line torn by a crash of its poster is not a message: only whole lines count.
  const messages: JournalEntry[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const message = JSON.parse(line) as unknown;
      if (isJournalEntry(message)) messages.push(message);
    } catch {
      // torn: skipped
    }
  }
  return messages;
}
