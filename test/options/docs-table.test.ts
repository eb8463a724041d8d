import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FROM_AI_SDK_OPTIONS } from '../../adapters/models/ai-sdk.js';
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
import { UI_MESSAGE_STREAM_OPTIONS } from '../../src/ui-stream/to-ui-message-stream.js';
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

const OPTIONS = 'docs/options.md';
const MODELS = 'docs/language-model.md';
const TESTING = 'docs/testing.md';
const DURABLE = 'docs/durable-runs.md';
const APPROVALS = 'docs/approvals-and-budgets.md';
const SEEING = 'docs/viewer-and-cli.md';
const RESTATE = 'docs/restate.md';
const COMPOSITION = 'docs/composition.md';
const AI_SDK = 'docs/ai-sdk.md';

function entry(
  description: Description,
  name: string,
  page: string,
  heading: string,
  more: Pick<Documented, 'table' | 'within'> = {},
): Documented {
  return { name, description, page, heading, ...more };
}

const DOCUMENTED: readonly Documented[] = [
  entry(CHAIN_OPTIONS, 'CHAIN_OPTIONS', OPTIONS, 'The chain'),
  entry(TOOL_LOOP_OPTIONS, 'TOOL_LOOP_OPTIONS', OPTIONS, 'The tool loop'),
  entry(RUN_OPTIONS, 'RUN_OPTIONS', OPTIONS, "A run's options"),
  entry(BATCH_OPTIONS, 'BATCH_OPTIONS', OPTIONS, "A run's options", { table: 1 }),
  entry(RUN_CONFIG, 'RUN_CONFIG', OPTIONS, "A run's options", { table: 2 }),
  entry(MCP_CONNECT_OPTIONS, 'MCP_CONNECT_OPTIONS', OPTIONS, 'MCP tools'),
  entry(MCP_EXECUTOR_OPTIONS, 'MCP_EXECUTOR_OPTIONS', OPTIONS, 'MCP tools', { within: true }),
  entry(MCP_STDIO_OPTIONS, 'MCP_STDIO_OPTIONS', OPTIONS, 'MCP tools', { table: 1 }),
  entry(MCP_HTTP_OPTIONS, 'MCP_HTTP_OPTIONS', OPTIONS, 'MCP tools', { table: 2 }),
  entry(OPENAI_CHAT_OPTIONS, 'OPENAI_CHAT_OPTIONS', MODELS, 'OpenAI'),
  entry(OPENAI_RESPONSES_OPTIONS, 'OPENAI_RESPONSES_OPTIONS', MODELS, 'OpenAI', { within: true }),
  entry(OPENAI_COMPATIBLE_OPTIONS, 'OPENAI_COMPATIBLE_OPTIONS', MODELS, 'OpenAI', { table: 1 }),
  entry(ANTHROPIC_MODEL_OPTIONS, 'ANTHROPIC_MODEL_OPTIONS', MODELS, 'Anthropic'),
  entry(GEMINI_MODEL_OPTIONS, 'GEMINI_MODEL_OPTIONS', MODELS, 'Gemini'),
  entry(FROM_AI_SDK_OPTIONS, 'FROM_AI_SDK_OPTIONS', AI_SDK, 'Any AI SDK provider as a model'),
  entry(SCRIPTED_MODEL_OPTIONS, 'SCRIPTED_MODEL_OPTIONS', TESTING, 'ScriptedModel'),
  entry(STORE_OPTIONS, 'STORE_OPTIONS', DURABLE, 'The API and the stores'),
  entry(APPROVALS_OPTIONS, 'APPROVALS_OPTIONS', APPROVALS, 'Reasons, parking, streams'),
  entry(VIEWER_OPTIONS, 'VIEWER_OPTIONS', SEEING, 'The live run viewer'),
  entry(OTEL_OPTIONS, 'OTEL_OPTIONS', SEEING, 'OpenTelemetry'),
  entry(CLUSTER_OPTIONS, 'CLUSTER_OPTIONS', RESTATE, 'serveWorker and serveCluster'),
  entry(WORKER_OPTIONS, 'WORKER_OPTIONS', RESTATE, 'serveWorker and serveCluster', {
    within: true,
  }),
  entry(SERVICES_OPTIONS, 'SERVICES_OPTIONS', RESTATE, 'statecraftServices'),
  entry(REGISTER_OPTIONS, 'REGISTER_OPTIONS', RESTATE, 'registerDeployment'),
  entry(RESTATE_STORE_OPTIONS, 'RESTATE_STORE_OPTIONS', RESTATE, 'restateStore'),
  entry(LOCAL_RESTATE_OPTIONS, 'LOCAL_RESTATE_OPTIONS', RESTATE, 'startLocalRestate'),
  entry(MEMORY_OPTIONS, 'MEMORY_OPTIONS', COMPOSITION, 'Memory and retries'),
  entry(RETRY_OPTIONS, 'RETRY_OPTIONS', COMPOSITION, 'Memory and retries', { table: 1 }),
  entry(
    UI_MESSAGE_STREAM_OPTIONS,
    'UI_MESSAGE_STREAM_OPTIONS',
    AI_SDK,
    'Approvals from the browser',
  ),
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

interface Found {
  /** The module's path from the repository's root. */
  readonly file: string;
  readonly line: number;
  readonly exported: boolean;
}

/** Each `describeOptions(` call of src/ and adapters/: the name it is assigned to, and where. */
function describedInSource(): Map<string, Found> {
  const root = new URL('../..', import.meta.url).pathname;
  const found = new Map<string, Found>();
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
            const [, exported, name] =
              /^(export )?const (\w+) = describeOptions\(/.exec(line) ?? [];
            const at = `${file}:${index + 1}`;
            if (!name) throw new Error(`${at}: a description not assigned to a const of its own`);
            if (found.has(name)) throw new Error(`${at}: a second description named ${name}`);
            found.set(name, { file, line: index + 1, exported: exported !== undefined });
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

  it('leave no options object described in src/ or adapters/ without a table', async () => {
    const described = describedInSource();
    const covered = [...DOCUMENTED.map((entry) => entry.name), ...Object.keys(UNDOCUMENTED)];
    expect({
      withoutTable: [...described]
        .filter(([name]) => !covered.includes(name))
        .map(([name, { file, line }]) => `${name} (${file}:${line})`),
      noLongerDescribed: covered.filter((name) => !described.has(name)),
    }).toEqual({ withoutTable: [], noLongerDescribed: [] });
    // Each table is checked against the description its module exports under that name.
    for (const { name, description } of DOCUMENTED) {
      const found = described.get(name);
      expect(found?.exported, `${name} is exported, so its table can be checked`).toBe(true);
      const module = await import(`../../${found?.file.replace(/\.ts$/, '.js')}`);
      expect(module[name], `${name} of ${found?.file}`).toBe(description);
    }
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
