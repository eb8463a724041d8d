import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// `statecraft --version`: the version in statecraft's own package.json, found by walking up
// from this module (src/cli/ in a checkout, dist/src/cli/ when built and installed).

export function packageVersion(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
        name?: unknown;
        version?: unknown;
      };
      if (pkg.name === 'statecraft' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // no package.json here (or not one we can read): look further up
    }
    if (dirname(dir) === dir) return 'unknown';
  }
}
