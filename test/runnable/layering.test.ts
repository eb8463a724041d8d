import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The layers around Runnables, read from the source: the run config and the observers sit
// below the run host, the host below the kinds of run, and src/runnable on top, so none of
// them imports a folder above it; inside src/runnable only the public doors import the one
// file that builds runnables; and no module imports a factory file for its types.

const root = resolve(import.meta.dirname, '../..');

function sourceFiles(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(folder, name).split('\\').join('/'));
}

const files = [...sourceFiles('src'), ...sourceFiles('machines'), ...sourceFiles('adapters')];

interface Import {
  readonly from: string;
  readonly to: string;
  /** The names it imports, `type ` before each type-only one (all of them for `import type`). */
  readonly names: readonly string[];
}

const IMPORT =
  /(?:import|export)\s+(type\s+)?(?:([\w$]+|\*\s+as\s+[\w$]+)\s*,?\s*)?(?:\{([^}]*)\})?\s*from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function importsOf(file: string): Import[] {
  const text = readFileSync(join(root, file), 'utf8');
  return [...text.matchAll(IMPORT)].map((match) => {
    const [, typeOnly, single, list, path, dynamicPath] = match;
    const target = relative(root, resolve(root, dirname(file), path ?? dynamicPath ?? ''));
    const names = [single, ...(list ?? '').split(',')]
      .map((name) => name?.trim())
      .filter((name): name is string => Boolean(name))
      .map((name) => (typeOnly ? `type ${name.replace(/^type\s+/, '')}` : name));
    return { from: file, to: target.split('\\').join('/').replace(/\.js$/, '.ts'), names };
  });
}

const imports = files.flatMap(importsOf);
const packageEntries = new Set(
  Object.values(
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).exports as Record<
      string,
      { 'statecraft-source'?: string }
    >,
  )
    .map((entry) => entry['statecraft-source']?.replace(/^\.\//, ''))
    .filter(Boolean),
);

const inFolder = (file: string, folder: string) => file.startsWith(`${folder}/`);

function edgesInto(fromFolders: readonly string[], toFolders: readonly string[]): string[] {
  return imports
    .filter(
      (edge) =>
        fromFolders.some((folder) => inFolder(edge.from, folder)) &&
        toFolders.some((folder) => inFolder(edge.to, folder)),
    )
    .map((edge) => `${edge.from} -> ${edge.to}`);
}

describe('the layers around Runnables', () => {
  it('reads the imports it checks (the parser sees this folder)', () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(edgesInto(['src/runnable'], ['src/run-config'])).toContain(
      'src/runnable/create-runnable.ts -> src/run-config/batch.ts',
    );
  });

  it('src/runnable is the top: no runtime folder below it imports it', () => {
    const below = [
      'machines',
      'src/host',
      'src/chain',
      'src/tool-loop',
      'src/tools',
      'src/observe',
      'src/run-config',
      'src/durable',
    ];
    expect(edgesInto(below, ['src/runnable'])).toEqual([]);
  });

  it('the run config sits below the run host and the observers below the run config', () => {
    expect(
      edgesInto(['src/run-config'], ['src/host', 'src/chain', 'src/tool-loop', 'src/runnable']),
    ).toEqual([]);
    expect(
      edgesInto(
        ['src/observe'],
        ['src/run-config', 'src/host', 'src/chain', 'src/tool-loop', 'src/runnable'],
      ),
    ).toEqual([]);
  });

  it('nothing create-runnable.ts builds on imports it back', () => {
    const builder = 'src/runnable/create-runnable.ts';
    const below = new Set<string>();
    const todo = [builder];
    while (todo.length > 0) {
      const file = todo.pop() as string;
      for (const edge of imports) {
        if (edge.from === file && !below.has(edge.to)) {
          below.add(edge.to);
          todo.push(edge.to);
        }
      }
    }
    const back = imports.filter((edge) => edge.to === builder && below.has(edge.from));
    expect(back.map((edge) => edge.from)).toEqual([]);
  });

  it('no module imports a factory file for its types (package entries re-export them)', () => {
    const factories = files.filter((file) => /\/create-[\w-]+\.ts$/.test(file));
    expect(factories).toEqual(
      expect.arrayContaining([
        'src/chain/create-chain.ts',
        'src/tool-loop/create-tool-loop.ts',
        'src/runnable/create-runnable.ts',
      ]),
    );
    const forTypes = imports.filter(
      (edge) =>
        factories.includes(edge.to) &&
        !packageEntries.has(edge.from) &&
        edge.names.some((name) => name.startsWith('type ') || /^[A-Z]/.test(name)),
    );
    expect(forTypes.map((edge) => `${edge.from} -> ${edge.to}: ${edge.names.join(', ')}`)).toEqual(
      [],
    );
  });
});
