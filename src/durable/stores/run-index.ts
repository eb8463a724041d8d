import { appendFile, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { RunKind, RunStatus } from '../journal-entry.js';
import { hasCode } from './store-fault.js';

// What `fileStore`'s list() reads instead of every journal: one line per run start, end and
// delete, appended to `<dir>/.statecraft-index.jsonl` (a name no run id can have). It is a
// cache, never the truth: a run it does not know, or knows only as started, is read from its
// journal (and added), so a crash between a journal's entry and its index line costs a read,
// never a wrong listing. Lines are small and appended with O_APPEND by any process; a torn one
// is skipped. Nothing here is fsynced: the journals are.

export const INDEX_FILE = '.statecraft-index.jsonl';

/** What the index knows of one run. */
export interface IndexedRun {
  readonly kind?: RunKind;
  readonly startedAt?: number;
  /** Only an ended run's status is kept: a running one is read from its journal. */
  readonly status?: Exclude<RunStatus, 'running'>;
}

type IndexLine =
  | { readonly run: string; readonly kind: RunKind; readonly startedAt: number }
  | { readonly run: string; readonly status: Exclude<RunStatus, 'running'> }
  | { readonly run: string; readonly deleted: true };

export class RunIndex {
  readonly #file: string;
  /** Lines read at the last load, to know when rewriting the index would pay. */
  #lines = 0;

  constructor(dir: string) {
    this.#file = path.join(dir, INDEX_FILE);
  }

  started(runId: string, kind: RunKind, startedAt: number): Promise<void> {
    return this.#append([{ run: runId, kind, startedAt }]);
  }

  ended(runId: string, status: Exclude<RunStatus, 'running'>): Promise<void> {
    return this.#append([{ run: runId, status }]);
  }

  deleted(runId: string): Promise<void> {
    return this.#append([{ run: runId, deleted: true }]);
  }

  /**
   * Adds what journal reads for list() told of runs the index did not know (`known`: what it
   * knew of each), in one write.
   */
  learned(
    runs: readonly {
      readonly runId: string;
      readonly kind: RunKind;
      readonly startedAt: number;
      readonly status: RunStatus;
    }[],
    known: ReadonlyMap<string, IndexedRun>,
  ): Promise<void> {
    const lines: IndexLine[] = [];
    for (const { runId, kind, startedAt, status } of runs) {
      const indexed = known.get(runId);
      if (indexed?.startedAt !== startedAt) lines.push({ run: runId, kind, startedAt });
      if (status !== 'running' && indexed?.status !== status) lines.push({ run: runId, status });
    }
    return lines.length > 0 ? this.#append(lines) : Promise.resolve();
  }

  /** Every run the index knows of, by id (a deleted run is not known). */
  async load(): Promise<Map<string, IndexedRun>> {
    let text: string;
    try {
      text = await readFile(this.#file, 'utf8');
    } catch (error) {
      if (hasCode(error, 'ENOENT')) return new Map();
      throw error;
    }
    const runs = new Map<string, IndexedRun>();
    let lines = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      lines++;
      let value: Partial<Record<string, unknown>>;
      try {
        value = JSON.parse(line) as Partial<Record<string, unknown>>;
      } catch {
        continue; // torn by a crash of its writer
      }
      const runId = value.run;
      if (typeof runId !== 'string') continue;
      if (value.deleted === true) runs.delete(runId);
      else if (typeof value.kind === 'string' && typeof value.startedAt === 'number') {
        // A start: a run id deleted and started again begins afresh.
        runs.set(runId, { kind: value.kind as RunKind, startedAt: value.startedAt });
      } else if (value.status === 'succeeded' || value.status === 'failed') {
        runs.set(runId, { ...runs.get(runId), status: value.status });
      }
    }
    this.#lines = lines;
    return runs;
  }

  /**
   * Rewrites the index with only the runs just listed once dead lines (deleted runs, starts of
   * ended ones) are most of it. Written beside it and renamed over it, so a reader sees one or
   * the other; lines another process appends meanwhile may be lost, which costs that run a
   * journal read at the next listing, never a wrong one.
   */
  async compact(
    listed: readonly {
      readonly runId: string;
      readonly kind: RunKind;
      readonly startedAt: number;
      readonly status: RunStatus;
    }[],
  ): Promise<void> {
    if (this.#lines < 1_000 || this.#lines < listed.length * 3) return;
    const lines: IndexLine[] = [];
    for (const { runId, kind, startedAt, status } of listed) {
      lines.push({ run: runId, kind, startedAt });
      if (status !== 'running') lines.push({ run: runId, status });
    }
    const temporary = `${this.#file}.${process.pid}.tmp`;
    try {
      await writeFile(temporary, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
      await rename(temporary, this.#file);
      this.#lines = lines.length;
    } catch {
      // A cache: left as it was.
    }
  }

  async #append(lines: readonly IndexLine[]): Promise<void> {
    try {
      await appendFile(this.#file, lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    } catch {
      // A cache: a line it misses costs list() one journal read, never a wrong answer.
    }
  }
}
