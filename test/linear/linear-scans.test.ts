import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// SPEC Q1: every scan over model or tool output is linear. Each case of scans.child.ts runs on
// a 1 MB input shaped to make a backtracking regex quadratic (minutes, with the event loop
// blocked). The child is killed after BOUND_MS; a linear scan needs milliseconds. How long each
// case took is printed by `npm run bench` (jsonCandidates row), not asserted here.
const CHILD = fileURLToPath(new URL('./scans.child.ts', import.meta.url));
const BOUND_MS = 30_000;

interface ChildRun {
  readonly finished: readonly string[];
  readonly running: string | undefined;
  readonly code: number | null;
  readonly stderr: string;
}

function runScans(): Promise<ChildRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--conditions=statecraft-source', CHILD],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), BOUND_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      const lines = stdout.split('\n');
      const finished = lines.filter((l) => l.startsWith('done ')).map((l) => l.slice(5));
      const started = lines.filter((l) => l.startsWith('start ')).map((l) => l.slice(6));
      const running = started.find((name) => !finished.some((f) => f.startsWith(`${name} `)));
      resolve({ finished, running, code, stderr });
    });
  });
}

describe('scans over model output are linear on 1 MB inputs (SPEC Q1)', () => {
  it(
    'every case finishes in the child process within the bound',
    async () => {
      const run = await runScans();
      expect(run.stderr).toBe('');
      // Names the case a quadratic scan got stuck in.
      expect(run.running).toBeUndefined();
      expect(run.code).toBe(0);
      expect(run.finished).toHaveLength(14);
    },
    BOUND_MS + 15_000,
  );
});
