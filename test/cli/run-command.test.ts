// `statecraft run`, spawned for real as `npm run statecraft` runs it: a script whose main()
// is not awaited still has its runs shown and summed up, and a script that made no run gets
// a hint saying why that can be.
import { execFile } from 'node:child_process';
import { describe, expect, it } from 'vitest';

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function statecraft(...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=statecraft-source', '--import', 'tsx', 'src/cli/main.ts', ...args],
      { env: { ...process.env, STATECRAFT_DEBUG: '' } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

describe('statecraft run', () => {
  it('waits for the runs of a script whose main() is not awaited, then sums them up', async () => {
    const { code, stdout, stderr } = await statecraft(
      'run',
      'test/cli/fixtures/starts-run-later.ts',
    );
    expect(code).toBe(0);
    expect(stdout).toContain('result: succeeded');
    const lines = stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('later#1 started on scripted/scripted-model');
    // The summary comes last, and counts the run the script started after its import.
    expect(lines.at(-1)).toMatch(/^statecraft run: 1 run, 1 model call, 0 tool calls/);
    expect(stderr).not.toContain('no chain or tool-loop runs were observed');
  }, 60_000);

  it('says why there may be no runs when it saw none', async () => {
    const { stderr } = await statecraft('run', 'test/cli/fixtures/sets-exit-code.ts');
    const lines = stderr.trimEnd().split('\n');
    expect(lines.at(-1)).toMatch(/^statecraft run: no chain or tool-loop runs were observed: /);
    expect(lines.at(-1)).toContain('npx statecraft run');
  }, 60_000);
});
