import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

const lines = async (path: string) => (await readFile(path, 'utf8')).split('\n').length - 1;

describe('npm run research (examples/research-loop.ts)', () => {
  it('plans three rounds over the real machine files, then answers from their results', async () => {
    const { stdout } = await run('node', [
      '--conditions=statecraft-source',
      '--import',
      'tsx',
      'examples/research-loop.ts',
    ]);
    const chain = await lines('machines/chain.ts');
    const loop = await lines('machines/tool-loop.ts');
    expect(stdout).toContain('Running on the embedded scripted model.');
    expect(stdout).toContain('✓ #1 ["machines/chain.ts","machines/tool-loop.ts"]');
    // Round 2 counts both files concurrently: their records may finish in either order.
    expect(stdout).toContain(`✓ #1 ${chain}\n`);
    expect(stdout).toContain(`✓ #2 ${loop}\n`);
    expect(stdout).toContain(`→ add({"numbers":[${chain},${loop}]})\n  ✓ #1 ${chain + loop}`);
    expect(stdout).toContain('plan: response (decided on its first field)');
    expect(stdout).toContain(`${chain + loop} lines in all [Total lines].`);
    expect(stdout).toContain('stopped: response after 3 rounds');
    expect(stdout).toContain(
      'states: planning → executing → planning → executing → planning → executing → planning → responding → done',
    );
  }, 30_000);
});
