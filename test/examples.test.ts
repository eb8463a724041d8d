import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { toMermaid } from 'statecraft/viz';
import { describe, expect, it } from 'vitest';
import { chainMachine } from '../machines/chain.js';

const run = promisify(execFile);

/** The fenced block that follows an HTML comment marker in the README. */
function blockAfter(readme: string, marker: string): string {
  const start = readme.indexOf(`<!-- ${marker} -->`);
  expect(start, `README marker ${marker}`).toBeGreaterThan(-1);
  const fence = readme.indexOf('```', start);
  const bodyStart = readme.indexOf('\n', fence) + 1;
  return readme.slice(bodyStart, readme.indexOf('```', bodyStart));
}

describe('README quickstart', () => {
  it('shows the example file as it is, and the output it really prints', async () => {
    const [readme, source] = await Promise.all([
      readFile('README.md', 'utf8'),
      readFile('examples/quickstart.ts', 'utf8'),
    ]);
    expect(blockAfter(readme, 'quickstart:code')).toBe(source);
    expect(source.trimEnd().split('\n').length).toBeLessThanOrEqual(20);

    const { stdout } = await run('node', [
      '--conditions=statecraft-source',
      '--import',
      'tsx',
      'examples/quickstart.ts',
    ]);
    expect(stdout).toBe(blockAfter(readme, 'quickstart:output'));
    expect(stdout).toContain('result: { answer: 5 }');
  }, 30_000);
});

describe('README composition example', () => {
  it('shows examples/compose.ts as it is, and the run tree and answer it really prints', async () => {
    const [readme, source] = await Promise.all([
      readFile('README.md', 'utf8'),
      readFile('examples/compose.ts', 'utf8'),
    ]);
    expect(blockAfter(readme, 'compose:code')).toBe(source);
    const { stdout } = await run('node', [
      '--conditions=statecraft-source',
      '--import',
      'tsx',
      'examples/compose.ts',
    ]);
    expect(stdout).toBe(blockAfter(readme, 'compose:output'));
    expect(stdout).toContain('[priority] On it. ({"topic":"billing","urgent":true})');
  }, 30_000);
});

describe('README chain diagram', () => {
  it('is the Mermaid text toMermaid gives for the chain machine (what `statecraft graph` prints)', async () => {
    const readme = await readFile('README.md', 'utf8');
    const block = blockAfter(readme, 'chain:mermaid');
    expect(block.trimEnd()).toBe(toMermaid(chainMachine).trimEnd());
    expect(block).toContain('s_thinking --> s_doing : callModel.done [canDo]');
  });
});

describe('README durable run', () => {
  it('shows examples/durable-run.ts as it is, and what it prints after a real kill -9', async () => {
    const [readme, source] = await Promise.all([
      readFile('README.md', 'utf8'),
      readFile('examples/durable-run.ts', 'utf8'),
    ]);
    expect(blockAfter(readme, 'durable:code')).toBe(source);
    expect(source.trimEnd().split('\n').length).toBeLessThanOrEqual(20);
    const { stdout } = await run(
      'node',
      ['--conditions=statecraft-source', '--import', 'tsx', 'examples/durable-run.ts'],
      { timeout: 30_000 },
    );
    expect(stdout).toBe(blockAfter(readme, 'durable:output'));
    expect(stdout).toContain('first process: SIGKILL');
  }, 30_000);
});

describe('README approval', () => {
  it('shows examples/approval.ts as it is, and what its three processes print', async () => {
    const [readme, source] = await Promise.all([
      readFile('README.md', 'utf8'),
      readFile('examples/approval.ts', 'utf8'),
    ]);
    expect(blockAfter(readme, 'approval:code')).toBe(source);
    const { stdout } = await run(
      'node',
      ['--conditions=statecraft-source', '--import', 'tsx', 'examples/approval.ts'],
      { timeout: 30_000 },
    );
    expect(stdout).toBe(blockAfter(readme, 'approval:output'));
  }, 30_000);
});

describe('README on many machines', () => {
  it('shows examples/restate.ts as it is, and what it prints with a real server and 2 workers', async () => {
    const [readme, source] = await Promise.all([
      readFile('README.md', 'utf8'),
      readFile('examples/restate.ts', 'utf8'),
    ]);
    expect(blockAfter(readme, 'restate:code')).toBe(source);
    const { stdout } = await run(
      'node',
      ['--conditions=statecraft-source', '--import', 'tsx', 'examples/restate.ts'],
      { timeout: 60_000 },
    );
    expect(stdout).toBe(blockAfter(readme, 'restate:output'));
  }, 60_000);
});
