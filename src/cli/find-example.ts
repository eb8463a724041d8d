import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { packageRoot } from '../package-root.js';
import { CliError } from './cli-error.js';

// `statecraft run <example>`: a path to a script, or the name of one under examples/ — a file
// (`quickstart` → examples/quickstart.ts) or a folder with a run.ts or index.ts
// (`support-triage` → examples/support-triage/run.ts). Looked up in the working directory,
// then in the statecraft checkout the CLI runs from. The published package does not ship its
// examples (they are TypeScript that imports the repository's sources): where it is installed,
// names are not offered (availableExamples is empty, so --help shows paths) and a bare name
// says to give a path.

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
  const known = availableExamples(cwd);
  throw new CliError(
    known.length > 0
      ? `no example named "${example}"; the examples are: ${known.join(', ')}`
      : `no example named "${example}": there is no examples/ folder here, and the installed ` +
          `statecraft package does not ship its examples; give the path to a script (e.g. ` +
          `./${example}.ts), or run the examples in a clone of the statecraft repository`,
  );
}

/** The example names `statecraft run <name>` finds from `cwd`, sorted; none where installed. */
export function availableExamples(cwd = process.cwd()): string[] {
  return [...new Set(exampleFolders(cwd).flatMap(exampleNames))].sort();
}

/** What `<example>` may be, naming a few examples when there are any. */
export function exampleArgument(examples: readonly string[]): string {
  if (examples.length === 0) return 'a path to a script, e.g. ./my-agent.ts';
  const some = ['quickstart', 'support-triage'].filter((name) => examples.includes(name));
  const named = (some.length > 0 ? some : examples.slice(0, 2)).join(' or ');
  return `an example name under examples/, e.g. ${named}, or a path to a script`;
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
