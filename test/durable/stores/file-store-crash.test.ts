// A real crash: a child process appends to a fileStore and is killed with SIGKILL at seeded
// moments. Whatever the moment, the journal reads back as a prefix of what the child wrote,
// holding every entry whose append had resolved, and the run can go on being appended to.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { fileStore } from '../../../src/durable/stores/file-store.js';
import { childOutput } from '../../support/child-output.js';
import { seededRandom } from '../../support/seeded-random.js';
import { CRASH_RUN_ID, crashStartEntry, crashStepEntry } from './crash-workload.js';

const CHILD = fileURLToPath(new URL('./crash-child.ts', import.meta.url));
const SEED = 20_250_915;
const KILLS = 6;

interface KillPoint {
  /** Kill once this many lines ("ready", then one per confirmed append) were printed. */
  readonly afterLines: number;
  /** ...and this many milliseconds more, so the kill lands anywhere inside an append. */
  readonly delayMs: number;
}

const random = seededRandom(SEED);
const killPoints: KillPoint[] = Array.from({ length: KILLS }, (_, i) => ({
  // The first kill lands around the start entry, before any append was confirmed.
  afterLines: i === 0 ? 1 : 2 + Math.floor(random() * 40),
  delayMs: Math.floor(random() * 6),
}));

const children: ChildProcess[] = [];
const directories: string[] = [];
afterEach(() => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  for (const dir of directories.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Starts the child; `lines` grows as it prints; `printed(n)` resolves once n lines came. */
function startChild(dir: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const { lines, exited, until } = childOutput(child);
  const printed = (count: number) => until((seen) => seen.length >= count, `${count} lines`);
  return { child, lines, exited, printed };
}

describe('fileStore after kill -9', () => {
  it.each(
    killPoints.map((point, i) => ({
      ...point,
      name: `kill ${i + 1}, after ${point.afterLines} lines + ${point.delayMs} ms`,
    })),
  )(
    '$name: reads a prefix holding every confirmed entry, and appends go on',
    async ({ afterLines, delayMs }) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'statecraft-crash-'));
      directories.push(dir);
      const { child, lines, exited, printed } = startChild(dir);
      await within(printed(afterLines), 30_000, `${afterLines} lines from the child`);
      await new Promise((wait) => setTimeout(wait, delayMs));
      child.kill('SIGKILL');
      expect(await within(exited, 10_000, 'the child to die')).toBe('SIGKILL');

      const confirmed = lines.filter((text) => text !== 'ready').map(Number);
      const lastConfirmed = confirmed.at(-1) ?? -1; // -1: not even the start entry
      expect(confirmed).toEqual(Array.from({ length: lastConfirmed + 1 }, (_, seq) => seq));

      const store = fileStore(dir); // a new process's view of the journal
      const entries = (await store.read(CRASH_RUN_ID)) ?? [];
      const expected = [
        crashStartEntry(),
        ...Array.from({ length: 6_000 }, (_, i) => crashStepEntry(i + 1)),
      ];
      // Every confirmed entry; at most one more (written, killed before it was printed).
      expect(entries.length).toBeGreaterThanOrEqual(lastConfirmed + 1);
      expect(entries.length).toBeLessThanOrEqual(lastConfirmed + 2);
      expect(entries).toEqual(expected.slice(0, entries.length));

      // The run goes on: the next append lands after the last good entry, torn tail or not.
      if (entries.length === 0) await store.append(CRASH_RUN_ID, crashStartEntry());
      await store.append(CRASH_RUN_ID, { type: 'resumed' });
      const resumed = await store.read(CRASH_RUN_ID);
      expect(resumed).toEqual([
        ...expected.slice(0, Math.max(entries.length, 1)),
        { type: 'resumed' },
      ]);
    },
    60_000,
  );
});
