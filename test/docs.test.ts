// Every ```ts block in README.md and docs/*.md is a complete module that type-checks, and every
// ```ts block immediately followed by a ```text block prints exactly that text when run. The
// blocks are checked the way a reader would use them: each is written to its own file in a
// scratch folder inside the repository (so `statecraft`, its subpaths and `zod` resolve as
// they do for a user of the package, through its `exports`), type-checked by one `tsc` run
// over all of them, and run with tsx under the `statecraft-source` condition, as
// `npm run quickstart` is.
//
// A block is marked by the HTML comment on the line right above its fence:
// - `<!-- file: examples/x.ts -->`: the block is that file, character for character (the
//   file is what is type-checked and run, so relative imports and re-spawning work).
// - `<!-- replay: <fixture> -->`: the block talks to OpenAI; it runs against a server on
//   127.0.0.1 replaying `test/fixtures/docs/<fixture>.json`, the recorded wire responses,
//   with OPENAI_BASE_URL pointing at it. Nothing leaves the machine.
// - `<!-- type-only: <why> -->`: the block cannot run here (it needs a provider's key, a
//   server of yours, or is a fragment of a larger program's setup); it is type-checked only.
// Every ```ts block without a ```text block after it must say why it is type-only.
// A ```mermaid or ```text block marked `<!-- command: statecraft <args> -->` is the output
// of that CLI command, run from source.
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ReplayResponse, startReplayServer } from './support/replay-server.js';

const exec = promisify(execFile);
const root = resolve('.');

interface Block {
  /** `README.md` or `docs/x.md`. */
  readonly doc: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly body: string;
  /** The marker comment right above the fence, if any. */
  readonly marker?: { readonly kind: string; readonly value: string };
  /** The ```text block right after a ```ts block: what running it prints. */
  readonly output?: string;
}

const where = (block: Block) => `${block.doc}:${block.line}`;

/** Every fenced block of a Markdown file, with its marker and the output block after it. */
function blocksOf(doc: string, text: string): Block[] {
  const lines = text.split('\n');
  const found: {
    line: number;
    lang: string;
    body: string;
    end: number;
    marker?: Block['marker'];
  }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\w*)\s*$/.exec(lines[i] ?? '');
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    if (end >= lines.length) throw new Error(`${doc}:${i + 1}: a code fence that never closes`);
    const above = /^<!-- ([\w-]+): (.+?) -->$/.exec(lines[i - 1] ?? '');
    found.push({
      line: i + 1,
      lang: open[1] ?? '',
      body: `${lines.slice(i + 1, end).join('\n')}\n`,
      end,
      ...(above && { marker: { kind: above[1] ?? '', value: above[2] ?? '' } }),
    });
    i = end;
  }
  return found.map((block, index) => {
    const next = found[index + 1];
    // "Immediately followed": only blank lines between the ```ts fence's end and ```text.
    const adjacent =
      next?.lang === 'text' &&
      lines.slice(block.end + 1, next.line - 1).every((line) => line.trim() === '');
    const output = block.lang === 'ts' && adjacent ? next?.body : undefined;
    return {
      doc,
      line: block.line,
      lang: block.lang,
      body: block.body,
      ...(block.marker && { marker: block.marker }),
      ...(output !== undefined && { output }),
    };
  });
}

const docs = [
  'README.md',
  ...readdirSync('docs')
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const blocks = docs.flatMap((doc) => blocksOf(doc, readFileSync(doc, 'utf8')));
const tsBlocks = blocks.filter((b) => b.lang === 'ts' || b.lang === 'typescript');
const runBlocks = tsBlocks.filter((b) => b.output !== undefined);
const typeOnly = tsBlocks.filter((b) => b.output === undefined);

let scratch = '';
/** The file each block is type-checked and run as. */
const fileOf = new Map<Block, string>();

beforeAll(async () => {
  scratch = await mkdtemp(join(root, '.docs-check-'));
  for (const block of tsBlocks) {
    if (block.marker?.kind === 'file') {
      fileOf.set(block, join(root, block.marker.value));
      continue;
    }
    const name = `${block.doc.replace(/[^\w]/g, '_')}_L${block.line}.ts`;
    await writeFile(join(scratch, name), block.body);
    fileOf.set(block, join(scratch, name));
  }
  await writeFile(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      extends: '../tsconfig.json',
      compilerOptions: { noEmit: true, noUnusedLocals: false },
      include: ['*.ts'],
      files: tsBlocks.filter((b) => b.marker?.kind === 'file').map((b) => fileOf.get(b)),
    }),
  );
});

afterAll(async () => {
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

describe('code blocks in README.md and docs/', () => {
  it('counts its blocks', () => {
    console.log(
      `docs check: ${tsBlocks.length} ts blocks, ${runBlocks.length} run and compared with their output, ` +
        `${typeOnly.length} type-only:\n${typeOnly.map((b) => `  ${where(b)}: ${b.marker?.value ?? '(no reason given)'}`).join('\n')}`,
    );
    expect(tsBlocks.length).toBeGreaterThan(0);
  });

  it('marks each type-only block with why it does not run, and each marker is a known one', () => {
    const problems: string[] = [];
    for (const block of tsBlocks) {
      const kind = block.marker?.kind;
      if (kind !== undefined && !['file', 'replay', 'type-only'].includes(kind))
        problems.push(`${where(block)}: unknown marker "${kind}"`);
      if (block.output === undefined && kind !== 'type-only')
        problems.push(
          `${where(block)}: not followed by a \`\`\`text block of its output, and no <!-- type-only: why --> above it`,
        );
      if (block.output !== undefined && kind === 'type-only')
        problems.push(`${where(block)}: marked type-only but followed by its output`);
    }
    expect(problems).toEqual([]);
  });

  it('holds complete modules: each imports what it uses, nothing from outside the package', () => {
    const problems: string[] = [];
    for (const block of tsBlocks) {
      if (block.marker?.kind === 'file') continue;
      if (!/^import /m.test(block.body))
        problems.push(`${where(block)}: imports nothing (a fragment?)`);
      for (const [, from] of block.body.matchAll(/from '([^']+)'/g)) {
        const allowed =
          from === 'statecraft' ||
          from?.startsWith('statecraft/') ||
          from === 'zod' ||
          from === 'xstate' ||
          from?.startsWith('node:');
        if (!allowed)
          problems.push(
            `${where(block)}: imports '${from}'; blocks import only statecraft, its subpaths, zod, xstate (for app machines) and node:`,
          );
      }
    }
    expect(problems).toEqual([]);
  });

  it('shows each example file as it is', async () => {
    const problems: string[] = [];
    for (const block of tsBlocks.filter((b) => b.marker?.kind === 'file')) {
      const source = await readFile(block.marker?.value ?? '', 'utf8');
      if (source !== block.body)
        problems.push(`${where(block)}: differs from ${block.marker?.value}`);
    }
    expect(problems).toEqual([]);
  });

  it('cites no document a reader does not have, and no internal requirement IDs', () => {
    const problems: string[] = [];
    for (const doc of docs) {
      const text = readFileSync(doc, 'utf8');
      text.split('\n').forEach((line, index) => {
        const found = /SPEC|DESIGN\.md|\bseed 00\d|\b[ACDHPQRTX]\d{1,2}\b(?!-)/.exec(line);
        if (found)
          problems.push(`${doc}:${index + 1}: "${found[0]}" in ${line.trim().slice(0, 80)}`);
      });
    }
    expect(problems).toEqual([]);
  });

  it('links only to files and headings that exist', () => {
    const slug = (heading: string) =>
      heading
        .toLowerCase()
        .replace(/[^\w\s-]/g, '')
        .trim()
        .replace(/\s/g, '-');
    const headings = (file: string) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) => slug(line.replace(/^#+ /, '')));
    const problems: string[] = [];
    for (const doc of docs) {
      readFileSync(doc, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          for (const [, target = ''] of line.matchAll(/\]\(([^)\s]+)\)/g)) {
            if (/^[a-z]+:/.test(target)) continue; // https:, mailto:
            const [path = '', hash] = target.split('#');
            const file = path === '' ? doc : join(dirname(doc), path);
            const at = `${doc}:${index + 1}: ${target}`;
            if (!existsSync(file)) problems.push(`${at}: no such file`);
            else if (hash && file.endsWith('.md') && !headings(file).includes(hash))
              problems.push(`${at}: no such heading in ${file}`);
          }
        });
    }
    expect(problems).toEqual([]);
  });

  it('keeps the README a front door: at most about 300 lines', () => {
    const lines = readFileSync('README.md', 'utf8').split('\n').length;
    console.log(`README.md: ${lines} lines`);
    expect(lines).toBeLessThanOrEqual(320);
    // The quickstart is read before anything else: it stays short.
    const quickstart = tsBlocks.find((b) => b.marker?.value === 'examples/quickstart.ts');
    expect(quickstart?.doc).toBe('README.md');
    expect(quickstart?.body.trimEnd().split('\n').length).toBeLessThanOrEqual(20);
  });

  it('type-checks every ts block as a module of a user of the package', async () => {
    const result = await exec(
      join(root, 'node_modules/.bin/tsc'),
      ['-p', join(scratch, 'tsconfig.json')],
      {
        cwd: root,
      },
    ).then(
      () => '',
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    );
    // Name the Markdown line of each error: "docs/x.md:40 (block line 3): error TS…".
    const located = result
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const at = /([^/\\\s]+\.ts)\((\d+),(\d+)\)/.exec(line);
        const block = at && tsBlocks.find((b) => fileOf.get(b)?.endsWith(at[1] ?? ''));
        return block && at
          ? `${block.doc}:${block.line + Number(at[2])} (${line.slice(line.indexOf('error'))})`
          : line;
      });
    expect(located).toEqual([]);
  }, 120_000);

  describe.each(runBlocks.map((block) => [where(block), block] as const))('%s', (_name, block) => {
    it('prints exactly the text block below it', async () => {
      const env: NodeJS.ProcessEnv = { ...process.env };
      let server: Awaited<ReturnType<typeof startReplayServer>> | undefined;
      if (block.marker?.kind === 'replay') {
        const responses = JSON.parse(
          await readFile(join('test/fixtures/docs', `${block.marker.value}.json`), 'utf8'),
        ) as ReplayResponse[];
        server = await startReplayServer(responses);
        Object.assign(env, { OPENAI_BASE_URL: `${server.url}/v1`, OPENAI_API_KEY: 'sk-replay' });
      }
      try {
        const { stdout } = await exec(
          process.execPath,
          ['--conditions=statecraft-source', '--import', 'tsx', fileOf.get(block) ?? ''],
          { cwd: root, env, timeout: 100_000 },
        ).catch((error: { stdout?: string; stderr?: string; message: string }) => {
          throw new Error(
            `${where(block)} failed to run: ${error.stderr || error.message}\nstdout:\n${error.stdout ?? ''}`,
          );
        });
        expect(stdout, `${where(block)}: what the block prints`).toBe(block.output);
        if (server)
          expect(server.remaining(), `${where(block)}: replayed responses left unused`).toBe(0);
      } finally {
        await server?.close();
      }
    }, 120_000);
  });

  describe.each(
    blocks
      .filter((b) => b.marker?.kind === 'command')
      .map((block) => [where(block), block] as const),
  )('%s', (_name, block) => {
    it('is what its command prints', async () => {
      const args = (block.marker?.value ?? '').split(' ');
      expect(args[0], `${where(block)}: a command marker names a statecraft command`).toBe(
        'statecraft',
      );
      const { stdout } = await exec(
        process.execPath,
        ['--conditions=statecraft-source', '--import', 'tsx', 'src/cli/main.ts', ...args.slice(1)],
        { cwd: root, timeout: 100_000 },
      );
      expect(stdout.trimEnd(), `${where(block)}: the output of ${block.marker?.value}`).toBe(
        block.body.trimEnd(),
      );
    }, 120_000);
  });
});
