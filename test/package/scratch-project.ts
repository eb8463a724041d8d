import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { npm } from './npm.js';
import { offlineLockfile } from './offline-lockfile.js';
import type { Packed } from './pack.js';

/**
 * A project a user starts outside the repository, `npm init -y` style: ESM ("type":
 * "module") or CommonJS (no "type" at all), with the packed tarball, zod and @types/node
 * installed by `npm ci --offline` (see offlineLockfile: no registry is asked), and a tsconfig
 * as `tsc --init` writes it for Node (module nodenext, strict).
 */
export async function scratchProject(
  repo: string,
  dir: string,
  packed: Packed,
  kind: 'esm' | 'commonjs',
): Promise<void> {
  await mkdir(dir, { recursive: true });
  const name = `scratch-${kind}`;
  const manifest = JSON.parse(
    await readFile(join(packed.copy, 'package.json'), 'utf8'),
  ) as Parameters<typeof offlineLockfile>[2]['manifest'];
  const spec = `file:${relative(dir, packed.tarball)}`;
  const { lock, pins } = await offlineLockfile(
    repo,
    { name, version: '1.0.0' },
    { spec, integrity: packed.integrity, manifest },
    ['zod', '@types/node'],
  );
  const pkg = {
    name,
    version: '1.0.0',
    ...(kind === 'esm' ? { type: 'module' } : {}),
    main: 'index.js',
    license: 'ISC',
    dependencies: { [manifest.name]: spec, ...pins },
  };
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  await writeFile(join(dir, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  const tsconfig = {
    compilerOptions: {
      module: 'nodenext',
      target: 'es2022',
      types: ['node'],
      strict: true,
      skipLibCheck: false,
      outDir: 'out',
    },
    include: ['*.ts'],
  };
  await writeFile(join(dir, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  try {
    await npm(['ci', '--offline'], { cwd: dir, timeoutMs: 120_000 });
  } catch (error) {
    if (!/ENOTCACHED/.test(String(error))) throw error;
    throw new Error(
      `The npm cache lacks a package the repository's lock pins; this test installs with --offline from the cache \`npm ci\` fills: run \`npm ci\` in the repository first.\n${error}`,
    );
  }
}
