// Issue 15: one process at a time writes a run's journal; a lock its holder left by dying is
// taken over.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createChain, JournalError } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { fileStore } from '../../../src/durable/stores/file-store.js';

const CHILD = fileURLToPath(new URL('./lock-child.ts', import.meta.url));
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-lock-'));
  dirs.push(dir);
  return dir;
}

/** A child process holding run 'r' of `dir`, once it says so (bounded). */
function holder(dir: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the child did not take the lock')), 15_000);
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

describe('fileStore run locks', () => {
  it('a live holder makes the run busy; once it is killed, its lock is taken over', async () => {
    const dir = tempDir();
    const child = await holder(dir);
    const store = fileStore(dir);
    const busy = await store.acquire?.('r').catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(JournalError);
    expect((busy as JournalError).reason).toBe('run-busy');
    expect((busy as Error).message).toMatch(new RegExp(`process ${child.pid}`));
    expect((busy as Error).message).toMatch(/r\.lock/);

    child.kill('SIGKILL');
    await exited(child);
    const release = await store.acquire?.('r');
    expect(release).toBeTypeOf('function');
    expect(existsSync(path.join(dir, 'r.lock'))).toBe(true);
    await release?.();
    expect(existsSync(path.join(dir, 'r.lock'))).toBe(false);
  }, 30_000);

  it('its own holder may take it again; another run is not affected', async () => {
    const store = fileStore(tempDir());
    const first = await store.acquire?.('r');
    const again = await store.acquire?.('r');
    const other = await store.acquire?.('s');
    await Promise.all([first?.(), again?.(), other?.()]);
  });
});

describe('durable runs and their lock', () => {
  const model = new ScriptedModel(() => ({ text: 'ok' }));

  it('a run another live process holds is refused with run-busy, naming it', async () => {
    const dir = tempDir();
    const child = await holder(dir);
    const chain = createChain({ model });
    const error = await chain.resume('r', { store: fileStore(dir) }).catch((e: unknown) => e);
    expect((error as JournalError).reason).toBe('run-busy');
    expect((error as Error).message).toMatch(new RegExp(`process ${child.pid}`));
  }, 30_000);

  it('is given up however the run ends: succeeded, or refused by its journal', async () => {
    const dir = tempDir();
    const store = fileStore(dir);
    await createChain({ model }).invoke('hi', { runId: 'ok', store });
    expect(existsSync(path.join(dir, 'ok.lock'))).toBe(false);
    const other = createChain({ model, systemPrompt: 'Other options.' });
    await expect(other.resume('ok', { store })).rejects.toThrow(/configuration/);
    expect(existsSync(path.join(dir, 'ok.lock'))).toBe(false);
    // Attached to with another input: refused, and let go.
    await expect(createChain({ model }).invoke('bye', { runId: 'ok', store })).rejects.toThrow(
      /input of run 'ok'/,
    );
    expect(existsSync(path.join(dir, 'ok.lock'))).toBe(false);
    // A replay that disagrees with the journal mid-run gives the lock up too.
    const lines = readFileSync(path.join(dir, 'ok.jsonl'), 'utf8').trimEnd().split('\n');
    const edited = lines.map((line) => {
      const entry = JSON.parse(line) as { type: string; hash?: string };
      return JSON.stringify(entry.type === 'request' ? { ...entry, hash: 'f'.repeat(64) } : entry);
    });
    writeFileSync(
      path.join(dir, 'edited.jsonl'),
      `${edited.join('\n').replaceAll('"runId":"ok"', '"runId":"edited"')}\n`,
    );
    await expect(createChain({ model }).resume('edited', { store })).rejects.toThrow(
      /Journal entry 1/,
    );
    expect(existsSync(path.join(dir, 'edited.lock'))).toBe(false);
  });
});
