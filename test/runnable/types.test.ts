// SPEC R2 type tests: types flow through pipe / sequence / parallel, and a step that cannot
// take the previous output is a compile error. `npm test` runs `tsc --noEmit` over this file:
// each `@ts-expect-error` fails the typecheck if its line ever compiles.
import {
  type ChainResult,
  type ChainRunInput,
  createChain,
  createToolLoop,
  fromFunction,
  fromModel,
  parallel,
  pipe,
  type Runnable,
  runnable,
  sequence,
  type ToolLoopResult,
} from 'statecraft';
import type { ModelResponse } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';

const toNumber = fromFunction((s: string) => s.length);
const toFlag = fromFunction((n: number) => n > 3);
const model = () => new ScriptedModel([{ text: '{"label": "x"}' }]);

describe('composition types (R2)', () => {
  it('pipe and sequence carry each output type to the next input', async () => {
    const piped = pipe(toNumber, toFlag);
    expectTypeOf(piped).toEqualTypeOf<Runnable<string, boolean>>();
    expectTypeOf(sequence(toNumber, (n) => n * 2, String)).toEqualTypeOf<
      Runnable<string, string>
    >();
    // A function step's parameter is typed from the step before it.
    pipe(toNumber, (n) => {
      expectTypeOf(n).toEqualTypeOf<number>();
      return n;
    });
    expectTypeOf(toNumber.pipe(toFlag)).toEqualTypeOf<Runnable<string, boolean>>();
    expect(await piped.invoke('abcd')).toBe(true);
  });

  it('a mismatched step is a compile error', () => {
    // @ts-expect-error toFlag takes a number; toFlag outputs a boolean
    pipe(toFlag, toFlag);
    // @ts-expect-error a string step after a number step
    sequence(toNumber, (s: string) => s.toUpperCase());
    // @ts-expect-error .pipe checks the same way
    toNumber.pipe((s: string) => s);
    const piped = pipe(toNumber, toFlag);
    // @ts-expect-error the input type is checked at invoke
    piped.invoke(42).catch(() => {});
  });

  it('chains, tool loops and models are typed steps', () => {
    const classify = createChain({ model: model(), outputSchema: z.object({ label: z.string() }) });
    const typed = runnable(classify);
    expectTypeOf(typed.invoke).returns.resolves.toEqualTypeOf<ChainResult<{ label: string }>>();
    const labelled = pipe(classify, (r) => r.result.label);
    expectTypeOf(labelled).toEqualTypeOf<Runnable<string | ChainRunInput, string>>();
    // @ts-expect-error a chain's output is a ChainResult, not a string
    pipe(classify, (s: string) => s);
    const loop = createToolLoop({ model: model(), tools: [] });
    expectTypeOf(runnable(loop).invoke).returns.resolves.toEqualTypeOf<ToolLoopResult>();
    expectTypeOf(fromModel(model()).invoke).returns.resolves.toEqualTypeOf<ModelResponse>();
  });

  it('parallel types its output object by key and its input by what every step takes', async () => {
    const both = parallel({ length: toNumber, shout: (s: string) => s.toUpperCase() });
    expectTypeOf(both).toEqualTypeOf<Runnable<string, { length: number; shout: string }>>();
    expect(await both.invoke('ab')).toEqual({ length: 2, shout: 'AB' });
    const mixed = parallel({ length: toNumber, flag: toFlag });
    // No input is both a string and a number.
    expectTypeOf(mixed.invoke).parameter(0).toEqualTypeOf<never>();
    // @ts-expect-error so it cannot be invoked with either
    void mixed.invoke('ab').catch(() => {});
    expectTypeOf(
      pipe(toNumber, parallel({ flag: toFlag, twice: (n: number) => n * 2 })),
    ).toEqualTypeOf<Runnable<string, { flag: boolean; twice: number }>>();
  });
});
