// Restate's SDK calls Promise.withResolvers, which Node 20 lacks: `statecraft/restate` brings
// it before the SDK loads. Checked in a fresh process, where no other test's import has run.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);

async function inFreshNode(script: string): Promise<unknown> {
  const { stdout } = await run(
    process.execPath,
    ['--conditions=statecraft-source', '--import', 'tsx', '--input-type=module', '-e', script],
    { timeout: 30_000 },
  );
  return JSON.parse(stdout);
}

describe('Promise.withResolvers for the Restate SDK', { timeout: 60_000 }, () => {
  it('is there once statecraft/restate is imported, and resolves and rejects its promise', async () => {
    const seen = await inFreshNode(`
      const before = typeof Promise.withResolvers;
      await import('statecraft/restate');
      const a = Promise.withResolvers();
      a.resolve(42);
      const b = Promise.withResolvers();
      b.reject(new Error('no'));
      console.log(JSON.stringify({
        node: process.versions.node.split('.')[0],
        before,
        after: typeof Promise.withResolvers,
        resolved: await a.promise,
        rejected: await b.promise.catch((e) => e.message),
      }));`);
    const { node, before } = seen as { node: string; before: string };
    // On Node 20 (this project's floor) there is none before: the polyfill is what makes it work.
    if (node === '20') expect(before).toBe('undefined');
    expect(seen).toMatchObject({ after: 'function', resolved: 42, rejected: 'no' });
  });

  it("keeps a runtime's own Promise.withResolvers", async () => {
    const seen = await inFreshNode(`
      const own = function withResolvers() { return 'own'; };
      Promise.withResolvers = own;
      await import('statecraft/restate');
      console.log(JSON.stringify(Promise.withResolvers === own));`);
    expect(seen).toBe(true);
  });
});
