import { constants, type FileHandle, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { runExistsError, unknownRunError } from './entry-line.js';
import { parseJournalFile } from './journal-file-parser.js';
import { INDEX_FILE } from './run-index.js';
import { hasCode } from './store-fault.js';

// O_APPEND: every write lands at the end of the file, whole. No O_CREAT: only a `start` entry
// may create a run, and O_EXCL makes that creation fail if the run exists, even across
// processes.
const APPEND_TO_EXISTING = constants.O_RDWR | constants.O_APPEND;
const CREATE_FOR_APPEND = APPEND_TO_EXISTING | constants.O_CREAT | constants.O_EXCL;
/** A rewrite of the index left by a process that died mid-way is removed after this long. */
const STALE_TEMPORARY_MS = 60_000;

/** The files of a fileStore's folder, and the few ways they are opened. */
export class JournalFiles {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  journal(runId: string): string {
    return path.join(this.root, `${runId}.jsonl`);
  }

  /** The journal's bytes; undefined when there is no such file. */
  async read(runId: string): Promise<Buffer | undefined> {
    try {
      return await readFile(this.journal(runId));
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return undefined;
      throw error;
    }
  }

  /**
   * Creates a run's journal for its start line. A file already there with no complete entry
   * in it is a start that crashed before it was confirmed: that run never began, so starting
   * it now is not starting it twice (it is emptied and reused).
   */
  async create(runId: string): Promise<FileHandle> {
    // Made on every start rather than once: one cheap call, and right even if it was removed.
    await mkdir(this.root, { recursive: true });
    const file = this.journal(runId);
    try {
      const handle = await open(file, CREATE_FOR_APPEND);
      // The file's name must survive a power cut as well as its bytes.
      await syncDirectory(this.root).catch(async (error: unknown) => {
        await handle.close();
        throw error;
      });
      return handle;
    } catch (error) {
      if (!hasCode(error, 'EEXIST')) throw error;
    }
    const handle = await open(file, APPEND_TO_EXISTING);
    try {
      const { entries } = parseJournalFile(await handle.readFile(), file, runId);
      if (entries.length > 0) throw runExistsError(runId);
      await handle.truncate(0);
      return handle;
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Opens a run's journal to append to it; an unknown run is a JournalError `unknown-run`. */
  async openToAppend(runId: string, type: string): Promise<FileHandle> {
    try {
      return await open(this.journal(runId), APPEND_TO_EXISTING);
    } catch (error) {
      throw hasCode(error, 'ENOENT') ? unknownRunError(runId, type) : error;
    }
  }

  /** Removes a file; one that is not there is fine. */
  async remove(file: string): Promise<void> {
    await unlink(file).catch((error: unknown) => {
      if (!hasCode(error, 'ENOENT')) throw error;
    });
  }

  /** Removes rewrites of the index that a process left by dying mid-way (`names`: the folder's). */
  async removeStaleTemporaries(names: readonly string[]): Promise<void> {
    for (const name of names) {
      if (!name.startsWith(`${INDEX_FILE}.`) || !name.endsWith('.tmp')) continue;
      const file = path.join(this.root, name);
      try {
        if (Date.now() - (await stat(file)).mtimeMs > STALE_TEMPORARY_MS) await this.remove(file);
      } catch {
        // Gone meanwhile, or not ours to remove: left.
      }
    }
  }
}

/** Writes `text` whole at the end of the open file (O_APPEND) and fsyncs it. */
export async function appendDurably(handle: FileHandle, text: string | Buffer): Promise<void> {
  await handle.appendFile(text);
  await handle.sync();
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
