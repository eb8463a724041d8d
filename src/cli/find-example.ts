import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../package-root.js';
import { CliError } from './cli-error.js';

// `statecraft run <example>`: a path to a script, or the name of one under examples/ — a file
// (`quickstart` → examples/quickstart.ts) or a folder with a run.ts or index.ts
// (`support-triage` → examples/support-triage/run.ts). Looked up in the working directory,
// then in the statecraft checkout the CLI runs from (the published package has no examples).

const EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'];
const ENTRIES = ['run', 'index'];

export function findExample(example: string, cwd = process.cwd()): string {
  if (/[\\/]/.test(example) || EXTENSIONS.some((ext) => example.endsWith(ext))) {
    const path = resolve(cwd, example);
    if (!existsSync(path) || !statSync(path).isFile()) {
      throw new CliError(`no example at ${example} (looked for ${path})`);
    }
    return path;
  }
  const folders = exampleFolders(cwd);
  for (const folder of folders) {
    const found = candidates(folder, example).find(
      (path) => existsSync(path) && statSync(path).isFile(),
    );
    if (found) return found;
  }
  const known = [...new Set(folders.flatMap(exampleNames))].sort();
  throw new CliError(
    `no example named "${example}"${known.length ? `; the examples are: ${known.join(', ')}` : ' (no examples/ folder here)'}`,
  );
}

function candidates(folder: string, name: string): string[] {
  return [
    ...EXTENSIONS.map((ext) => join(folder, `${name}${ext}`)),
    ...ENTRIES.flatMap((entry) => EXTENSIONS.map((ext) => join(folder, name, `${entry}${ext}`))),
  ];
}

function exampleFolders(cwd: string): string[] {
  // The current folder, and statecraft's own (a checkout, or wherever the package is installed).
  const roots = [cwd, packageRoot()].filter((root) => root !== undefined);
  return [...new Set(roots.map((root) => join(root, 'examples')))].filter(
    (folder) => existsSync(folder) && statSync(folder).isDirectory(),
  );
}

function exampleNames(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isFile()) {
      const ext = EXTENSIONS.find((e) => entry.name.endsWith(e));
      return ext ? [entry.name.slice(0, -ext.length)] : [];
    }
    if (!entry.isDirectory()) return [];
    const hasEntry = candidates(folder, entry.name)
      .slice(EXTENSIONS.length)
      .some((path) => existsSync(path));
    return hasEntry ? [entry.name] : [];
  });
}
