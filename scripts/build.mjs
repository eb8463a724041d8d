// `npm run build`, and so `npm pack` and git installs (through `prepare`): dist/ from scratch.
// Declarations come from `tsc` (a .d.ts beside every module, so types resolve as they always
// have); the JavaScript comes from esbuild, every entry point of the package bundled at once
// with code splitting. Node's loader pays about a millisecond per module file, and the package
// is some hundred and thirty modules: bundled, `import('statecraft')` loads a handful of files.
// Splitting (rather than one bundle per entry) keeps one copy of every module across entry
// points, so `statecraft` and its subpaths share classes, registries and WeakMaps. Dependencies
// stay external: they resolve from the app's node_modules as before. Plain Node instead of
// `rm -rf` and `cp -r`, so a git install builds on Windows too.
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const tsc = join(dirname(require.resolve('typescript/package.json')), 'bin/tsc');

rmSync(join(root, 'dist'), { recursive: true, force: true });
const declared = spawnSync(
  process.execPath,
  [tsc, '-p', join(root, 'tsconfig.build.json'), '--emitDeclarationOnly'],
  { cwd: root, stdio: 'inherit' },
);
if (declared.status !== 0) process.exit(declared.status ?? 1);

// Every `exports` entry and the CLI, each at the path package.json names (dist/src/<name>.js).
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const sources = [
  ...Object.values(manifest.exports).flatMap((entry) =>
    typeof entry === 'object' ? [entry['statecraft-source']] : [],
  ),
  'src/cli/main.ts',
];
const ROOT_SOURCE = manifest.exports['.']['statecraft-source'];
const entryPoints = sources.map((source) => ({
  in: source === ROOT_SOURCE ? join(root, source) : `statecraft-entry:${source}`,
  out: source.replace(/\.ts$/, ''),
}));

// Every other entry point is built as `import <root>; export * from <entry>`: each then reaches
// every module the root does, so esbuild (which splits by the set of entries reaching a module)
// puts all of the root's code in one shared chunk instead of dozens, and the root loads two
// files. Importing a subpath evaluates the root's modules too, which only define things.
const entryWrappers = {
  name: 'statecraft-entries',
  setup(build) {
    build.onResolve({ filter: /^statecraft-entry:/ }, (args) => ({
      path: args.path.slice('statecraft-entry:'.length),
      namespace: 'statecraft-entry',
    }));
    build.onLoad({ filter: /.*/, namespace: 'statecraft-entry' }, (args) => {
      const source = join(root, args.path);
      // The CLI's shebang: esbuild keeps an entry file's own, which here is the wrapper's.
      const hashbang = /^#!.*\n/.exec(readFileSync(source, 'utf8'))?.[0] ?? '';
      return {
        contents: `${hashbang}import ${JSON.stringify(join(root, ROOT_SOURCE))};\nexport * from ${JSON.stringify(source)};\n`,
        resolveDir: root,
        loader: 'js',
      };
    });
  },
};

// esbuild is a dev dependency (pinned to the version tsx uses, so it is installed once). A
// clear line instead of a stack if it is missing.
let esbuild;
try {
  esbuild = require('esbuild');
} catch (error) {
  console.error(`statecraft build: esbuild is not installed (${error.message}); run npm install`);
  process.exit(1);
}
await esbuild.build({
  absWorkingDir: root,
  entryPoints,
  outdir: join(root, 'dist'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  // Shared code goes to dist/src/chunks/; the file store's lazily imported code keeps its name.
  chunkNames: 'src/chunks/[name]-[hash]',
  plugins: [entryWrappers],
  // Whole modules, as tsc emitted them: chunks follow module reachability alone.
  treeShaking: false,
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
});
cpSync(join(root, 'src/viewer/page'), join(root, 'dist/src/viewer/page'), { recursive: true });
