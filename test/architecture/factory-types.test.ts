import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// No module imports a factory file (create-*.ts) for its types: types a factory shares with
// its helpers live in their own module, so a helper never reaches up into its factory. Read
// with the names each import takes, which the compiler-listed graph of import-rules.test.ts
// does not carry; the layers and circles themselves are checked there.

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

describe('factories and their types', () => {
  it('reads the imports it checks (the parser sees this folder)', () => {
    expect(imports.length).toBeGreaterThan(500);
    expect(imports).toContainEqual(
      expect.objectContaining({
        from: 'src/runnable/create-runnable.ts',
        to: 'src/run-config/batch.ts',
      }),
    );
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
