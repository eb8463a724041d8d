// What the CLI's commands accept, in-process: the export kinds `graph` and `paths` take, the
// project machines' built-in walks (found for Chains and ToolLoops too), and example names.
import { tmpdir } from 'node:os';
import { createChain, createToolLoop } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { chainMachine } from '../../machines/chain.js';
import { toolLoopMachine } from '../../machines/tool-loop.js';
import { CliError } from '../../src/cli/cli-error.js';
import { availableExamples, exampleArgument, findExample } from '../../src/cli/find-example.js';
import { machineOf, specsOf } from '../../src/cli/machine-of.js';
import { builtinWalks } from '../../src/cli/walks/builtin-walks.js';
import { supportTriage, supportTriagePaths } from './fixtures/support-triage.js';

const model = new ScriptedModel([{ text: 'hi' }]);

describe('machineOf', () => {
  it("takes a machine, a Chain's or ToolLoop's machine, a spec's machine", () => {
    const chain = createChain({ model });
    const loop = createToolLoop({ model, tools: [] });
    expect(machineOf(chainMachine, 'x')).toBe(chainMachine);
    expect(machineOf(chain, 'x')).toBe(chain.machine);
    expect(machineOf(loop, 'x')).toBe(loop.machine);
    expect(machineOf(supportTriagePaths, 'x')).toBe(supportTriage);
    expect(machineOf([supportTriagePaths], 'x')).toBe(supportTriage);
    expect(specsOf(supportTriagePaths)).toEqual([supportTriagePaths]);
    expect(specsOf(chain)).toEqual([]);
  });

  it('says what an export is when it is none of those', () => {
    for (const [value, what] of [
      [42, 'number 42'],
      ['chain', 'string "chain"'],
      [null, 'null'],
      [[], 'an array'],
      [{ machine: 1 }, 'a plain object'],
      [new Map(), 'an instance of Map'],
    ] as const) {
      expect(() => machineOf(value, 'm.ts#x')).toThrow(CliError);
      expect(() => machineOf(value, 'm.ts#x')).toThrow(
        `m.ts#x is ${what}, not an XState state machine`,
      );
    }
  });
});

describe('builtinWalks', () => {
  it("recognizes the project's machines and their provided copies, and nothing else", () => {
    const chain = createChain({ model });
    const loop = createToolLoop({ model, tools: [] });
    expect(builtinWalks(chain.machine)?.every((walk) => walk.machine === chain.machine)).toBe(true);
    expect(builtinWalks(loop.machine)?.length).toBeGreaterThan(0);
    expect(builtinWalks(chainMachine)?.length).toBeGreaterThan(0);
    expect(builtinWalks(toolLoopMachine)?.length).toBeGreaterThan(0);
    expect(builtinWalks(supportTriage)).toBeUndefined();
  });

  it('recognizes the chain machine from another copy of its module (the built CLI given the source file)', async () => {
    // A second instance of machines/chain.ts: its own config object, the same statechart.
    const copyUrl = `${new URL('../../machines/chain.ts', import.meta.url).href}?copy`;
    const copy = (await import(copyUrl)) as { chainMachine: typeof chainMachine };
    expect(copy.chainMachine.config).not.toBe(chainMachine.config);
    expect(builtinWalks(copy.chainMachine)?.length).toBe(builtinWalks(chainMachine)?.length);
  });
});

describe('findExample', () => {
  it('finds examples by name, folders by their run.ts, and scripts by path', () => {
    expect(findExample('quickstart')).toMatch(/examples\/quickstart\.ts$/);
    expect(findExample('support-triage')).toMatch(/examples\/support-triage\/run\.ts$/);
    expect(findExample('examples/compose.ts')).toMatch(/examples\/compose\.ts$/);
  });

  it('offers names in --help only when there are examples (test/package.test.ts: none installed)', () => {
    expect(exampleArgument([])).toBe('a path to a script, e.g. ./my-agent.ts');
    expect(exampleArgument(['compose', 'quickstart'])).toBe(
      'an example name under examples/, e.g. quickstart, or a path to a script',
    );
    // A checkout's CLI finds its own examples from any working directory.
    expect(availableExamples(tmpdir())).toContain('support-triage');
  });

  it('lists the examples when the name is unknown, and names a missing path', () => {
    expect(() => findExample('quikstart')).toThrow(
      /no example named "quikstart"; the examples are: .*quickstart/,
    );
    expect(() => findExample('examples/nope.ts')).toThrow(/no example at examples\/nope\.ts/);
  });
});
