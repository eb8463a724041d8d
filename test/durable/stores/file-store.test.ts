import { mkdtempSync, rmSync } from 'node:fs';
import { appendFile, mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { JOURNAL_FORMAT_VERSION } from '../../../src/durable/journal-entry.js';
import { fileStore } from '../../../src/durable/stores/file-store.js';
import {
  describeJournalStoreContract,
  endEntry,
  journalErrorOf,
  startEntry,
} from './journal-store-contract.js';

const directories: string[] = [];
function freshDirectory(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-file-store-'));
  directories.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describeJournalStoreContract('fileStore', () => fileStore(freshDirectory()));

const line = (value: unknown) => `${JSON.stringify(value)}\n`;

describe('fileStore on disk', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = path.join(freshDirectory(), 'not', 'yet', 'there');
    file = path.join(dir, 'run-1.jsonl');
  });

  /** Writes a journal file by hand, as a crash or another version could have left it. */
  async function writeJournal(text: string): Promise<void> {
    await mkdir(dir, { recursive: true });
    await writeFile(file, text);
  }

  it('writes one JSON line per entry to <dir>/<runId>.jsonl, creating the directory', async () => {
    const store = fileStore(dir);
    await store.append('run-1', startEntry('run-1'));
    await store.append('run-1', { type: 'answer', text: 'two\nlines' });
    const lines = (await readFile(file, 'utf8')).split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe('');
    // Each line is the entry, marked with the claim of the store that wrote it: the start
    // entry with its creator's (who and which), the others with its number.
    const [start, answer] = lines.slice(0, 2).map((text) => JSON.parse(text));
    expect(start).toEqual({
      ...startEntry('run-1'),
      $claim: { n: 1, pid: process.pid, host: hostname(), id: expect.any(String) },
    });
    expect(answer).toEqual({ type: 'answer', text: 'two\nlines', $claim: 1 });
    expect(await fileStore(dir).read('run-1')).toEqual([
      startEntry('run-1'),
      { type: 'answer', text: 'two\nlines' },
    ]);
  });

  it('reads nothing and lists nothing before the directory exists', async () => {
    const store = fileStore(dir);
    expect(await store.read('run-1')).toBeUndefined();
    expect(await store.list()).toEqual([]);
  });

  it('fsyncs each entry before its append resolves', async () => {
    const store = fileStore(dir);
    await store.append('run-1', startEntry('run-1'));
    // FileHandle is not exported; its prototype is reachable through any open handle.
    const probe = await open(file, 'r');
    const prototype = Object.getPrototypeOf(probe) as { sync(): Promise<void> };
    await probe.close();
    const realSync = prototype.sync;
    let releaseSync = () => {};
    const syncStarted = new Promise<void>((started) => {
      vi.spyOn(prototype, 'sync').mockImplementation(function (this: unknown) {
        started();
        return new Promise<void>((release) => {
          releaseSync = release;
        }).then(() => realSync.call(this));
      });
    });
    try {
      let resolved = false;
      const appended = store.append('run-1', { type: 'step' }).then(() => {
        resolved = true;
      });
      await Promise.race([
        syncStarted,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('append never fsynced')), 2_000),
        ),
      ]);
      await new Promise((wait) => setTimeout(wait, 20));
      expect(resolved).toBe(false);
      releaseSync();
      await appended;
      expect(resolved).toBe(true);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('keeps the order of 200 appends that were not awaited', async () => {
    const store = fileStore(dir);
    await store.append('run-1', startEntry('run-1'));
    const seqs = Array.from({ length: 200 }, (_, i) => i + 1);
    // Big and small entries alternate, so that unserialized writes would finish out of order.
    const payload = (seq: number) => 'x'.repeat(seq % 2 === 0 ? 200_000 : 1);
    await Promise.all(
      seqs.map((seq) => store.append('run-1', { type: 'step', seq, p: payload(seq) })),
    );
    const read = await store.read('run-1');
    expect(read?.slice(1).map((entry) => entry.seq)).toEqual(seqs);
  });

  it('ignores a torn last line with no newline', async () => {
    await writeJournal(`${line(startEntry('run-1'))}${line({ type: 'a' })}{"type":"b","te`);
    expect(await fileStore(dir).read('run-1')).toEqual([startEntry('run-1'), { type: 'a' }]);
  });

  it('ignores a last line that is not JSON even when its newline made it to disk', async () => {
    await writeJournal(`${line(startEntry('run-1'))}{"type":"b"\0\0\n`);
    expect(await fileStore(dir).read('run-1')).toEqual([startEntry('run-1')]);
  });

  it('cuts a torn last line off before the next append, so it never becomes a corrupt middle line', async () => {
    await writeJournal(`${line(startEntry('run-1'))}{"type":"torn`);
    const store = fileStore(dir); // a new process resuming the run
    await store.append('run-1', { type: 'resumed' });
    await store.append('run-1', endEntry('succeeded'));
    expect(await readFile(file, 'utf8')).toBe(
      line(startEntry('run-1')) + line({ type: 'resumed' }) + line(endEntry('succeeded')),
    );
  });

  it('treats a file holding only a torn start line as no run, which may then start', async () => {
    await writeJournal('{"type":"start","vers');
    const store = fileStore(dir);
    expect(await store.read('run-1')).toBeUndefined();
    expect(await store.list()).toEqual([]);
    await journalErrorOf(store.append('run-1', { type: 'step' }), 'unknown-run');
    await store.append('run-1', startEntry('run-1'));
    expect(await fileStore(dir).read('run-1')).toEqual([startEntry('run-1')]);
    expect((await readFile(file, 'utf8')).split('\n')).toHaveLength(2);
  });

  it('reports a corrupt line before the last one with the file and line number, in read and append; list() names it', async () => {
    await writeJournal(`${line(startEntry('run-1'))}{"type":"a"}garbage\n${line({ type: 'b' })}`);
    const store = fileStore(dir);
    for (const attempt of [() => store.read('run-1'), () => store.append('run-1', { type: 'c' })]) {
      const error = await journalErrorOf(attempt(), 'corrupt');
      expect(error.message).toBe(`Corrupt journal ${file}, line 2: it is not JSON`);
      expect([error.file, error.line, error.runId]).toEqual([file, 2, 'run-1']);
    }
    expect(await store.list()).toEqual([
      {
        runId: 'run-1',
        status: 'unreadable',
        reason: 'corrupt',
        problem: `Corrupt journal ${file}, line 2: it is not JSON`,
        kind: 'chain',
        startedAt: 1_000,
      },
    ]);
  });

  it('reports a line that is JSON but not an entry, even as the last line', async () => {
    await writeJournal(`${line(startEntry('run-1'))}${line([1, 2])}`);
    const error = await journalErrorOf(fileStore(dir).read('run-1'), 'corrupt');
    expect(error.message).toContain('line 2: it is not an object with a string "type"');
  });

  it('refuses a journal written by a newer version of statecraft', async () => {
    const newer = JOURNAL_FORMAT_VERSION + 1;
    await writeJournal(line({ type: 'start', version: newer, shape: 'unknown to us' }));
    const store = fileStore(dir);
    for (const attempt of [() => store.read('run-1'), () => store.append('run-1', { type: 'c' })]) {
      const error = await journalErrorOf(attempt(), 'newer-version');
      expect(error.message).toContain(`${file} was written by a newer version of statecraft`);
      expect(error.message).toContain(`journal format ${newer}`);
    }
    const [listed] = await store.list();
    expect(listed).toMatchObject({ runId: 'run-1', status: 'unreadable', reason: 'newer-version' });
  });

  it('refuses a journal whose start entry names another run (a renamed file)', async () => {
    await writeJournal(line(startEntry('run-2')));
    const error = await journalErrorOf(fileStore(dir).read('run-1'), 'corrupt');
    expect(error.message).toContain('line 1: it starts run "run-2", not "run-1"');
  });

  it('lists only files that are journals of a valid run id', async () => {
    const store = fileStore(dir);
    await store.append('run-1', startEntry('run-1'));
    await appendFile(path.join(dir, 'notes.txt'), 'not a journal');
    await appendFile(path.join(dir, '.hidden.jsonl'), line(startEntry('.hidden')));
    await mkdir(path.join(dir, 'sub.jsonl.d'));
    // Someone else's JSON lines under a valid run id: not a journal, not listed.
    await appendFile(path.join(dir, 'events.jsonl'), line({ event: 'click' }));
    expect((await store.list()).map((run) => run.runId)).toEqual(['run-1']);
    expect((await readdir(dir)).sort()).toEqual([
      '.hidden.jsonl',
      '.statecraft-index.jsonl',
      'events.jsonl',
      'notes.txt',
      'run-1.jsonl',
      'sub.jsonl.d',
    ]);
  });
});
