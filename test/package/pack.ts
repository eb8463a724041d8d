import { createHash } from 'node:crypto';
import { cp, mkdir, readFile, symlink } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { npm } from './npm.js';

/** What `npm pack` made of the repository. */
export interface Packed {
  /** The copy of the repository that was packed; it holds the built dist/ afterwards. */
  copy: string;
  tarball: string;
  /** `sha512-…`, as a lockfile records it. */
  integrity: string;
  /** Every path in the tarball, relative to its package folder. */
  files: string[];
  /** Bytes of the tarball. */
  size: number;
}

// Left out of the copy: what an install or a build makes, and what git ignores.
const NOT_COPIED = new Set(['node_modules', 'dist', '.git', 'coverage', '.vitest-report.json']);

/**
 * Packs the repository as `npm pack` does in a fresh clone: a copy of the work tree without
 * dist/ (so the package's own scripts must build it) and with the repository's node_modules
 * linked in (as `npm ci` would have made it), packed into `into`. The repository itself is not
 * touched: its dist/ is not rebuilt under other tests, and no tarball lands in it.
 */
export async function packRepository(repo: string, into: string): Promise<Packed> {
  const copy = join(into, 'repo');
  await cp(repo, copy, {
    recursive: true,
    filter: (source) => {
      const [top] = relative(repo, source).split(sep);
      return !NOT_COPIED.has(top ?? '') && !source.endsWith('.tgz');
    },
  });
  await symlink(join(repo, 'node_modules'), join(copy, 'node_modules'), 'dir');
  const out = join(into, 'pack');
  await mkdir(out);
  const { stdout } = await npm(['pack', '--json', '--pack-destination', out], {
    cwd: copy,
    timeoutMs: 240_000,
  });
  // The build's own output comes before the JSON on stdout.
  const [result] = JSON.parse(stdout.slice(stdout.indexOf('\n[') + 1)) as [
    { filename: string; size: number; files: { path: string }[] },
  ];
  const tarball = join(out, basename(result.filename));
  const digest = createHash('sha512')
    .update(await readFile(tarball))
    .digest('base64');
  return {
    copy,
    tarball,
    integrity: `sha512-${digest}`,
    files: result.files.map((file) => file.path).sort(),
    size: result.size,
  };
}
