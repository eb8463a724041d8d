import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { ConfigError, ModelError, type ObservedRun, sequence } from 'statecraft';
import { observeRuns } from 'statecraft/observe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = resolve('.');
let pkg: string;

// Builds the package as `npm run build` does, into a scratch copy, and uses it the way a
// consumer would: by package name, through the `exports` map, with no TypeScript involved.
beforeAll(async () => {
  pkg = join(await mkdtemp(join(tmpdir(), 'statecraft-pkg-')), 'statecraft');
  await run(join(root, 'node_modules/.bin/tsc'), [
    '-p',
    'tsconfig.build.json',
    '--outDir',
    join(pkg, 'dist'),
  ]);
  await cp(join(root, 'package.json'), join(pkg, 'package.json'));
  await symlink(join(root, 'node_modules'), join(pkg, 'node_modules'), 'dir');
}, 60_000);

afterAll(async () => {
  if (pkg) await rm(resolve(pkg, '..'), { recursive: true, force: true });
});

describe('the built package', () => {
  it('serves `statecraft` and `statecraft/testing` from dist, with type declarations', async () => {
    const script = `
      const core = await import('statecraft');
      const testing = await import('statecraft/testing');
      const fs = await import('node:fs');
      const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'));
      console.log(JSON.stringify({
        core: ['createChain', 'defineTool', 'Transcript', 'ModelError'].filter((k) => typeof core[k] === 'function'),
        testing: Object.keys(testing).sort(),
        types: Object.values(pkg.exports).map((e) => fs.existsSync(e.types)),
      }));`;
    const { stdout } = await run('node', ['--input-type=module', '-e', script], { cwd: pkg });
    const seen = JSON.parse(stdout);
    expect(seen.core).toEqual(['createChain', 'defineTool', 'Transcript', 'ModelError']);
    expect(seen.testing).toEqual([
      'DEFAULT_LIMITS',
      'PathReplayError',
      'ScriptExhaustedError',
      'ScriptedModel',
      'TraversalLimitError',
      'allSnapshots',
      'allTransitionNames',
      'assertCanReach',
      'assertUnreachable',
      'canReach',
      'generatePathTests',
      'reachabilityViolations',
      'serializeSnapshot',
      'stateNodePaths',
      'transitionName',
    ]);
    expect(seen.types.length).toBeGreaterThan(8);
    expect(seen.types.every(Boolean)).toBe(true);
  });

  // DESIGN principle 7: optional weight stays optional. A resolve hook logs every module the
  // import loads; `statecraft` must load no provider SDK, each subpath only its own.
  it('loads no provider SDK for `statecraft`, and each SDK only from its own subpath', async () => {
    const sdks = ['openai', '@anthropic-ai/sdk', '@google/genai', '@modelcontextprotocol/sdk'];
    // Not among `sdks` for the provider subpaths: @anthropic-ai/sdk loads it on its own.
    const withOtel = [...sdks, '@opentelemetry/api', '@restatedev/restate-sdk'];
    const loaded = async (specifier: string, among = sdks) => {
      const log = join(pkg, `loaded-${specifier.replace(/\W/g, '_')}.log`);
      await writeFile(
        join(pkg, 'log-hooks.mjs'),
        `import { appendFileSync } from 'node:fs';
         export async function resolve(specifier, context, next) {
           const resolved = await next(specifier, context);
           appendFileSync(process.env.LOAD_LOG, resolved.url + '\\n');
           return resolved;
         }`,
      );
      const register = `import { register } from 'node:module'; register('./log-hooks.mjs', import.meta.url);`;
      await writeFile(join(pkg, 'register.mjs'), register);
      await run(
        'node',
        ['--import', './register.mjs', '--input-type=module', '-e', `await import('${specifier}')`],
        {
          cwd: pkg,
          env: { ...process.env, LOAD_LOG: log },
        },
      );
      const urls = (await readFile(log, 'utf8')).split('\n');
      return among.filter((sdk) => urls.some((url) => url.includes(`/node_modules/${sdk}/`)));
    };
    expect(await loaded('statecraft', withOtel)).toEqual([]);
    expect(await loaded('statecraft/testing', withOtel)).toEqual([]);
    for (const sub of [
      'compile',
      'machines',
      'tool-loop',
      'model',
      'tools',
      'durable',
      'observe',
      'viz',
    ]) {
      expect(await loaded(`statecraft/${sub}`, withOtel)).toEqual([]);
    }
    expect(await loaded('statecraft/openai')).toEqual(['openai']);
    expect(await loaded('statecraft/anthropic')).toEqual(['@anthropic-ai/sdk']);
    expect(await loaded('statecraft/gemini')).toEqual(['@google/genai']);
    expect(await loaded('statecraft/mcp')).toEqual(['@modelcontextprotocol/sdk']);
    expect(await loaded('statecraft/otel', withOtel)).toEqual(['@opentelemetry/api']);
    expect(await loaded('statecraft/restate', withOtel)).toEqual(['@restatedev/restate-sdk']);
  }, 120_000);

  // What a chain does not need loads at first use: a plain `import('statecraft')` leaves the
  // file store's code and the streaming plan parser unloaded, and the file store still works
  // from the built package once used (its code found and loaded from dist).
  it('loads the file store and the streaming plan parser only when first used', async () => {
    const log = join(pkg, 'loaded-lazily.log');
    await writeFile(
      join(pkg, 'lazy-hooks.mjs'),
      `import { appendFileSync } from 'node:fs';
       export async function resolve(specifier, context, next) {
         const resolved = await next(specifier, context);
         appendFileSync(process.env.LOAD_LOG, resolved.url + '\\n');
         return resolved;
       }`,
    );
    const script = `
      import { register } from 'node:module';
      import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
      import { tmpdir } from 'node:os';
      import { join } from 'node:path';
      register('./lazy-hooks.mjs', import.meta.url);
      const { fileStore } = await import('statecraft');
      appendFileSync(process.env.LOAD_LOG, '--- used\\n');
      const dir = mkdtempSync(join(tmpdir(), 'statecraft-lazy-'));
      try {
        const store = fileStore(dir);
        await store.append('r1', { type: 'start', version: 1, runId: 'r1', kind: 'chain', startedAt: 1, input: 'hi' });
        console.log(JSON.stringify((await store.list()).map((run) => run.runId)));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }`;
    const { stdout } = await run('node', ['--input-type=module', '-e', script], {
      cwd: pkg,
      env: { ...process.env, LOAD_LOG: log },
    });
    expect(JSON.parse(stdout)).toEqual(['r1']);
    const [atImport = '', afterUse = ''] = (await readFile(log, 'utf8')).split('--- used');
    const lazy = ['/durable/stores/file-store.js', '/node_modules/@streamparser/json/'];
    expect(lazy.filter((part) => atImport.includes(part))).toEqual([]);
    expect(afterUse).toContain('/durable/stores/file-store.js');
  }, 60_000);

  it('recognises errors from another copy of the package with isInstance, where instanceof fails', async () => {
    const copy = (await import(
      pathToFileURL(join(pkg, 'dist/src/index.js')).href
    )) as typeof import('statecraft');
    const theirs = new copy.ConfigError('maxIterations', 'must be an integer');
    expect(theirs instanceof ConfigError).toBe(false);
    expect(ConfigError.isInstance(theirs)).toBe(true);
    expect(ModelError.isInstance(theirs)).toBe(false);
    expect(copy.ModelError.isInstance(new ModelError('x', { retryable: true }))).toBe(true);
  });

  // `statecraft run` from a global install, running a script that imports its own copy: the
  // observers registered through one copy hear of the runs of the other, and a Runnable of
  // one copy wrapping a chain of the other still reports one run, its child.
  it('shares run observers with another copy of the package in the same process', async () => {
    const copy = (await import(
      pathToFileURL(join(pkg, 'dist/src/index.js')).href
    )) as typeof import('statecraft');
    const testing = (await import(
      pathToFileURL(join(pkg, 'dist/src/testing.js')).href
    )) as typeof import('statecraft/testing');
    const runs: ObservedRun[] = [];
    const off = observeRuns({ onRunStart: (run) => void runs.push(run) });
    try {
      const chain = copy.createChain({
        name: 'theirs',
        model: new testing.ScriptedModel([{ text: 'one' }, { text: 'two' }]),
      });
      await chain.invoke('hi');
      expect(runs.map((run) => `${run.kind}:${run.name}`)).toEqual(['chain:theirs']);

      runs.length = 0;
      await sequence(chain).invoke('hi');
      expect(runs.map((run) => `${run.kind}:${run.name}`)).toEqual([
        'sequence:theirs',
        'chain:theirs',
      ]);
      expect(runs[1]?.parentRunId).toBe(runs[0]?.runId);
    } finally {
      off();
    }
  });
});
