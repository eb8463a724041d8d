// staticExports reads a module's export names from its text: what it must see, what it must
// not be fooled by, and when it must give up (undefined: the CLI imports the module instead).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { staticExports } from '../../src/cli/static-exports.js';

const names = (source: string) => {
  const found = staticExports(source);
  return found && [...found].sort();
};

describe('staticExports', () => {
  it('reads every form of runtime export, and leaves types out', () => {
    const source = `
      export const a = 1, b = f(2, 3);
      export let c: Record<string, number> = {};
      export var d;
      export function e() {}
      export async function f() {}
      export function* g() {}
      export async function* h() {}
      export class I {}
      export abstract class J {}
      export enum K { X }
      export const enum L { Y }
      export default 42;
      export { m, n as o, type P, q as "r-s" };
      export { t as u } from './other.js';
      export * as v from './other.js';
      export type W = { export: 1 };
      export interface X { a: string }
      export declare const y: number;
      export type { Z } from './types.js';
    `;
    expect(names(source)).toEqual(
      [
        'a',
        'b',
        'c',
        'd',
        'e',
        'f',
        'g',
        'h',
        'I',
        'J',
        'K',
        'default',
        'o',
        'm',
        'r-s',
        'u',
        'v',
      ].sort(),
    );
  });

  it('is not fooled by comments, strings, templates and regular expressions', () => {
    const source = [
      '// export const inComment = 1;',
      '/* export const inBlock = 1; */',
      "const s = 'export const inString = 1; }';",
      // A template with placeholders, one holding a brace and one a template of its own.
      'const t = `export const inTemplate = $' + '{"{"} $' + '{`nested $' + '{1}`}`;',
      "const r = /export const inRegex = ['/]/g;",
      'const q = a / b / c; // not a regex',
      'const o = { export: 1 }; o.export;',
      'export const real = () => { return `}`; };',
    ].join('\n');
    expect(names(source)).toEqual(['real']);
  });

  it('gives up where it cannot be sure', () => {
    expect(staticExports("export * from './other.js';")).toBeUndefined();
    expect(staticExports('export const { a, b } = obj;')).toBeUndefined();
    expect(staticExports('export = thing;')).toBeUndefined();
    expect(staticExports('module.exports = { a: 1 };')).toBeUndefined();
    expect(staticExports("export const a = 'unterminated;")).toBeUndefined();
    expect(staticExports('export const a = { b: 1 ;')).toBeUndefined();
  });

  it("agrees with what Node imports, for this project's machines and CLI fixtures", async () => {
    for (const file of [
      'machines/chain.ts',
      'machines/tool-loop.ts',
      'adapters/models/openai.ts',
      'src/cli/static-exports.ts',
      'test/cli/fixtures/support-triage.ts',
      'test/cli/fixtures/plain-machines.ts',
    ]) {
      const found = staticExports(readFileSync(file, 'utf8'));
      const real = Object.keys(await import(`../../${file}`)).sort();
      expect(found && [...found].sort(), file).toEqual(real);
    }
  });
});
