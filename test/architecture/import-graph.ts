// The import graph of the package's own code (src/, machines/, adapters/), read from the real
// source by the TypeScript compiler: every module a file names, whether in an `import`, an
// `import type`, an `export … from`, a dynamic `import()` or an `import('…')` type, since a
// type-only import ties two files together for a reader just as much as a value import does.
//
// TypeScript 7 is the native compiler; its JavaScript API (`typescript/unstable/sync`) parses
// the files in the native process and hands back each source file's `imports`, the list the
// compiler itself resolves. It is the one module here that talks to that API, so a change in
// the API's shape is a change in this file only.
import { readdirSync, statSync } from 'node:fs';
import { join, posix, resolve } from 'node:path';
import { API } from 'typescript/unstable/sync';

/** The folders whose files the rules cover. */
export const roots = ['src', 'machines', 'adapters'] as const;

export interface ImportEdge {
  /** The importing file, relative to the repository root (`src/host/run-host.ts`). */
  readonly from: string;
  /** What the file wrote: `./run-kind.js`, `xstate`, `node:fs`. */
  readonly specifier: string;
  /** The imported file relative to the root when the specifier is relative; else undefined. */
  readonly to: string | undefined;
}

export interface ImportGraph {
  /** Every .ts file under the roots, sorted. */
  readonly files: readonly string[];
  /** The imports of each file, in source order. */
  readonly imports: ReadonlyMap<string, readonly ImportEdge[]>;
}

/** Lists the .ts files under the roots (declaration files excluded), relative and sorted. */
export function listSourceFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(join(root, dir))) {
      const path = posix.join(dir, name);
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) found.push(path);
    }
  };
  for (const dir of roots) walk(dir);
  return found.sort();
}

/** Resolves a relative specifier the way NodeNext does for this repository's sources. */
export function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('./') && !specifier.startsWith('../')) return undefined;
  const target = posix.normalize(posix.join(posix.dirname(from), specifier));
  return target.endsWith('.js') ? `${target.slice(0, -3)}.ts` : target;
}

/**
 * Reads the import graph of the repository at `root` through the compiler. Takes about two
 * seconds: the native compiler loads the project of `tsconfig.build.json` (src/, machines/, adapters/) once.
 */
export function readImportGraph(root: string): ImportGraph {
  const absoluteRoot = resolve(root);
  const files = listSourceFiles(absoluteRoot);
  const api = new API({ cwd: absoluteRoot });
  try {
    const snapshot = api.updateSnapshot({
      openProjects: [join(absoluteRoot, 'tsconfig.build.json')],
    });
    const project = snapshot.getProjects()[0];
    if (project === undefined) throw new Error('tsconfig.build.json opened no project');
    const imports = new Map<string, ImportEdge[]>();
    for (const file of files) {
      const source = project.program.getSourceFile(join(absoluteRoot, file));
      if (source === undefined) {
        throw new Error(
          `${file} is not in tsconfig.build.json's program, so its imports cannot be read`,
        );
      }
      const edges: ImportEdge[] = [];
      const seen = new Set<string>();
      for (const node of source.imports) {
        const specifier = (node as { readonly text?: string }).text;
        if (specifier === undefined || seen.has(specifier)) continue;
        seen.add(specifier);
        edges.push({ from: file, specifier, to: resolveRelative(file, specifier) });
      }
      imports.set(file, edges);
    }
    return { files, imports };
  } finally {
    api.close();
  }
}
