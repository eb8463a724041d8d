import { stripBlocks } from 'statecraft/compile';
import { jsonCandidates } from 'statecraft/model';
import { fmt, medianMicros, type Row } from './measure.js';

// SPEC Q1: scans over model output are linear. An answer that opens a code fence and never
// closes it took a backtracking regex ~7 s at 256 KB and minutes at 1 MB (issue 13); the same
// input at three sizes shows the time now grows with the size, not its square.

const KB = 1024;
const SIZES = [256 * KB, 512 * KB, 1024 * KB] as const;

async function msFor(run: () => unknown): Promise<number> {
  return (await medianMicros(run, 9, 2)) / 1000;
}

export async function linearScanRows(): Promise<Row[]> {
  const rows: Row[] = [];
  const fence: number[] = [];
  for (const size of SIZES) {
    const text = `\`\`\`${'a'.repeat(size)}`;
    fence.push(await msFor(() => [...jsonCandidates(text)]));
  }
  SIZES.forEach((size, i) => {
    rows.push({
      measure: `jsonCandidates, unclosed fence, ${size / KB} KB`,
      value: `${fmt(fence[i] as number, 2)} ms`,
      note: i === SIZES.length - 1 ? 'median of 9; target: a few ms, linear' : 'median of 9',
    });
  });
  rows.push({
    measure: 'jsonCandidates 1 MB ÷ 256 KB',
    value: `${fmt((fence[2] as number) / (fence[0] as number), 1)}×`,
    note: 'linear: about 4×; quadratic: about 16×',
  });
  const spaces = `${' '.repeat(1024 * KB)}x`;
  rows.push({
    measure: 'stripBlocks, 1 MB run of spaces',
    value: `${fmt(await msFor(() => stripBlocks(spaces)), 2)} ms`,
    note: 'median of 9 (a system prompt holding model-written experiences)',
  });
  return rows;
}
