// Every folder with code explains itself: a README.md saying what it owns and what it may
// import, and a row in docs/architecture.md's folder tables. A new folder cannot appear
// unexplained, and a row cannot outlive its folder.
import { existsSync, readFileSync } from 'node:fs';
import { posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listSourceFiles } from './import-graph.js';

const root = '.';
const codeFolders = [...new Set(listSourceFiles(root).map((file) => posix.dirname(file)))].sort();

/** The folder a row of the map names: its first cell's `path/`. */
function mapRows(): string[] {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  return [...doc.matchAll(/^\| \[?`([^`]+)\/`/gm)].map((match) => match[1] ?? '');
}

/** The folders the map must name: top folders of src/ and adapters/, src/ itself, machines/. */
function mappedFolders(): string[] {
  return [
    ...new Set(
      codeFolders.map((folder) => {
        const parts = folder.split('/');
        return parts[0] === 'machines' ? 'machines' : parts.slice(0, 2).join('/');
      }),
    ),
  ].sort();
}

describe('folders explain themselves', () => {
  it('has a README.md in every folder of src/, machines/ and adapters/ that holds code', () => {
    expect(codeFolders.length).toBeGreaterThan(20);
    const missing = codeFolders
      .filter((folder) => !existsSync(`${folder}/README.md`))
      .map(
        (folder) =>
          `${folder}/ holds .ts files but no README.md saying what it owns and may import`,
      );
    expect(missing).toEqual([]);
  });

  it('names every such folder in docs/architecture.md, and no folder that is gone', () => {
    const rows = mapRows();
    const unnamed = mappedFolders()
      .filter((folder) => !rows.includes(folder))
      .map((folder) => `${folder}/ has no row in docs/architecture.md`);
    const stale = rows
      .filter((row) => !mappedFolders().includes(row))
      .map((row) => `docs/architecture.md has a row for ${row}/, which holds no code`);
    expect([...unnamed, ...stale]).toEqual([]);
  });
});
