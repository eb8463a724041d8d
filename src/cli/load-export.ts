import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CliError } from './cli-error.js';
import { staticExports } from './static-exports.js';

// `<module>#<export>`: a module path relative to the working directory (a .ts file too: the
// CLI runs under tsx, or registers it when it can) and the name of one of its exports.

export interface ExportRef {
  /** As the user wrote it. */
  readonly module: string;
  readonly exportName: string;
}

/** Splits `machines/chain.ts#chainMachine`; without `#export` it lists what to choose from. */
export async function loadExport(ref: string): Promise<{ readonly value: unknown } & ExportRef> {
  const hash = ref.lastIndexOf('#');
  const module = hash === -1 ? ref : ref.slice(0, hash);
  const exportName = hash === -1 ? '' : ref.slice(hash + 1);
  if (!module) throw new CliError(`"${ref}" names no module: write <module>#<export>`);
  // Said before the module's code runs, when its text shows which names it exports.
  const known = readExportNames(module);
  if (known && !(exportName && known.has(exportName))) noSuchExport(ref, module, exportName, known);
  const exports = await importModule(module);
  if (!(exportName && exportName in exports)) {
    noSuchExport(ref, module, exportName, new Set(Object.keys(exports)));
  }
  return { value: exports[exportName], module, exportName };
}

function noSuchExport(
  ref: string,
  module: string,
  exportName: string,
  exports: ReadonlySet<string>,
): never {
  const names = [...exports].sort();
  if (!exportName) {
    throw new CliError(
      `"${ref}" names no export: write ${module}#<export>, one of: ${names.join(', ') || '(the module exports nothing)'}`,
    );
  }
  throw new CliError(
    `${module} has no export named "${exportName}"; it exports: ${names.join(', ') || '(nothing)'}`,
  );
}

/** Extensions whose text staticExports reads (JSX's text is not JavaScript's). */
const SCANNED = /\.(?:[cm]?ts|m?js)$/;

/**
 * The names `module` exports, read from its text (staticExports), or undefined when that
 * cannot be sure (then importing the module is the way to know).
 */
function readExportNames(module: string): ReadonlySet<string> | undefined {
  const path = resolve(module);
  if (!SCANNED.test(path) || /\.c[jt]s$/.test(path)) return undefined;
  try {
    if (!statSync(path).isFile()) return undefined;
    return staticExports(readFileSync(path, 'utf8'));
  } catch {
    return undefined; // unreadable: importModule says why
  }
}

/**
 * Imports a module by its path from the working directory, with errors that name it;
 * `failure` words what went wrong when the module throws (default: loading it failed).
 */
export async function importModule(
  module: string,
  failure = (message: string) => `loading ${module} failed: ${message}`,
): Promise<Record<string, unknown>> {
  const path = resolve(module);
  if (!existsSync(path)) throw new CliError(`no module at ${module} (looked for ${path})`);
  if (!statSync(path).isFile()) throw new CliError(`${module} is a directory, not a module`);
  const url = pathToFileURL(path).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (error) {
    if (isCode(error, 'ERR_UNKNOWN_FILE_EXTENSION') && (await registerTsx())) {
      // A new URL: Node keeps the failed load of the first one.
      const retry = import(`${url}?tsx`);
      return (await retry.catch((again) => fail(module, again, failure))) as Record<
        string,
        unknown
      >;
    }
    return fail(module, error, failure);
  }
}

function fail(module: string, error: unknown, failure: (message: string) => string): never {
  if (isCode(error, 'ERR_UNKNOWN_FILE_EXTENSION')) {
    throw new CliError(
      `${module}: Node cannot load this file type by itself; install tsx (npm install -D tsx) to load TypeScript modules`,
    );
  }
  const message = error instanceof Error ? error.message : String(error);
  // The module's own error stays attached: STATECRAFT_DEBUG=1 prints its stack.
  throw new CliError(failure(message), { cause: error });
}

/** Lets Node import TypeScript from here on, when tsx is installed (the published CLI). */
async function registerTsx(): Promise<boolean> {
  try {
    const api = (await import('tsx/esm/api' as string)) as { register?: () => unknown };
    api.register?.();
    return typeof api.register === 'function';
  } catch {
    return false;
  }
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}
