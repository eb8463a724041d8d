import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';

// The root export is what an agent author holds in their head: it stays at or under this many
// runtime names (values, not types); everything else lives in a named subpath. docs/api.md
// explains every name of every entry point, so a name added without a line there fails here.
const ROOT_LIMIT = 60;

const packageJson = JSON.parse(await readFile('package.json', 'utf8')) as {
  exports: Record<string, Record<string, string>>;
};
const apiDoc = await readFile('docs/api.md', 'utf8');
const specifiers = Object.keys(packageJson.exports).map((key) =>
  key === '.' ? 'statecraft' : `statecraft/${key.slice(2)}`,
);

// Provider and integration entry points load their SDKs, which are dev dependencies here.
const load = (specifier: string): Promise<Record<string, unknown>> => import(specifier);

describe('the public API', () => {
  it(`keeps the root export at ${ROOT_LIMIT} runtime names or fewer`, async () => {
    const names = Object.keys(await load('statecraft'));
    console.log(`statecraft exports ${names.length} runtime names (limit ${ROOT_LIMIT})`);
    expect(names.length).toBeGreaterThan(0);
    expect(names.length).toBeLessThanOrEqual(ROOT_LIMIT);
  });

  it('documents every entry point in docs/api.md, with its own section', () => {
    const missing = specifiers.filter((specifier) => !apiDoc.includes(`## \`${specifier}\``));
    expect(missing).toEqual([]);
  });

  it.each(specifiers)('explains every runtime name of %s in docs/api.md', async (specifier) => {
    const names = Object.keys(await load(specifier));
    const section = apiDoc.split(`## \`${specifier}\``)[1]?.split(/^## /m)[0] ?? '';
    const undocumented = names.filter((name) => !section.includes(`\`${name}\``));
    expect(undocumented).toEqual([]);
  });

  it('gives each subpath entry file a one-line purpose and exports its names explicitly', async () => {
    for (const entry of Object.values(packageJson.exports)) {
      const source = await readFile(entry['statecraft-source'] as string, 'utf8');
      expect(source, entry['statecraft-source']).toMatch(/^\/\/ \S.*\n/);
      expect(source, entry['statecraft-source']).not.toMatch(/export \*/);
    }
  });
});
