// Which folder a file belongs to, and which folders form the pure core, as the import rules
// see them. docs/architecture.md explains each folder and each rule; this module is the same
// map in a form a test can check.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The folders that may sit under `machines/`: pure modules (no IO, no SDK) that the machines,
 * the runtime and the adapters all read. `src` stands for the basics at the top of src/
 * (errors, messages, transcript, usage, …), each of which is its own node in the folder graph.
 */
export const pureCore: readonly string[] = [
  'src',
  'src/approvals',
  'src/compile',
  'src/model',
  'src/options',
  'src/plan',
  'src/structured',
  'src/tools',
];

/**
 * The folders above `machines/`: they run machines, do IO or serve people. Every folder under
 * src/ is in exactly one of the two lists (a test checks it), so a new folder has to be placed.
 */
export const aboveMachines: readonly string[] = [
  'src/app-machines',
  'src/chain',
  'src/cli',
  'src/durable',
  'src/graph',
  'src/host',
  'src/observe',
  'src/otel',
  'src/restate',
  'src/run-config',
  'src/runnable',
  'src/tool-calls',
  'src/tool-loop',
  'src/ui-stream',
  'src/viewer',
  'src/viz',
];

/** The package's entry files (`statecraft-source` of each export in package.json). */
export function entryFiles(root: string): ReadonlySet<string> {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    exports: Record<string, { 'statecraft-source'?: string }>;
  };
  const entries = Object.values(pkg.exports)
    .map((target) => target['statecraft-source'])
    .filter((path): path is string => path !== undefined)
    .map((path) => path.replace(/^\.\//, ''));
  return new Set(entries);
}

/**
 * The folder of a file for the rules: `src/host` for `src/host/run-host.ts` (subfolders count
 * as their top folder: `src/durable/stores/…` is `src/durable`), `machines`, `adapters/models`
 * for `adapters/models/openai/…`, and `src` for a basic at the top of src/.
 */
export function folderOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'machines') return 'machines';
  if (parts.length === 2) return parts[0] ?? file;
  return `${parts[0]}/${parts[1]}`;
}

/**
 * The node a file is in the folder graph: its folder, except the files at the top of src/,
 * which are each their own node (an entry file, or one basic such as `src/errors.ts`), since
 * "src/" is not one part of the system but the place its smallest words and its doors live.
 */
export function folderNode(file: string): string {
  return folderOf(file) === 'src' ? file : folderOf(file);
}
