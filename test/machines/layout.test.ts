// A machine file shows its policy first: `setup()` naming every guard, action and actor, then
// the state config, and nothing else but imports, re-exports and types. Bodies longer than a
// line live in sibling modules by concern (chain-limits.ts, tool-loop-rounds.ts, …), so this
// test fails when a helper function or constant grows back into a machine file, or when the
// file outgrows the size a reader can take in. (A line scan, not a parser: the installed
// TypeScript has no compiler API, and the files are formatted by Biome, so every top-level
// declaration starts its own line at column 0.)
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const MACHINE_FILES = [
  { path: 'machines/chain.ts', machine: 'chainMachine', maxLines: 600 },
  { path: 'machines/tool-loop.ts', machine: 'toolLoopMachine', maxLines: 400 },
];

/** A top-level declaration that is no import, re-export or type: code that runs. */
const CODE =
  /^(export\s+)?(default\s+)?(declare\s+)?(async\s+)?(function|const|let|var|class|enum)\b/;

describe.each(MACHINE_FILES)('$path', ({ path, machine, maxLines }) => {
  const lines = readFileSync(path, 'utf8').split('\n');
  const lineOf = (pattern: RegExp, from = 0) => {
    const index = lines.findIndex((line, i) => i >= from && pattern.test(line));
    if (index < 0) throw new Error(`${path}: no line matches ${pattern}`);
    return index;
  };

  it('holds only setup() and the state config, besides imports, re-exports and types', () => {
    const code = lines.flatMap((line, i) => (CODE.test(line) ? [`line ${i + 1}: ${line}`] : []));
    expect(code).toEqual([
      expect.stringMatching(new RegExp(`: export const ${machine} = setup\\(\\{$`)),
    ]);
  });

  it(`is at most ${maxLines} lines, most of them the state config`, () => {
    expect(lines.length - 1).toBeLessThanOrEqual(maxLines);
    const setupStart = lineOf(new RegExp(`^export const ${machine} = setup\\(\\{$`));
    const configStart = lineOf(/^\}\)\.createMachine\(\{$/, setupStart);
    const configEnd = lineOf(/^\}\);$/, configStart);
    // The reader comes for which state follows which: setup() is its index, not its bulk.
    expect(configStart - setupStart).toBeLessThan((configEnd - configStart) / 2);
  });
});
