import { createChain } from 'statecraft';
import { extractJson, jsonCandidates } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

describe('jsonCandidates', () => {
  it('yields the whole text, then fenced blocks, then outermost spans in order', () => {
    expect([...jsonCandidates('{"a":1}')]).toEqual([{ a: 1 }]);
    const text = 'See [1] and then:\n```json\n{"b":2}\n```\nor {"c": {"d": [3]}} and "quoted {x}".';
    expect([...jsonCandidates(text)]).toEqual([{ b: 2 }, [1], { b: 2 }, { c: { d: [3] } }]);
  });

  it('skips brackets inside strings and resets on mismatched brackets', () => {
    expect([...jsonCandidates('prose [1} then {"s": "a } in a string"}')]).toEqual([
      { s: 'a } in a string' },
    ]);
  });

  it('stays linear on a long run of unclosed brackets (a truncated answer)', () => {
    expect(extractJson('['.repeat(200_000))).toBeUndefined();
    expect(extractJson(`${'['.repeat(100_000)} {"ok":true}`)).toBeUndefined();
  });
});

describe('structured output picks the first JSON value that validates', () => {
  it('skips a citation array before the answer object', async () => {
    const model = new ScriptedModel([{ text: 'See [1] for details: {"name": "x"}' }]);
    const run = await createChain({ model, outputSchema: z.object({ name: z.string() }) }).invoke(
      'go',
    );
    expect(run.result).toEqual({ name: 'x' });
    expect(model.callCount).toBe(1);
  });
});
