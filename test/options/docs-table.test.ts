import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CHAIN_OPTIONS } from '../../src/chain/options.js';
import { RUN_OPTIONS } from '../../src/host/run-options.js';
import type { AnySpec, OptionsDescription, Specs } from '../../src/options/describe.js';
import { RUN_CONFIG } from '../../src/runnable/run-config-check.js';
import { TOOL_LOOP_OPTIONS } from '../../src/tool-loop/options.js';

// docs/options.md's option tables list exactly the options each description has, each with
// the default it describes: adding an option without its row, or changing a default without
// its docs, fails here.

const PAGE = readFileSync(new URL('../../docs/options.md', import.meta.url), 'utf8');

interface Row {
  readonly keys: readonly string[];
  readonly defaults: string;
}

/** The option tables (`| option | default | meaning |`) of the page's section `heading`. */
function tablesOf(heading: string): Row[][] {
  const start = PAGE.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/options.md has no section "## ${heading}"`);
  const end = PAGE.indexOf('\n## ', start + 1);
  const lines = PAGE.slice(start, end < 0 ? undefined : end).split('\n');
  const tables: Row[][] = [];
  let table: Row[] | undefined;
  for (const line of lines) {
    if (!line.startsWith('|')) {
      table = undefined;
      continue;
    }
    // Cells split on pipes that are not escaped (`\|` in a cell's text).
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (cells[0] === 'option' && cells[1] === 'default') {
      table = [];
      tables.push(table);
      continue;
    }
    if (!table || /^-+$/.test(cells[0] ?? '')) continue;
    // A row of options is their names in backticks; other rows (a tool's `returnDirect`)
    // explain something beside the options.
    const names = /^`\w+`(, `\w+`)*$/.test(cells[0] ?? '') ? cells[0]?.match(/\w+/g) : null;
    if (names) table.push({ keys: names, defaults: cells[1] ?? '' });
  }
  return tables;
}

/** What a default cell says of an option: its default text, its default value, or `—`. */
function documentedDefault(spec: AnySpec): string {
  // Backticks are how the page sets code: compared without them.
  if (spec.defaultText !== undefined) return spec.defaultText.replaceAll('`', '');
  const value: unknown = spec.default;
  if (value === undefined) return '—';
  if (typeof value === 'number') return value.toLocaleString('en-US');
  if (typeof value === 'string') return `'${value}'`;
  return JSON.stringify(value);
}

/** Each key a table lists, with its default cell (one cell for all, or one part each). */
function documented(rows: readonly Row[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const { keys, defaults } of rows) {
    const cell = defaults.replaceAll('`', '');
    const parts = keys.length > 1 ? cell.split(', ') : [cell];
    keys.forEach((key, index) => {
      if (found.has(key)) throw new Error(`docs/options.md lists \`${key}\` twice`);
      found.set(key, (parts.length === keys.length ? parts[index] : cell) ?? cell);
    });
  }
  return found;
}

function expectDocumented<S extends Specs>(
  rows: readonly Row[] | undefined,
  options: OptionsDescription<S>,
) {
  expect(rows, 'the option table').toBeDefined();
  const table = documented(rows ?? []);
  const listed = [...table.keys()];
  // Named both ways, so a failure says which row is missing or has no option behind it.
  expect({
    missing: options.keys.filter((key) => !table.has(key)),
    unknown: listed.filter((key) => !(options.keys as readonly string[]).includes(key)),
  }).toEqual({ missing: [], unknown: [] });
  for (const key of options.keys) {
    const spec = options.specs[key] as AnySpec;
    expect(table.get(key), `the default of \`${key}\``).toBe(documentedDefault(spec));
  }
}

describe("docs/options.md's option tables", () => {
  it("list createChain's options, each with its default", () => {
    expectDocumented(tablesOf('The chain')[0], CHAIN_OPTIONS);
  });

  it("list createToolLoop's options, each with its default", () => {
    expectDocumented(tablesOf('The tool loop')[0], TOOL_LOOP_OPTIONS);
  });

  it("list a run's options and a Runnable's config, each with its default", () => {
    const [run, config] = tablesOf("A run's options");
    expectDocumented(run, RUN_OPTIONS);
    expectDocumented(config, RUN_CONFIG);
  });

  it('read a default cell per option of a row, or one for all', () => {
    expect(documented([{ keys: ['a', 'b'], defaults: 'true, —' }])).toEqual(
      new Map([
        ['a', 'true'],
        ['b', '—'],
      ]),
    );
    expect(documented([{ keys: ['a', 'b'], defaults: 'none' }]).get('b')).toBe('none');
  });
});
