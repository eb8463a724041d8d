// One process at a time writes a run's journal, decided by claim lines in the journal itself:
// a live holder keeps the run, a dead one is taken over, a holder on another machine is
// cleared by hand, a superseded writer writes nothing more, and no lock or temporary file is
// ever left behind.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createChain, JournalError } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fileStore } from '../../../src/durable/stores/file-store.js';
import { journalErrorOf, startEntry } from './journal-store-contract.js';

const CHILD = fileURLToPath(new URL('./lock-child.ts', import.meta.url));
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-claims-'));
  dirs.push(dir);
  return dir;
}

/** A child process that started run 'r' of `dir` and holds it, once it says so (bounded). */
function holder(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the child did not take the run')), 20_000);
    child.stdout?.on('data', (data: Buffer) => {
      if (String(data).includes('held')) {
        clearTimeout(timer);
        resolve(child);
      }
    });
    child.on('exit', () => reject(new Error('the child exited')));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.on('exit', () => resolve());
  });
}

/** The pid of a process that has exited: a holder that died. */
function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', '']);
  return pid as number;
}

const lines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** A journal as a holder that died left it: its start, its claim on the run, a torn line. */
function crashedJournal(dir: string, runId: string, pid: number, host = hostname()): string {
  const file = path.join(dir, `${runId}.jsonl`);
  const claim = { n: 1, pid, host, id: 'gone' };
  writeFileSync(
    file,
    `${JSON.stringify({ ...startEntry(runId), $claim: claim })}\n${JSON.stringify({ type: 'step', $claim: 1 })}\n{"type":"res`,
  );
  return file;
}

describe('fileStore: one writer per run', () => {
  it('a live holder keeps the run; once it is killed the run is taken over, with no file left behind', async () => {
    const dir = tempDir();
    const child = await holder(dir);
    const store = fileStore(dir);
    const busy = await journalErrorOf(store.acquire?.('r') as Promise<unknown>, 'run-busy');
    expect(busy.message).toContain(`process ${child.pid}`);
    expect(busy.message).toMatch(/Wait for it to end, or stop it/);

    child.kill('SIGKILL');
    await exited(child);
    const release = await store.acquire?.('r');
    await store.append('r', { type: 'step' });
    // Another store (another process would do the same) finds the run held by this one.
    await journalErrorOf(fileStore(dir).acquire?.('r') as Promise<unknown>, 'run-busy');
    await release?.();
    const again = await fileStore(dir).acquire?.('r');
    await again?.();
    expect(await store.read('r')).toEqual([
      expect.objectContaining({ type: 'start' }),
      { type: 'step' },
    ]);
    expect(readdirSync(dir).sort()).toEqual(['.statecraft-index.jsonl', 'r.jsonl']);
  }, 60_000);

  it("a run's creator holds it from its start entry; a second claim in this process is refused", async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    await store.append('r', startEntry('r'));
    const release = await store.acquire?.('r');
    // Taken up from the start entry: no claim line was needed.
    expect(lines(path.join(dir, 'r.jsonl'))).toHaveLength(1);
    for (const other of [store, fileStore(dir)]) {
      const error = await journalErrorOf(other.acquire?.('r') as Promise<unknown>, 'run-busy');
      expect(error.message).toContain('this process already');
    }
    // A raw append of another store while the run is held is refused too.
    await journalErrorOf(fileStore(dir).append('r', { type: 'stray' }), 'run-busy');
    await release?.();
    expect(lines(path.join(dir, 'r.jsonl')).at(-1)).toEqual({ type: '$release', n: 1 });
    const next = await fileStore(dir).acquire?.('r');
    await next?.();
  });

  it('a writer another took the run from writes nothing more, and what it wrote after is refused on read', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    await store.append('r', startEntry('r'));
    const release = await store.acquire?.('r');
    await store.append('r', { type: 'mine' });
    const file = path.join(dir, 'r.jsonl');
    // A process on another machine sharing the folder takes the run over (its holder was
    // cleared there), and the superseded writer's late line lands after its claim.
    appendFileSync(
      file,
      `\n${JSON.stringify({ type: '$claim', over: 1, pid: 1, host: 'elsewhere', id: 'x' })}\n`,
    );
    appendFileSync(file, `${JSON.stringify({ type: 'late', $claim: 1 })}\n`);
    const refused = await journalErrorOf(store.append('r', { type: 'after' }), 'run-busy');
    expect(refused.message).toContain('was taken over by process 1 on elsewhere');
    expect(await fileStore(dir).read('r')).toEqual([startEntry('r'), { type: 'mine' }]);
    await release?.(); // never rejects: the run is not this store's to let go any more
  });

  it('a holder on another machine is cleared by hand, never a live one on this machine', async () => {
    const dir = tempDir();
    crashedJournal(dir, 'r', 4242, 'another-host');
    const store = fileStore(dir);
    const busy = await journalErrorOf(store.acquire?.('r') as Promise<unknown>, 'run-busy');
    expect(busy.message).toContain('process 4242 on another-host');
    expect(busy.message).toContain("fileStore(dir).clearHolder('r')");
    expect(await store.clearHolder('r')).toBe(true);
    expect(await store.clearHolder('r')).toBe(false); // no one holds it now
    const release = await store.acquire?.('r');
    await release?.();

    const live = tempDir();
    await holder(live);
    await journalErrorOf(fileStore(live).clearHolder('r'), 'run-busy');
  }, 60_000);

  it('takes over a dead holder whose last line is torn, and writes past it cleanly', async () => {
    const dir = tempDir();
    const file = crashedJournal(dir, 'r', deadPid());
    const store = fileStore(dir);
    const release = await store.acquire?.('r');
    await store.append('r', { type: 'resumed' });
    await release?.();
    expect(await fileStore(dir).read('r')).toEqual([
      startEntry('r'),
      { type: 'step' },
      { type: 'resumed' },
    ]);
    expect(lines.bind(null, file)).toThrow(); // the torn line is still there, inert
    expect((await fileStore(dir).list()).map((run) => run.status)).toEqual(['running']);
  });

  it('stores of one process racing to take a run over: exactly one gets it, the others are busy', async () => {
    for (let round = 0; round < 100; round++) {
      const dir = tempDir();
      // Left by a run of this process that ended without letting go: free to take over.
      const creator = fileStore(dir);
      await creator.append('r', startEntry('r'));
      await creator.append('r', { type: 'step' });
      const racers = Array.from({ length: 8 }, () => fileStore(dir));
      const outcomes = await Promise.allSettled(racers.map((store) => store.acquire?.('r')));
      const won = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const outcome of outcomes) {
        if (outcome.status === 'rejected')
          expect((outcome.reason as JournalError).reason).toBe('run-busy');
      }
      await (won[0] as PromiseFulfilledResult<(() => Promise<void>) | undefined>).value?.();
    }
  }, 60_000);

  it('cuts a line its own failed write tore before it writes again, so the journal stays readable', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    await store.append('r', startEntry('r'));
    const release = await store.acquire?.('r');
    await store.append('r', { type: 'a' });
    // What a write that failed half way (a full disk) leaves: part of a line, no newline.
    appendFileSync(path.join(dir, 'r.jsonl'), '{"type":"b","big":"xxxxx');
    await store.append('r', { type: 'c' });
    await store.append('r', { type: 'end', status: 'succeeded' });
    await release?.();
    const expected = [
      startEntry('r'),
      { type: 'a' },
      { type: 'c' },
      { type: 'end', status: 'succeeded' },
    ];
    expect(await fileStore(dir).read('r')).toEqual(expected);
    expect(lines(path.join(dir, 'r.jsonl')).map((line) => line.type)).toEqual([
      'start',
      'a',
      'c',
      'end',
    ]);
    expect(await fileStore(dir).list()).toEqual([
      { runId: 'r', kind: 'chain', status: 'succeeded', startedAt: 1_000 },
    ]);
  });
});

describe('fileStore checks what it is given', () => {
  it.each([
    [undefined, 'dir'],
    [42, 'dir'],
    ['', 'dir'],
  ])('fileStore(%j) is a ConfigError naming the folder', (dir, option) => {
    expect(() => fileStore(dir as unknown as string)).toThrow(
      expect.objectContaining({ code: 'CONFIG_ERROR', option }),
    );
  });

  it('refuses every bad option at once, with the nearest name for a typo', () => {
    let error: unknown;
    try {
      fileStore(tempDir(), { timeoutMS: 5, maxEntryBytes: -1 } as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'CONFIG_ERROR' });
    const message = (error as Error).message;
    expect(message).toContain(
      '`timeoutMS`: is not an option of fileStore; did you mean `timeoutMs`?',
    );
    expect(message).toContain('`maxEntryBytes`: must be a whole number of bytes');
  });

  it('refuses an entry over maxEntryBytes before writing anything', async () => {
    const dir = tempDir();
    const store = fileStore(dir, { maxEntryBytes: 2_048 });
    await store.append('r', startEntry('r'));
    const error = await journalErrorOf(
      store.append('r', { type: 'big', text: 'x'.repeat(4_000) }),
      'too-large',
    );
    expect(error.message).toContain("over the store's maxEntryBytes (2048)");
    expect(await store.read('r')).toEqual([startEntry('r')]);
  });
});

describe('durable runs and their claim', () => {
  const model = new ScriptedModel(() => ({ text: 'ok' }));

  it('a run another live process holds is refused with run-busy, naming it', async () => {
    const dir = tempDir();
    const child = await holder(dir);
    const chain = createChain({ model });
    const error = await chain.resume('r', { store: fileStore(dir) }).catch((e: unknown) => e);
    expect(JournalError.isInstance(error)).toBe(true);
    expect((error as JournalError).reason).toBe('run-busy');
    expect((error as Error).message).toMatch(new RegExp(`process ${child.pid}`));
  }, 60_000);

  it('is let go however the run ends: succeeded, or refused by its journal', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    const free = async (runId: string) => {
      const release = await fileStore(dir).acquire?.(runId);
      await release?.();
    };
    await createChain({ model }).invoke('hi', { runId: 'ok', store });
    await free('ok');
    const other = createChain({ model, systemPrompt: 'Other options.' });
    await expect(other.resume('ok', { store })).rejects.toThrow(/configuration/);
    await free('ok');
    // Attached to with another input: refused, and let go.
    await expect(createChain({ model }).invoke('bye', { runId: 'ok', store })).rejects.toThrow(
      /input of run 'ok'/,
    );
    await free('ok');
    // A replay that disagrees with the journal mid-run lets it go too (a running run: no end).
    const edited = lines(path.join(dir, 'ok.jsonl'))
      .filter((entry) => entry.type !== 'end')
      .map((entry) => {
        const { $claim: _claim, ...rest } = entry;
        return JSON.stringify(rest.type === 'request' ? { ...rest, hash: 'f'.repeat(64) } : rest);
      });
    writeFileSync(
      path.join(dir, 'edited.jsonl'),
      `${edited.join('\n').replaceAll('"runId":"ok"', '"runId":"edited"')}\n`,
    );
    await expect(createChain({ model }).resume('edited', { store })).rejects.toThrow(
      /Journal entry 1/,
    );
    await free('edited');
    expect(readdirSync(dir).sort()).toEqual([
      '.statecraft-index.jsonl',
      'edited.jsonl',
      'ok.jsonl',
    ]);
  });
});
