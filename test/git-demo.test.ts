import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

describe('npm run demo (examples/git-commit.ts)', () => {
  it('commits the change in a temporary repository with real git and prints the run', async () => {
    const { stdout } = await run(
      'node',
      ['--conditions=statecraft-source', '--import', 'tsx', 'examples/git-commit.ts'],
      {
        env: { ...process.env, OPENAI_API_KEY: '' },
      },
    );
    expect(stdout).toContain('Running on the embedded scripted model');
    expect(stdout).toMatch(/→ git_status\(\{\}\)\n {2}M greeting\.txt/);
    expect(stdout).toContain('→ git_diff({"path":"greeting.txt"})');
    expect(stdout).toContain('+Hello, statecharts.');
    expect(stdout).toContain(
      'states: idle → thinking → doing → thinking → doing → thinking → doing → thinking → validating → succeeded',
    );
    // The commit really happened: git log prints the message drawn from the diff and the stat.
    expect(stdout).toMatch(
      /git log -1:\nAdd "Hello, statecharts\." to greeting\.txt\n\n greeting\.txt \| 1 \+/,
    );
  }, 30_000);
});
