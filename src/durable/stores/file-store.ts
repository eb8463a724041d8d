import {
  constants,
  type FileHandle,
  mkdir,
  open,
  readdir,
  readFile,
  unlink,
} from 'node:fs/promises';
import path from 'node:path';
import { isJournalEntry, type JournalEntry } from '../journal-entry.js';
import { entryLine, runExistsError, unknownRunError } from './entry-line.js';
import { parseJournalFile } from './journal-file-parser.js';
import {
  compareListings,
  type JournalStore,
  type RunListing,
  runListingOf,
} from './journal-store.js';
import { PerKeyQueue } from './per-key-queue.js';
import { assertValidRunId, isValidRunId } from './run-id.js';
import { acquireRunLock } from './run-lock.js';

const EXTENSION = '.jsonl';
/** Messages for a run (JournalStore.post): `<runId>.inbox`, JSON lines, beside its journal. */
const INBOX = '.inbox';
// O_APPEND: every write lands at the end of the file. No O_CREAT: only a `start` entry may
// create a run, and O_EXCL makes that creation fail if the run exists, even across processes.
const APPEND_TO_EXISTING = constants.O_RDWR | constants.O_APPEND;
const CREATE_FOR_APPEND = APPEND_TO_EXISTING | constants.O_CREAT | constants.O_EXCL;

/**
 * A journal store on one machine: `<dir>/<runId>.jsonl`, one JSON entry per line, the
 * directory created when first needed. Each append opens the file, writes its line, fsyncs
 * and closes before it resolves, so a confirmed entry survives `kill -9` and power loss.
 * One process writes a run at a time (the run host's job); reads may happen alongside.
 */
export function fileStore(dir: string): JournalStore {
  const root = path.resolve(dir);
  const fileOf = (runId: string) => path.join(root, `${runId}${EXTENSION}`);
  const queue = new PerKeyQueue();
  // Runs whose file this store has already cut back to its last complete entry (see
  // `openExisting`): a torn line left by a crash must not end up in the middle of the file.
  const tailChecked = new Set<string>();
  async function appendLine(runId: string, type: string, line: string): Promise<void> {
    const handle = type === 'start' ? await createJournal(runId) : await openExisting(runId, type);
    try {
      await handle.appendFile(`${line}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }

  async function createJournal(runId: string): Promise<FileHandle> {
    // Made on every start rather than once: one cheap call, and right even if it was removed.
    await mkdir(root, { recursive: true });
    const file = fileOf(runId);
    try {
      const handle = await open(file, CREATE_FOR_APPEND);
      tailChecked.add(runId);
      // The file's name must survive a power cut as well as its bytes.
      await syncDirectory(root).catch(async (error: unknown) => {
        await handle.close();
        throw error;
      });
      return handle;
    } catch (error) {
      if (!hasCode(error, 'EEXIST')) throw error;
    }
    // The file exists. With no complete entry in it, it is a start that crashed before it was
    // confirmed: that run never began, so starting it now is not starting it twice.
    const handle = await open(file, APPEND_TO_EXISTING);
    try {
      const { entries } = parseJournalFile(await handle.readFile(), file, runId);
      if (entries.length > 0) throw runExistsError(runId);
      await handle.truncate(0);
      tailChecked.add(runId);
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async function openExisting(runId: string, type: string): Promise<FileHandle> {
    const file = fileOf(runId);
    let handle: FileHandle;
    try {
      handle = await open(file, APPEND_TO_EXISTING);
    } catch (error) {
      throw hasCode(error, 'ENOENT') ? unknownRunError(runId, type) : error;
    }
    if (tailChecked.has(runId)) return handle;
    try {
      const bytes = await handle.readFile();
      const { entries, validLength } = parseJournalFile(bytes, file, runId);
      if (entries.length === 0) throw unknownRunError(runId, type);
      if (validLength < bytes.length) await handle.truncate(validLength);
      tailChecked.add(runId);
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async function readRun(runId: string): Promise<JournalEntry[] | undefined> {
    const file = fileOf(runId);
    let bytes: Buffer;
    try {
      bytes = await readFile(file);
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return undefined;
      throw error;
    }
    const { entries } = parseJournalFile(bytes, file, runId);
    // Only a torn start line: the run was never confirmed started.
    return entries.length === 0 ? undefined : entries;
  }

  return {
    async append(runId, entry) {
      const line = entryLine(runId, entry);
      await queue.run(runId, () => appendLine(runId, entry.type, line));
    },

    async read(runId) {
      assertValidRunId(runId);
      return readRun(runId);
    },

    async list() {
      let names: string[];
      try {
        names = await readdir(root);
      } catch (error) {
        if (hasCode(error, 'ENOENT')) return [];
        throw error;
      }
      const listings: RunListing[] = [];
      for (const name of names) {
        const runId = name.endsWith(EXTENSION) ? name.slice(0, -EXTENSION.length) : undefined;
        if (!isValidRunId(runId)) continue; // not a journal of ours
        // Read whole: a corrupt journal is reported here (naming file and line), not hidden.
        const entries = await readRun(runId);
        if (entries !== undefined) listings.push(runListingOf(entries));
      }
      return listings.sort(compareListings);
    },

    acquire(runId) {
      assertValidRunId(runId);
      return mkdir(root, { recursive: true }).then(() =>
        acquireRunLock(runId, path.join(root, `${runId}.lock`)),
      );
    },

    async delete(runId) {
      assertValidRunId(runId);
      await queue.run(runId, async () => {
        await unlink(fileOf(runId)).catch((error: unknown) => {
          if (!hasCode(error, 'ENOENT')) throw error;
        });
        tailChecked.delete(runId);
        await unlink(path.join(root, `${runId}${INBOX}`)).catch((error: unknown) => {
          if (!hasCode(error, 'ENOENT')) throw error;
        });
      });
    },

    async post(runId, message) {
      const line = entryLine(runId, message);
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

    async posted(runId) {
      assertValidRunId(runId);
      let text: string;
      try {
        text = await readFile(path.join(root, `${runId}${INBOX}`), 'utf8');
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
    },
  };
}

async function syncDirectory(directory: string): Promise<void> {
  // Windows cannot open a directory to fsync it; NTFS journals the new name by itself.
  if (process.platform === 'win32') return;
  const handle = await open(directory, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
