// `npm run build`, and so `npm pack` and git installs (through `prepare`): dist/ from scratch,
// with the viewer's static page beside its server. Plain Node instead of `rm -rf` and `cp -r`,
// so a git install builds on Windows too.
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tsc = join(
  dirname(createRequire(import.meta.url).resolve('typescript/package.json')),
  'bin/tsc',
);

rmSync(join(root, 'dist'), { recursive: true, force: true });
const built = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
  cwd: root,
  stdio: 'inherit',
});
if (built.status !== 0) process.exit(built.status ?? 1);
cpSync(join(root, 'src/viewer/page'), join(root, 'dist/src/viewer/page'), { recursive: true });
