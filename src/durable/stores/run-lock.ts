import { constants, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { JournalError } from '../journal-error.js';

/** Who holds a run: written into its lock file. */
interface Holder {
  readonly pid: number;
  readonly host: string;
}

/**
 * One process at a time writes a run's journal: two processes resuming the same run would
 * both issue its next calls and interleave their entries. The lock is a file created with
 * O_EXCL holding the holder's pid and host. A lock left by a process that died (the kill -9
 * a durable run is made for) is taken over: on this host, a pid that no longer runs is dead.
 * A live holder on this host, or any holder on another host (whose liveness cannot be told
 * from here), makes the run busy: a JournalError `run-busy` that names the holder and the
 * file to remove if that process is gone. The holding process itself may take its lock again
 * (its runs of one id are one run, see LiveRuns).
 */
export async function acquireRunLock(runId: string, file: string): Promise<() => Promise<void>> {
  const me: Holder = { pid: process.pid, host: hostname() };
  const text = JSON.stringify(me);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await open(file, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL);
      try {
        await handle.writeFile(text);
        await handle.sync();
      } finally {
        await handle.close();
      }
      return () => releaseRunLock(file, me);
    } catch (error) {
      if (!hasCode(error, 'EEXIST')) throw error;
    }
    const holder = await readHolder(file);
    if (holder === undefined) continue; // released meanwhile, or half written: try again
    if (!mayTakeOver(holder, me)) throw busyError(runId, file, holder);
    // Replaced in one rename, so a reader never sees a half-written holder.
    const replacement = `${file}.${process.pid}.tmp`;
    await writeFile(replacement, text);
    await rename(replacement, file);
    const now = await readHolder(file);
    if (now?.pid === me.pid && now.host === me.host) return () => releaseRunLock(file, me);
  }
  throw new JournalError('run-busy', `Run '${runId}': could not take its lock ${file}`, { runId });
}

function mayTakeOver(holder: Holder, me: Holder): boolean {
  if (holder.host !== me.host) return false;
  return holder.pid === me.pid || !isRunning(holder.pid);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return hasCode(error, 'EPERM');
  }
}

async function readHolder(file: string): Promise<Holder | undefined> {
  try {
    const value = JSON.parse(await readFile(file, 'utf8')) as Partial<Holder>;
    return typeof value.pid === 'number' && typeof value.host === 'string'
      ? { pid: value.pid, host: value.host }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Removes the lock if it is still ours (a process that took it over keeps it). */
async function releaseRunLock(file: string, me: Holder): Promise<void> {
  const holder = await readHolder(file);
  if (holder?.pid !== me.pid || holder.host !== me.host) return;
  await unlink(file).catch((error: unknown) => {
    if (!hasCode(error, 'ENOENT')) throw error;
  });
}

function busyError(runId: string, file: string, holder: Holder): JournalError {
  const where =
    holder.host === hostname()
      ? `process ${holder.pid}`
      : `process ${holder.pid} on ${holder.host}`;
  return new JournalError(
    'run-busy',
    `Run '${runId}' is being run by ${where}: one process at a time writes a run's journal. Wait for it, or, if that process is gone, remove ${file}`,
    { runId, file },
  );
}

function hasCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
