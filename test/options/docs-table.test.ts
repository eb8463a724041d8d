import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_MODEL_OPTIONS } from '../../adapters/models/anthropic.js';
import { GEMINI_MODEL_OPTIONS } from '../../adapters/models/gemini/options.js';
import { OPENAI_RESPONSES_OPTIONS } from '../../adapters/models/openai/client-options.js';
import { OPENAI_CHAT_OPTIONS, OPENAI_COMPATIBLE_OPTIONS } from '../../adapters/models/openai.js';
import { SCRIPTED_MODEL_OPTIONS } from '../../adapters/models/scripted.js';
import {
  MCP_CONNECT_OPTIONS,
  MCP_EXECUTOR_OPTIONS,
  MCP_HTTP_OPTIONS,
  MCP_STDIO_OPTIONS,
} from '../../adapters/tools/mcp/options.js';
import { CHAIN_OPTIONS } from '../../src/chain/options.js';
import { APPROVALS_OPTIONS } from '../../src/durable/approvals.js';
import { STORE_OPTIONS } from '../../src/durable/stores/store-options.js';
import { BATCH_OPTIONS, RUN_OPTIONS } from '../../src/host/run-options.js';
import type { AnySpec, Specs } from '../../src/options/describe.js';
import { OTEL_OPTIONS } from '../../src/otel/otel-observer.js';
import { LOCAL_RESTATE_OPTIONS } from '../../src/restate/local-server.js';
import { RESTATE_STORE_OPTIONS } from '../../src/restate/restate-store.js';
import { REGISTER_OPTIONS, SERVICES_OPTIONS, WORKER_OPTIONS } from '../../src/restate/worker.js';
import { CLUSTER_OPTIONS } from '../../src/restate/worker-cluster.js';
import { MEMORY_OPTIONS } from '../../src/runnable/memory.js';
import { RETRY_OPTIONS } from '../../src/runnable/retry-run.js';
import { RUN_CONFIG } from '../../src/runnable/run-config-check.js';
import { TOOL_LOOP_OPTIONS } from '../../src/tool-loop/options.js';
import { VIEWER_OPTIONS } from '../../src/viewer/server.js';

// Every options object described in src/ or adapters/ (`describeOptions(`) has an option table
// (`| option | default | meaning |`) in the guide page where users configure it, listing
// exactly the options the description has, each with the default it describes and a meaning:
// adding an option without its row, changing a default without its docs, or describing a new
// options object without a table fails here.

interface Description {
  readonly keys: readonly string[];
  readonly specs: Specs;
}

/** Where a description's table is: a page, a heading on it, and which table under it. */
interface Documented {
  /** The description's name in its module, as `describeOptions(` is assigned to it. */
  readonly name: string;
  readonly description: Description;
  readonly page: string;
  /** The heading's text (any level): the section runs to the next heading as high. */
  readonly heading: string;
  /** Which option table of the section (0 for its first). */
  readonly table?: number;
  /**
   * The table is another description's, which has these options and more (the page says
   * which): each of these options is checked in it, its other rows are not.
   */
  readonly within?: true;
}

const DOCUMENTED: readonly Documented[] = [
  {
    name: 'CHAIN_OPTIONS',
    description: CHAIN_OPTIONS,
    page: 'docs/options.md',
    heading: 'The chain',
  },
  {
    name: 'TOOL_LOOP_OPTIONS',
    description: TOOL_LOOP_OPTIONS,
    page: 'docs/options.md',
    heading: 'The tool loop',
  },
  {
    name: 'RUN_OPTIONS',
    description: RUN_OPTIONS,
    page: 'docs/options.md',
    heading: "A run's options",
  },
  {
    name: 'BATCH_OPTIONS',
    description: BATCH_OPTIONS,
    page: 'docs/options.md',
    heading: "A run's options",
    table: 1,
  },
  {
    name: 'RUN_CONFIG',
    description: RUN_CONFIG,
    page: 'docs/options.md',
    heading: "A run's options",
    table: 2,
  },
  {
    name: 'MCP_CONNECT_OPTIONS',
    description: MCP_CONNECT_OPTIONS,
    page: 'docs/options.md',
    heading: 'MCP tools',
  },
  {
    name: 'MCP_EXECUTOR_OPTIONS',
    description: MCP_EXECUTOR_OPTIONS,
    page: 'docs/options.md',
    heading: 'MCP tools',
    within: true,
  },
  {
    name: 'MCP_STDIO_OPTIONS',
    description: MCP_STDIO_OPTIONS,
    page: 'docs/options.md',
    heading: 'MCP tools',
    table: 1,
  },
  {
    name: 'MCP_HTTP_OPTIONS',
    description: MCP_HTTP_OPTIONS,
    page: 'docs/options.md',
    heading: 'MCP tools',
    table: 2,
  },
  {
    name: 'OPENAI_CHAT_OPTIONS',
    description: OPENAI_CHAT_OPTIONS,
    page: 'docs/language-model.md',
    heading: 'OpenAI',
  },
  {
    name: 'OPENAI_RESPONSES_OPTIONS',
    description: OPENAI_RESPONSES_OPTIONS,
    page: 'docs/language-model.md',
    heading: 'OpenAI',
    within: true,
  },
  {
    name: 'OPENAI_COMPATIBLE_OPTIONS',
    description: OPENAI_COMPATIBLE_OPTIONS,
    page: 'docs/language-model.md',
    heading: 'OpenAI',
    table: 1,
  },
  {
    name: 'ANTHROPIC_MODEL_OPTIONS',
    description: ANTHROPIC_MODEL_OPTIONS,
    page: 'docs/language-model.md',
    heading: 'Anthropic',
  },
  {
    name: 'GEMINI_MODEL_OPTIONS',
    description: GEMINI_MODEL_OPTIONS,
    page: 'docs/language-model.md',
    heading: 'Gemini',
  },
  {
    name: 'SCRIPTED_MODEL_OPTIONS',
    description: SCRIPTED_MODEL_OPTIONS,
    page: 'docs/testing.md',
    heading: 'ScriptedModel',
  },
  {
    name: 'STORE_OPTIONS',
    description: STORE_OPTIONS,
    page: 'docs/durable-runs.md',
    heading: 'The API and the stores',
  },
  {
    name: 'APPROVALS_OPTIONS',
    description: APPROVALS_OPTIONS,
    page: 'docs/approvals-and-budgets.md',
    heading: 'Reasons, parking, streams',
  },
  {
    name: 'VIEWER_OPTIONS',
    description: VIEWER_OPTIONS,
    page: 'docs/viewer-and-cli.md',
    heading: 'The live run viewer',
  },
  {
    name: 'OTEL_OPTIONS',
    description: OTEL_OPTIONS,
    page: 'docs/viewer-and-cli.md',
    heading: 'OpenTelemetry',
  },
  {
    name: 'CLUSTER_OPTIONS',
    description: CLUSTER_OPTIONS,
    page: 'docs/restate.md',
    heading: 'serveWorker and serveCluster',
  },
  {
    name: 'WORKER_OPTIONS',
    description: WORKER_OPTIONS,
    page: 'docs/restate.md',
    heading: 'serveWorker and serveCluster',
    within: true,
  },
  {
    name: 'SERVICES_OPTIONS',
    description: SERVICES_OPTIONS,
    page: 'docs/restate.md',
    heading: 'statecraftServices',
  },
  {
    name: 'REGISTER_OPTIONS',
    description: REGISTER_OPTIONS,
    page: 'docs/restate.md',
    heading: 'registerDeployment',
  },
  {
    name: 'RESTATE_STORE_OPTIONS',
    description: RESTATE_STORE_OPTIONS,
    page: 'docs/restate.md',
    heading: 'restateStore',
  },
  {
    name: 'LOCAL_RESTATE_OPTIONS',
    description: LOCAL_RESTATE_OPTIONS,
    page: 'docs/restate.md',
    heading: 'startLocalRestate',
  },
  {
    name: 'MEMORY_OPTIONS',
    description: MEMORY_OPTIONS,
    page: 'docs/composition.md',
    heading: 'Memory and retries',
  },
  {
    name: 'RETRY_OPTIONS',
    description: RETRY_OPTIONS,
    page: 'docs/composition.md',
    heading: 'Memory and retries',
    table: 1,
  },
];

/** Descriptions with no table of their own, and why. */
const UNDOCUMENTED: Readonly<Record<string, string>> = {
  ARRAY_SCRIPT_OPTIONS:
    "ScriptedModel's options for an array script, which refuses expectedCalls: the scripted model's table says so",
};

interface Row {
  readonly keys: readonly string[];
  readonly defaults: string;
  readonly meaning: string;
}

const pages = new Map<string, string>();
function pageText(page: string): string {
  let text = pages.get(page);
  if (text === undefined) {
    text = readFileSync(new URL(`../../${page}`, import.meta.url), 'utf8');
    pages.set(page, text);
  }
  return text;
}

/** The lines of the section under `heading` (any level), to the next heading as high. */
function sectionOf(page: string, heading: string): string[] {
  const lines = pageText(page).split('\n');
  let fenced = false;
  let level = 0;
  const section: string[] = [];
  for (const line of lines) {
    if (line.startsWith('```')) fenced = !fenced;
    const title = fenced ? null : /^(#+) (.*)$/.exec(line);
    if (level > 0 && title && (title[1]?.length ?? 0) <= level) break;
    if (level > 0) section.push(line);
    else if (title && title[2] === heading) level = title[1]?.length ?? 0;
  }
  if (level === 0) throw new Error(`${page} has no heading "${heading}"`);
  return section;
}

/** The option tables (`| option | default | meaning |`) of the lines given. */
function tablesIn(lines: readonly string[]): Row[][] {
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
    if (cells[0] === 'option' && cells[1] === 'default' && cells[2] === 'meaning') {
      table = [];
      tables.push(table);
      continue;
    }
    if (!table || /^-+$/.test(cells[0] ?? '')) continue;
    // A row of options is their names in backticks; other rows (a tool's `returnDirect`)
    // explain something beside the options.
    const names = /^`\w+`(, `\w+`)*$/.test(cells[0] ?? '') ? cells[0]?.match(/\w+/g) : null;
    if (names) table.push({ keys: names, defaults: cells[1] ?? '', meaning: cells[2] ?? '' });
  }
  return tables;
}

function tableOf({ page, heading, table = 0 }: Documented): Row[] {
  const tables = tablesIn(sectionOf(page, heading));
  const found = tables[table];
  if (!found) {
    throw new Error(
      `${page} "${heading}" has ${tables.length} option table(s), not a table ${table}`,
    );
  }
  return found;
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
      if (found.has(key)) throw new Error(`an option table lists \`${key}\` twice`);
      found.set(key, (parts.length === keys.length ? parts[index] : cell) ?? cell);
    });
  }
  return found;
}

function expectDocumented(entry: Documented) {
  const { description } = entry;
  const rows = tableOf(entry);
  const table = documented(rows);
  const listed = [...table.keys()];
  // Named both ways, so a failure says which row is missing or has no option behind it.
  expect({
    missing: description.keys.filter((key) => !table.has(key)),
    unknown: entry.within ? [] : listed.filter((key) => !description.keys.includes(key)),
  }).toEqual({ missing: [], unknown: [] });
  for (const key of description.keys) {
    const spec = description.specs[key] as AnySpec;
    expect(table.get(key), `the default of \`${key}\``).toBe(documentedDefault(spec));
  }
  for (const row of rows) expect(row.meaning, `the meaning of ${row.keys.join(', ')}`).not.toBe('');
}

/** Each `describeOptions(` call of src/ and adapters/: the name it is assigned to, and where. */
function describedInSource(): Map<string, string> {
  const root = new URL('../..', import.meta.url).pathname;
  const found = new Map<string, string>();
  const visit = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.ts')) {
        const file = relative(root, path);
        readFileSync(path, 'utf8')
          .split('\n')
          .forEach((line, index) => {
            // A call, not its definition or a comment's example.
            if (!/\bdescribeOptions(<[^>]*>)?\(/.test(line) || /^\s*(\*|\/\/)/.test(line)) return;
            if (/\bfunction describeOptions\b/.test(line)) return;
            const name = /^(?:export )?const (\w+) = describeOptions\(/.exec(line)?.[1];
            const at = `${file}:${index + 1}`;
            if (!name) throw new Error(`${at}: a description not assigned to a const of its own`);
            if (found.has(name)) throw new Error(`${at}: a second description named ${name}`);
            found.set(name, at);
          });
      }
    }
  };
  visit(join(root, 'src'));
  visit(join(root, 'adapters'));
  return found;
}

describe('the option tables of the guide pages', () => {
  it.each(DOCUMENTED.map((entry) => [entry.name, entry.page, entry.heading, entry] as const))(
    '%s: %s, "%s", lists every option with its default',
    (_, _page, _heading, entry) => {
      expectDocumented(entry);
    },
  );

  it('leave no options object described in src/ or adapters/ without a table', () => {
    const described = describedInSource();
    const covered = [...DOCUMENTED.map((entry) => entry.name), ...Object.keys(UNDOCUMENTED)];
    expect({
      withoutTable: [...described]
        .filter(([name]) => !covered.includes(name))
        .map(([n, at]) => `${n} (${at})`),
      noLongerDescribed: covered.filter((name) => !described.has(name)),
    }).toEqual({ withoutTable: [], noLongerDescribed: [] });
  });

  it('read a default cell per option of a row, or one for all', () => {
    expect(documented([{ keys: ['a', 'b'], defaults: 'true, —', meaning: 'x' }])).toEqual(
      new Map([
        ['a', 'true'],
        ['b', '—'],
      ]),
    );
    expect(documented([{ keys: ['a', 'b'], defaults: 'none', meaning: 'x' }]).get('b')).toBe(
      'none',
    );
  });

  it('find a section under any heading level, to the next heading as high', () => {
    pages.set(
      'fake.md',
      '# T\n## A\n| option | default | meaning |\n|---|---|---|\n| `x` | 1 | y |\n### B\n```sh\n# not a heading\n```\n| option | default | meaning |\n|---|---|---|\n| `z` | — | w |\n## C\n',
    );
    expect(tablesIn(sectionOf('fake.md', 'A')).map((t) => t.map((r) => r.keys))).toEqual([
      [['x']],
      [['z']],
    ]);
    expect(tablesIn(sectionOf('fake.md', 'B')).map((t) => t.map((r) => r.keys))).toEqual([[['z']]]);
    expect(() => sectionOf('fake.md', 'D')).toThrow('fake.md has no heading "D"');
  });
});
