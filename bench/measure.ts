// Timing helpers shared by the bench files. Figures are medians of repeated samples, taken
// after a warm-up, so one GC pause or JIT tier-up does not decide a row.

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** Median duration in microseconds of `fn`, over `samples` runs after `warmup` runs. */
export async function medianMicros(
  fn: () => unknown,
  samples: number,
  warmup = Math.ceil(samples / 5),
): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  return median(times);
}

/**
 * Like medianMicros, with untimed work around each run: `prepare` makes what the run needs (a
 * fresh run id, a journal to resume) and `cleanUp` removes it, so neither is in the figure.
 */
export async function medianMicrosAround<S>(
  prepare: () => Promise<S>,
  fn: (prepared: S) => unknown,
  cleanUp: (prepared: S) => Promise<unknown>,
  samples: number,
  warmup = Math.ceil(samples / 5),
): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < warmup + samples; i++) {
    const prepared = await prepare();
    const start = process.hrtime.bigint();
    await fn(prepared);
    const micros = Number(process.hrtime.bigint() - start) / 1000;
    await cleanUp(prepared);
    if (i >= warmup) times.push(micros);
  }
  return median(times);
}

/** Forces a full collection; the bench runs with --expose-gc so heap figures are stable. */
export function collectGarbage(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run the bench with node --expose-gc (npm run bench does)');
  gc();
  gc();
}

/** Heap in use after a full collection, in bytes. */
export function settledHeap(): number {
  collectGarbage();
  return process.memoryUsage().heapUsed;
}

export interface Row {
  readonly measure: string;
  readonly value: string;
  readonly note?: string;
}

export function printTable(title: string, rows: readonly Row[]): void {
  const header = ['measure', 'value', 'note'];
  const cells = rows.map((r) => [r.measure, r.value, r.note ?? '']);
  const widths = header.map((h, i) =>
    Math.max(h.length, ...cells.map((c) => (c[i] as string).length)),
  );
  const line = (c: readonly string[]) =>
    `| ${c.map((x, i) => (i === 1 ? x.padStart(widths[i] as number) : x.padEnd(widths[i] as number))).join(' | ')} |`;
  console.log(`\n${title}\n`);
  console.log(line(header));
  console.log(
    `|${widths.map((w, i) => (i === 1 ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`,
  );
  for (const c of cells) console.log(line(c));
}

export const fmt = (n: number, digits = 2) => n.toFixed(digits);
