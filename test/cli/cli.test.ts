// The `statecraft` CLI, spawned for real as `npm run statecraft` runs it (tsx with the
// statecraft-source condition): its output is compared with what the library computes
// in-process, and every bad input must end with one clear line on stderr and exit code 1.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { generatePathTests } from 'statecraft/testing';
import { toJSON, toMermaid } from 'statecraft/viz';
import { describe, expect, it } from 'vitest';
import { chainMachine } from '../../machines/chain.js';
import { toolLoopMachine } from '../../machines/tool-loop.js';
import { chainWalks } from '../../src/cli/walks/chain-walk.js';
import { supportTriage, supportTriagePaths } from './fixtures/support-triage.js';

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function statecraft(...args: string[]): Promise<Outcome> {
  return statecraftWith({}, ...args);
}

function statecraftWith(env: Record<string, string>, ...args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=statecraft-source', '--import', 'tsx', 'src/cli/main.ts', ...args],
      { env: { ...process.env, STATECRAFT_DEBUG: '', ...env } },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const pathCount = (specs: readonly { machine: unknown }[]) =>
  specs.reduce(
    (sum, { machine, ...options }) =>
      sum + generatePathTests(machine as never, options as never).paths.length,
    0,
  );

describe('statecraft graph', () => {
  it('prints the Mermaid diagram and the JSON the library makes, for machines and a spec', async () => {
    const [mermaid, json, triage, lr] = await Promise.all([
      statecraft('graph', 'machines/chain.ts#chainMachine'),
      statecraft('graph', 'machines/tool-loop.ts#toolLoopMachine', '--format', 'json'),
      statecraft('graph', 'test/cli/fixtures/support-triage.ts#supportTriagePaths'),
      statecraft('graph', 'machines/chain.ts#chainMachine', '-d', 'LR', '--no-details'),
    ]);
    expect(mermaid).toEqual({ code: 0, stdout: toMermaid(chainMachine), stderr: '' });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify(toJSON(toolLoopMachine))));
    expect(triage).toEqual({ code: 0, stdout: toMermaid(supportTriage), stderr: '' });
    expect(lr.stdout).toBe(toMermaid(chainMachine, { direction: 'LR', details: false }));
  }, 60_000);
});

describe('statecraft paths', () => {
  it("counts the chain's paths with its built-in walks and covers every state and transition", async () => {
    const { code, stdout, stderr } = await statecraft('paths', 'machines/chain.ts#chainMachine');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain(`paths        ${pathCount(chainWalks())} (simple)`);
    expect(stdout).toContain('states       10/10 (100%)');
    expect(stdout).toMatch(/transitions {2}(\d+)\/\1 \(100%\)/);
  }, 60_000);

  it('walks a paths spec export, and names what a bare machine with invokes lacks', async () => {
    const [spec, bare, shortest] = await Promise.all([
      statecraft('paths', 'test/cli/fixtures/support-triage.ts#supportTriagePaths'),
      statecraft('paths', 'test/cli/fixtures/support-triage.ts#supportTriage'),
      statecraft('paths', 'machines/tool-loop.ts#toolLoopMachine', '--paths', 'shortest'),
    ]);
    expect(spec.code).toBe(0);
    expect(spec.stdout).toContain(`paths        ${pathCount([supportTriagePaths])} (simple)`);
    expect(spec.stdout).toContain('states       6/6 (100%)');
    expect(bare.code).toBe(1);
    expect(bare.stderr).toMatch(
      /^statecraft paths: the machine alone: .*`actors` lists no outcomes/m,
    );
    expect(bare.stderr).toContain('export a paths spec');
    expect(shortest.code).toBe(0);
    expect(shortest.stdout).toContain('(shortest)');
  }, 60_000);
});

describe('statecraft paths on a machine exported as it is', () => {
  it("offers the machine's own event types, without data, and covers what they reach", async () => {
    const { code, stdout, stderr } = await statecraft(
      'paths',
      'test/cli/fixtures/plain-machines.ts#door',
    );
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toContain('the machine with its events (CLOSE, LOCK, OPEN, UNLOCK):');
    expect(stdout).toContain('states       3/3 (100%)');
    expect(stdout).toContain('transitions  4/4 (100%)');
  }, 60_000);

  it('leaves out the events that break the walk without data, and walks the rest', async () => {
    const { code, stdout, stderr } = await statecraft(
      'paths',
      'test/cli/fixtures/plain-machines.ts#form',
    );
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^ {2}note: left out TYPE: without data, it breaks the walk \(.*'trim'.*\)$/m,
    );
    expect(stdout).toContain('  the machine with its events (SUBMIT): 1 path');
    expect(stdout).toContain('states       2/2 (100%)');
    expect(stdout).toContain('transitions  1/2 (50%)');
    expect(stderr).toMatch(/^hint: .*export a paths spec/m);
  }, 60_000);

  it('says how to cover the rest whenever coverage is below 100%', async () => {
    const [keypad, limited] = await Promise.all([
      statecraft('paths', 'test/cli/fixtures/plain-machines.ts#keypad'),
      statecraft('paths', 'test/cli/fixtures/plain-machines.ts#keypadWrongCode'),
    ]);
    expect(keypad.code).toBe(0);
    // `*` is a wildcard, not an event type to offer.
    expect(keypad.stdout).toContain('the machine with its events (ENTER, LOCK):');
    expect(keypad.stdout).toContain('states       1/2 (50%)');
    expect(keypad.stdout).toContain('never entered: unlocked');
    expect(keypad.stderr).toMatch(/^hint: .*export a paths spec/m);
    // A spec that misses states is told what to add to it.
    expect(limited.code).toBe(0);
    expect(limited.stdout).toContain('states       1/2 (50%)');
    expect(limited.stderr).toMatch(/^hint: .*add to the paths spec/m);
  }, 60_000);
});

describe('statecraft run', () => {
  it("runs an example by name, its output on stdout, its runs' progress on stderr", async () => {
    const { code, stdout, stderr } = await statecraft('run', 'quickstart');
    expect(code).toBe(0);
    expect(stdout).toContain('result: { answer: 5 }');
    const lines = stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('chain#1 started on scripted/scripted-model');
    expect(lines).toContain('chain#1 thinking');
    expect(lines).toContain('chain#1 doing');
    expect(lines).toContain('chain#1 tool add → ok');
    expect(
      lines.some((l) => l.startsWith("chain#1 tool add → error: Invalid arguments for tool 'add'")),
    ).toBe(true);
    // Every model call with its tokens, and a summary that adds them up.
    const tokens = lines.flatMap((l) => /model call \d \(.*\): (\d+) tokens/.exec(l)?.[1] ?? []);
    expect(tokens).toHaveLength(3);
    const sum = tokens.reduce((s, t) => s + Number(t), 0);
    expect(lines).toContain(
      `statecraft run: 1 run, 3 model calls, 2 tool calls (1 failed), ${sum} tokens`,
    );
    expect(
      lines.some((l) => /^chain#1 done \(3 model calls, 2 tool calls, \d+ tokens/.test(l)),
    ).toBe(true);
  }, 60_000);
});

describe('statecraft exit codes and versions', () => {
  it('keeps the exit code a script sets (a CI job wrapped in `statecraft run` fails)', async () => {
    const outcome = await statecraft('run', 'test/cli/fixtures/sets-exit-code.ts');
    expect(outcome.stdout).toContain('checks failed');
    expect(outcome.code).toBe(3);
  }, 60_000);

  it("--help says how to see a failure's stack", async () => {
    const { code, stdout } = await statecraft('--help');
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /A failure is one line on stderr, and exit code 1\. Set STATECRAFT_DEBUG=1/,
    );
  }, 60_000);

  it('--version prints the version in package.json', async () => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    const [long, short] = await Promise.all([statecraft('--version'), statecraft('-V')]);
    expect(long).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    expect(short).toEqual(long);
  }, 60_000);
});

describe('statecraft on bad input', () => {
  it('fails with one clear line and exit code 1, never a stack trace', async () => {
    const cases = {
      'no such module': [
        ['graph', 'machines/nope.ts#chainMachine'],
        /^statecraft graph: no module at machines\/nope\.ts/,
      ],
      'no #export': [
        ['graph', 'machines/chain.ts'],
        /names no export: write machines\/chain\.ts#<export>, one of: chainMachine/,
      ],
      'no such export': [
        ['graph', 'machines/chain.ts#chainMachin'],
        /has no export named "chainMachin"; it exports: chainMachine/,
      ],
      'not a machine': [
        ['graph', 'test/cli/fixtures/support-triage.ts#sampleTicketExport'],
        /#sampleTicketExport is a plain object, not an XState state machine, a Chain, a ToolLoop or a paths spec/,
      ],
      'a factory': [
        ['paths', 'examples/support-triage/machine.ts#createTriageMachine'],
        /is a function \(createTriageMachine\), not .*export the machine it returns/,
      ],
      'unknown format': [
        ['graph', 'machines/chain.ts#chainMachine', '--format', 'svg'],
        /argument 'svg' is invalid\. Allowed choices are mermaid, json/,
      ],
      'unknown command': [
        ['draw', 'machines/chain.ts#chainMachine'],
        /^statecraft: unknown command 'draw'/,
      ],
      'unknown example': [
        ['run', 'nope'],
        /^statecraft run: no example named "nope"; the examples are: .*quickstart.*support-triage/,
      ],
    } as const;
    const outcomes = await Promise.all(Object.values(cases).map(([args]) => statecraft(...args)));
    for (const [[name, [, message]], outcome] of Object.entries(cases).map(
      (c, i) => [c, outcomes[i]] as const,
    )) {
      expect(outcome?.code, name).toBe(1);
      expect(outcome?.stdout, name).toBe('');
      expect(outcome?.stderr, name).toMatch(message);
      expect(outcome?.stderr, name).not.toMatch(/\n\s+at /);
    }
  }, 60_000);

  it("a missing export is reported before the module's code runs, where its text tells", async () => {
    const module = 'test/cli/fixtures/side-effect-machine.ts';
    const [missing, none, found] = await Promise.all([
      statecraft('graph', `${module}#nope`),
      statecraft('paths', module),
      statecraft('graph', `${module}#lightMachine`),
    ]);
    expect(missing).toEqual({
      code: 1,
      stdout: '',
      stderr: `statecraft graph: ${module} has no export named "nope"; it exports: lightMachine, notAMachine\n`,
    });
    expect(none.stderr).toBe(
      `statecraft paths: "${module}" names no export: write ${module}#<export>, one of: lightMachine, notAMachine\n`,
    );
    // An export that is there: the module is imported, its code runs, as it must.
    expect(found.code).toBe(0);
    expect(found.stderr).toBe('side-effect-machine: top-level code ran\n');
  }, 60_000);

  it('`export * from` cannot be read without importing: the same message, after the code ran', async () => {
    const module = 'test/cli/fixtures/side-effect-reexport.ts';
    const { code, stderr } = await statecraft('graph', `${module}#nope`);
    expect(code).toBe(1);
    expect(stderr).toBe(
      'side-effect-machine: top-level code ran\n' +
        `statecraft graph: ${module} has no export named "nope"; it exports: lightMachine, notAMachine\n`,
    );
  }, 60_000);

  it('a module that throws: its message, and with STATECRAFT_DEBUG=1 the stack of its error', async () => {
    const ref = 'test/cli/fixtures/throws-on-load.ts#settingsPath';
    const [plain, debug] = await Promise.all([
      statecraft('graph', ref),
      statecraftWith({ STATECRAFT_DEBUG: '1' }, 'graph', ref),
    ]);
    for (const outcome of [plain, debug]) {
      expect(outcome.code).toBe(1);
      expect(outcome.stderr).toMatch(
        /^statecraft graph: loading test\/cli\/fixtures\/throws-on-load\.ts failed: Cannot read properties of undefined \(reading 'path'\)\n/,
      );
    }
    expect(plain.stderr).not.toMatch(/\n\s+at /);
    // The module's own frames, not the CLI's wrapper's.
    expect(debug.stderr).toMatch(/TypeError: Cannot read properties of undefined/);
    expect(debug.stderr).toMatch(/\n\s+at readSettings \(.*throws-on-load\.ts:\d+:\d+\)/);
  }, 60_000);
});
