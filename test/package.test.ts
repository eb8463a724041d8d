import { mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ConfigError, ModelError, type ObservedRun, sequence } from 'statecraft';
import { observeRuns } from 'statecraft/observe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exec } from './package/npm.js';
import { type Packed, packRepository } from './package/pack.js';
import {
  COMMONJS_PROGRAM,
  DURABLE_OUTPUT,
  DURABLE_PROGRAM,
  ESM_PROGRAM,
  EXPECTED_OUTPUT,
} from './package/programs.js';
import { scratchProject } from './package/scratch-project.js';
import { fetchFromViewer } from './package/serve-viewer.js';

// The package as a user gets it: `npm pack` of the repository (its scripts build dist/),
// installed with no network into new ESM and CommonJS projects outside the repository, then
// type-checked and run there. Packing builds the whole package, and installing runs npm
// twice: the timeouts are sized for a busy 2-core machine.
const root = resolve('.');
const tsc = join(root, 'node_modules/typescript/bin/tsc');
const started = Date.now();
let work: string;
let packed: Packed;

interface PackageJson {
  name: string;
  version: string;
  main: string;
  types: string;
  bin: Record<string, string>;
  exports: Record<string, string | Record<string, string>>;
}
let manifest: PackageJson;
/** Every `exports` entry with conditions (all but ./package.json), by subpath. */
let entries: [string, Record<string, string>][];

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'statecraft-package-'));
  packed = await packRepository(root, work);
  manifest = JSON.parse(await readFile(join(packed.copy, 'package.json'), 'utf8'));
  entries = Object.entries(manifest.exports).filter(
    (entry): entry is [string, Record<string, string>] => typeof entry[1] === 'object',
  );
}, 300_000);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
  console.log(
    `package test: ${((Date.now() - started) / 1000).toFixed(1)} s; tarball ${packed?.size} bytes, ${packed?.files.length} files`,
  );
});

// A module resolve hook that appends every URL an import resolves to $LOAD_LOG, one a line.
const LOAD_LOG_HOOK = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  appendFileSync(process.env.LOAD_LOG, resolved.url + '\\n');
  return resolved;
}`;

const packedPath = (target: string) => target.replace(/^\.\//, '');

/** The report of a command that had to fail (exec's error holds its output). */
async function failure(run: Promise<unknown>): Promise<string> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, 'the command should have failed').toBeInstanceOf(Error);
  return (error as Error).message;
}

describe('the packed package', () => {
  it('holds the built code, declarations, CLI, LICENSE, README and CHANGELOG, and nothing else', async () => {
    const files = new Set(packed.files);
    for (const required of ['package.json', 'LICENSE', 'README.md', 'CHANGELOG.md']) {
      expect(files, required).toContain(required);
    }
    expect(files).toContain(packedPath(manifest.main));
    expect(files).toContain(packedPath(manifest.types));
    for (const bin of Object.values(manifest.bin)) {
      expect(files, bin).toContain(packedPath(bin));
      const code = await readFile(join(packed.copy, bin), 'utf8');
      expect(code.startsWith('#!/usr/bin/env node\n'), `${bin} starts with a shebang`).toBe(true);
    }
    // The viewer serves its page from beside its own module.
    expect(files).toContain('dist/src/viewer/page/index.html');

    const stray = packed.files.filter(
      (file) =>
        !/^(package\.json|LICENSE|README\.md|CHANGELOG\.md)$/.test(file) &&
        !/^dist\/(src|machines|adapters)\/.+\.(js|d\.ts)$/.test(file) &&
        !file.startsWith('dist/src/viewer/page/'),
    );
    expect(stray, 'files packed besides dist JS and declarations and the documents').toEqual([]);
    // No sources, tests, tarballs or source maps (dist's JS reads as its source does).
    expect(packed.files.filter((file) => /\.(map|tgz)$|^(src|test)\//.test(file))).toEqual([]);

    // The runtime JS is one bundle of every entry point (scripts/build.mjs): a file for each
    // exports entry and the bin, and the chunks they share under dist/src/chunks/. Every other
    // module has its declarations only.
    const entryFiles = new Set([
      ...entries.map(([, conditions]) => packedPath(conditions.default ?? '')),
      ...Object.values(manifest.bin).map(packedPath),
    ]);
    const js = packed.files.filter(
      (file) => file.endsWith('.js') && !file.startsWith('dist/src/viewer/page/'),
    );
    expect(
      js.filter((file) => !entryFiles.has(file) && !/^dist\/src\/chunks\/[\w-]+\.js$/.test(file)),
    ).toEqual([]);
    expect([...entryFiles].filter((file) => !js.includes(file))).toEqual([]);
    expect(js.some((file) => file.startsWith('dist/src/chunks/'))).toBe(true);
    for (const dts of ['dist/machines/chain.d.ts', 'dist/src/chain/create-chain.d.ts']) {
      expect(files, dts).toContain(dts);
    }
  });

  it('gives every exports entry the same conditions, each pointing at a packed file', () => {
    expect(entries.length).toBeGreaterThan(1);
    expect(manifest.exports['./package.json']).toBe('./package.json');
    for (const [subpath, conditions] of entries) {
      // `types` first (TypeScript takes the first condition it knows); `default` serves
      // require() (Node's require of ES modules) and every other resolver.
      expect(Object.keys(conditions), subpath).toEqual([
        'statecraft-source',
        'types',
        'import',
        'default',
      ]);
      const source = conditions['statecraft-source'] ?? '';
      expect(source, subpath).toMatch(/^\.\/src\/.+\.ts$/);
      const js = `./dist/${source.slice(2, -'.ts'.length)}.js`;
      expect(conditions, subpath).toEqual({
        'statecraft-source': source,
        types: js.replace(/\.js$/, '.d.ts'),
        import: js,
        default: js,
      });
      expect(packed.files, subpath).toContain(packedPath(js));
      expect(packed.files, subpath).toContain(packedPath(js.replace(/\.js$/, '.d.ts')));
    }
    expect(manifest.exports['.']).toMatchObject({ default: manifest.main, types: manifest.types });
  });

  it('leaves no tarball in the repository', async () => {
    expect((await readdir(root)).filter((name) => name.endsWith('.tgz'))).toEqual([]);
  });
});

describe('installed from the tarball with no network', () => {
  it('an ESM project type-checks and runs a chain, and the statecraft bin answers', async () => {
    const dir = join(work, 'esm-app');
    await scratchProject(root, dir, packed, 'esm');
    await writeFile(join(dir, 'index.ts'), ESM_PROGRAM);
    await exec(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir });
    const { stdout } = await exec(process.execPath, ['out/index.js'], { cwd: dir });
    expect(stdout).toBe(EXPECTED_OUTPUT);

    const bin = join(dir, 'node_modules/.bin/statecraft');
    expect((await exec(bin, ['--help'], { cwd: dir })).stdout).toMatch(/^Usage: statecraft /);
    expect((await exec(bin, ['--version'], { cwd: dir })).stdout.trim()).toBe(manifest.version);

    // The package ships no examples: its CLI offers none by name, and says so when given one.
    const runHelp = (await exec(bin, ['run', '--help'], { cwd: dir })).stdout;
    expect(runHelp).not.toMatch(/quickstart|support-triage/);
    expect(runHelp).toContain('statecraft run ./my-agent.ts');
    expect(await failure(exec(bin, ['run', 'quickstart'], { cwd: dir }))).toMatch(
      /\nstatecraft run: no example named "quickstart": there is no examples\/ folder here, and the installed statecraft package does not ship its examples; give the path to a script \(e\.g\. \.\/quickstart\.ts\)/,
    );
    // A missing export is found from the module's text, before its code runs.
    await writeFile(
      join(dir, 'side-effect.mjs'),
      "process.stderr.write('module code ran\\n');\nexport const machine = 1;\n",
    );
    const missing = await failure(exec(bin, ['graph', 'side-effect.mjs#nope'], { cwd: dir }));
    expect(missing).toContain(
      'statecraft graph: side-effect.mjs has no export named "nope"; it exports: machine',
    );
    expect(missing).not.toContain('module code ran');

    // A durable run on the file store, killed and resumed: its lazily loaded chunk is found.
    await writeFile(join(dir, 'durable.mjs'), DURABLE_PROGRAM);
    expect((await exec(process.execPath, ['durable.mjs'], { cwd: dir })).stdout).toBe(
      DURABLE_OUTPUT,
    );

    // The viewer serves its page from the installed package (its code sits in a shared chunk;
    // the page is at dist/src/viewer/page/). Mermaid, an optional peer, linked in for it.
    await symlink(join(root, 'node_modules/mermaid'), join(dir, 'node_modules/mermaid'), 'dir');
    await writeFile(join(dir, 'watched.mjs'), `console.log('watched');\n`);
    const page = '/';
    const served = await fetchFromViewer(bin, './watched.mjs', dir, [
      page,
      '/viewer.js',
      '/viewer.css',
      '/mermaid.min.js',
    ]);
    for (const [path, file] of [
      [page, 'index.html'],
      ['/viewer.js', 'viewer.js'],
      ['/viewer.css', 'viewer.css'],
    ] as const) {
      expect(served.get(path), path).toEqual({
        status: 200,
        body: await readFile(join(root, 'src/viewer/page', file), 'utf8'),
      });
    }
    expect(served.get('/mermaid.min.js')?.status).toBe(200);
  }, 240_000);

  it('a CommonJS project (no "type") type-checks and runs the same chain through require', async () => {
    const dir = join(work, 'commonjs-app');
    await scratchProject(root, dir, packed, 'commonjs');
    await writeFile(join(dir, 'index.ts'), COMMONJS_PROGRAM);
    await exec(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: dir });
    const compiled = await readFile(join(dir, 'out/index.js'), 'utf8');
    expect(compiled).toContain('require("statecraft")');
    const { stdout } = await exec(process.execPath, ['out/index.js'], { cwd: dir });
    expect(stdout).toBe(EXPECTED_OUTPUT);
  }, 240_000);
});

describe('the built package', () => {
  // require() of an ES module refuses a graph with top-level await in it (Node's
  // ERR_REQUIRE_ASYNC_MODULE): requiring every entry, with every optional peer present,
  // proves there is none. Each entry must also serve the names its source exports.
  it('loads every exports entry through require, with the names its source exports', async () => {
    const specifiers = entries.map(([subpath]) => `${manifest.name}${subpath.slice(1)}`);
    await writeFile(
      join(packed.copy, 'require-all.cjs'),
      `const names = {};
       for (const specifier of ${JSON.stringify(specifiers)}) {
         names[specifier] = Object.keys(require(specifier)).filter((k) => k !== '__esModule').sort();
       }
       console.log(JSON.stringify(names));`,
    );
    const { stdout } = await exec(process.execPath, ['require-all.cjs'], { cwd: packed.copy });
    const required = JSON.parse(stdout) as Record<string, string[]>;
    const fromSource: Record<string, string[]> = {};
    for (const specifier of specifiers) {
      fromSource[specifier] = Object.keys(await import(/* @vite-ignore */ specifier)).sort();
    }
    expect(required).toEqual(fromSource);
  }, 120_000);

  // Optional weight stays optional. A resolve hook logs every module the import loads;
  // `statecraft` must load no provider SDK, each subpath only its own.
  it('loads no provider SDK for `statecraft`, and each SDK only from its own subpath', async () => {
    const pkg = packed.copy;
    const sdks = ['openai', '@anthropic-ai/sdk', '@google/genai', '@modelcontextprotocol/sdk'];
    // Not among `sdks` for the provider subpaths: @anthropic-ai/sdk loads it on its own.
    const withOtel = [...sdks, '@opentelemetry/api', '@restatedev/restate-sdk'];
    await writeFile(join(pkg, 'log-hooks.mjs'), LOAD_LOG_HOOK);
    const register = `import { register } from 'node:module'; register('./log-hooks.mjs', import.meta.url);`;
    await writeFile(join(pkg, 'register.mjs'), register);
    const loaded = async (specifier: string, among = sdks) => {
      const log = join(pkg, `loaded-${specifier.replace(/\W/g, '_')}.log`);
      await exec(
        process.execPath,
        ['--import', './register.mjs', '--input-type=module', '-e', `await import('${specifier}')`],
        { cwd: pkg, env: { LOAD_LOG: log } },
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
    // The UI message stream is plain JSON, and the AI SDK's model specification is written
    // out, not imported: `ai` and `@ai-sdk/*` stay the app's choice.
    expect(await loaded('statecraft/ai-sdk', [...withOtel, 'ai', '@ai-sdk/provider'])).toEqual([]);
  }, 120_000);

  // What a chain does not need loads at first use: a plain `import('statecraft')` leaves the
  // file store's code and the streaming plan parser unloaded, and the file store still works
  // from the built package once used (its code found and loaded from dist).
  it('loads the file store, the streaming plan parser and node:crypto only when first used', async () => {
    const pkg = packed.copy;
    const log = join(pkg, 'loaded-lazily.log');
    await writeFile(join(pkg, 'lazy-hooks.mjs'), LOAD_LOG_HOOK);
    const script = `
      import { createRequire, register } from 'node:module';
      import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
      import { tmpdir } from 'node:os';
      import { join } from 'node:path';
      register('./lazy-hooks.mjs', import.meta.url);
      const { fileStore } = await import('statecraft');
      // The plan parser is required (CommonJS) at first use: the resolve hook does not see it.
      const required = Object.keys(createRequire(import.meta.url).cache);
      appendFileSync(process.env.LOAD_LOG, required.join('\\n') + '\\n--- used\\n');
      const dir = mkdtempSync(join(tmpdir(), 'statecraft-lazy-'));
      try {
        const store = fileStore(dir);
        await store.append('r1', { type: 'start', version: 1, runId: 'r1', kind: 'chain', startedAt: 1, input: 'hi' });
        console.log(JSON.stringify((await store.list()).map((run) => run.runId)));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }`;
    const { stdout } = await exec(process.execPath, ['--input-type=module', '-e', script], {
      cwd: pkg,
      env: { ...process.env, LOAD_LOG: log },
    });
    expect(JSON.parse(stdout)).toEqual(['r1']);
    const [atImport = '', afterUse = ''] = (await readFile(log, 'utf8')).split('--- used');
    // The file store's code is its own chunk (esbuild names a dynamically imported module's
    // chunk after it).
    const lazy = ['/dist/src/chunks/file-store-', '/node_modules/@streamparser/json/'];
    expect(lazy.filter((part) => atImport.includes(part))).toEqual([]);
    // node:crypto too (a tenth of the import's cost): ids and hashes load it at run time.
    expect(atImport.split('\n')).not.toContain('node:crypto');
    expect(afterUse).toContain('/dist/src/chunks/file-store-');
  }, 60_000);

  // The entry points are bundled together, split into shared chunks, so each module exists once
  // in the package: an app mixing `statecraft` with its subpaths gets one class per error, one
  // observer registry. (Bundled apart, each entry would carry its own copy of errors.ts.)
  it('shares one copy of every module between statecraft and its subpaths', async () => {
    const fromPackage = async (subpath: string) =>
      (await import(
        pathToFileURL(
          join(packed.copy, entries.find(([name]) => name === subpath)?.[1].default ?? subpath),
        ).href
      )) as Record<string, unknown>;
    const main = (await fromPackage('.')) as typeof import('statecraft');
    // Every StatecraftError any entry's classes derive from is the root's own class.
    const errorClasses: string[] = [];
    for (const [subpath] of entries) {
      for (const [name, value] of Object.entries(await fromPackage(subpath))) {
        if (typeof value !== 'function' || !/^[A-Z]\w*Error$/.test(name)) continue;
        for (let proto = value.prototype; proto; proto = Object.getPrototypeOf(proto)) {
          if (proto.constructor?.name !== 'StatecraftError') continue;
          errorClasses.push(`${subpath} ${name}`);
          expect(proto.constructor, `${subpath} ${name}`).toBe(main.StatecraftError);
        }
      }
    }
    expect(errorClasses.filter((name) => !name.startsWith('. ')).length).toBeGreaterThan(3);
    // An error thrown by a subpath's code is an instance of the root's class.
    const testing = (await fromPackage('./testing')) as typeof import('statecraft/testing');
    const exhausted = await new testing.ScriptedModel([])
      .generate({ messages: [], tools: [] } as never)
      .catch((error: unknown) => error);
    expect(exhausted).toBeInstanceOf(main.StatecraftError);
    // Observers registered through statecraft/observe hear of runs started from statecraft.
    const observe = (await fromPackage('./observe')) as typeof import('statecraft/observe');
    const runs: string[] = [];
    const off = observe.observeRuns({
      onRunStart: (run) => void runs.push(`${run.kind}:${run.name}`),
    });
    try {
      const chain = main.createChain({
        name: 'shared',
        model: new testing.ScriptedModel([{ text: 'done' }]),
      });
      await chain.invoke('hi');
    } finally {
      off();
    }
    expect(runs).toEqual(['chain:shared']);
  });

  it('recognises errors from another copy of the package with isInstance, where instanceof fails', async () => {
    const copy = (await import(
      pathToFileURL(join(packed.copy, 'dist/src/index.js')).href
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
      pathToFileURL(join(packed.copy, 'dist/src/index.js')).href
    )) as typeof import('statecraft');
    const testing = (await import(
      pathToFileURL(join(packed.copy, 'dist/src/testing.js')).href
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
