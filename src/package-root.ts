import { readFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

// Where statecraft's own files are. The built package bundles its modules into shared chunks
// (scripts/build.mjs), so a module's `import.meta.url` no longer says where its source sat:
// files a module means as "beside me" (the viewer's page, the examples) are found from the
// package's root instead, which is the same in a checkout and in an installed package.

const here = dirname(fileURLToPath(import.meta.url));

/** The nearest folder up from `from` holding statecraft's own package.json, if any. */
export function packageRoot(from = here): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown };
      if (pkg.name === 'statecraft') return dir;
    } catch {
      // no package.json here (or not one we can read): look further up
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * A path under the package's src/ as the running code has it: `<root>/dist/src/<path>` when the
 * code runs from the build, `<root>/src/<path>` when it runs from source. `path` is relative to
 * src/ and uses `/`.
 */
export function ownSourcePath(path: string, from = here): string {
  const root = packageRoot(from);
  // Bundled into someone else's build: no package.json of ours above; the module's folder is
  // the best guess, and a missing file is reported with this path.
  if (root === undefined) return join(from, ...path.split('/'));
  const built = relative(root, from).split(sep)[0] === 'dist';
  return join(root, ...(built ? ['dist', 'src'] : ['src']), ...path.split('/'));
}
