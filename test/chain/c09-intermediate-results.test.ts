// SPEC C9: catchIntermediateResult (default true) + resultCacheKey. On success an object result
// is merged into the run input's intermediate results (later keys overwrite); a string result
// is cached only under resultCacheKey. Chains run in sequence read what earlier ones cached.
import { createChain, ProtocolError } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { partialOf, rejectionOf } from './helpers.js';

const Place = z.object({ city: z.string(), country: z.string() });

function placeChain(answer: string, options: { catchIntermediateResult?: boolean } = {}) {
  return createChain({
    model: new ScriptedModel([{ text: answer }]),
    outputSchema: Place,
    ...options,
  });
}

describe('intermediate results (C9)', () => {
  it('merges an object result into the input intermediate results, later keys overwriting', async () => {
    const before = Object.freeze({ city: 'Lyon', population: 513_000 });
    const run = await placeChain('{"city": "Paris", "country": "France"}').invoke({
      messages: [{ role: 'user', content: 'capital?' }],
      intermediateResults: before,
    });
    expect(run.intermediateResults).toEqual({
      city: 'Paris',
      population: 513_000,
      country: 'France',
    });
    // The caller's object is not modified.
    expect(before).toEqual({ city: 'Lyon', population: 513_000 });
  });

  it('starts from nothing when the input has no intermediate results', async () => {
    const run = await placeChain('{"city": "Rome", "country": "Italy"}').invoke('capital?');
    expect(run.intermediateResults).toEqual({ city: 'Rome', country: 'Italy' });
  });

  it('caches a string result only under resultCacheKey', async () => {
    const withKey = createChain({
      model: new ScriptedModel([{ text: 'A short summary.' }]),
      resultCacheKey: 'summary',
    });
    const keyed = await withKey.invoke({
      messages: [{ role: 'user', content: 'summarize' }],
      intermediateResults: { earlier: 1 },
    });
    expect(keyed.intermediateResults).toEqual({ earlier: 1, summary: 'A short summary.' });

    const withoutKey = createChain({ model: new ScriptedModel([{ text: 'A short summary.' }]) });
    const unkeyed = await withoutKey.invoke({
      messages: [{ role: 'user', content: 'summarize' }],
      intermediateResults: { earlier: 1 },
    });
    expect(unkeyed.intermediateResults).toEqual({ earlier: 1 });
  });

  it('does not use resultCacheKey for an object result', async () => {
    const chain = createChain({
      model: new ScriptedModel([{ text: '{"city": "Oslo", "country": "Norway"}' }]),
      outputSchema: Place,
      resultCacheKey: 'place',
    });
    const run = await chain.invoke('capital?');
    expect(run.intermediateResults).toEqual({ city: 'Oslo', country: 'Norway' });
  });

  it("a second chain run with the first one's results keeps and extends them", async () => {
    const first = placeChain('{"city": "Paris", "country": "France"}');
    const second = createChain({
      model: new ScriptedModel([{ text: 'Paris is lovely in spring.' }]),
      resultCacheKey: 'advice',
    });
    const third = createChain({
      model: new ScriptedModel([{ text: '{"city": "Nice", "country": "France"}' }]),
      outputSchema: Place,
    });

    const one = await first.invoke('capital of France?');
    const two = await second.invoke({
      messages: [{ role: 'user', content: 'when to visit?' }],
      intermediateResults: one.intermediateResults,
    });
    expect(two.intermediateResults).toEqual({
      city: 'Paris',
      country: 'France',
      advice: 'Paris is lovely in spring.',
    });
    const three = await third.invoke({
      messages: [{ role: 'user', content: 'a city by the sea?' }],
      intermediateResults: two.intermediateResults,
    });
    expect(three.intermediateResults).toEqual({
      city: 'Nice',
      country: 'France',
      advice: 'Paris is lovely in spring.',
    });
  });

  it('chain.input() carries the intermediate results into the machine', () => {
    const chain = placeChain('{}');
    expect(
      chain.input({ messages: [], intermediateResults: { a: 1 } }).intermediateResults,
    ).toEqual({ a: 1 });
  });

  it('catchIntermediateResult: false caches nothing', async () => {
    const run = await placeChain('{"city": "Paris", "country": "France"}', {
      catchIntermediateResult: false,
    }).invoke({
      messages: [{ role: 'user', content: 'capital?' }],
      intermediateResults: { city: 'Lyon' },
    });
    expect(run.result).toEqual({ city: 'Paris', country: 'France' });
    expect(run.intermediateResults).toEqual({ city: 'Lyon' });
  });

  it('does not merge an array result', async () => {
    const chain = createChain({
      model: new ScriptedModel([{ text: '["a", "b"]' }]),
      outputSchema: z.array(z.string()),
    });
    const run = await chain.invoke({
      messages: [{ role: 'user', content: 'letters' }],
      intermediateResults: { kept: true },
    });
    expect(run.intermediateResults).toEqual({ kept: true });
  });

  it('a failed run caches nothing', async () => {
    const chain = createChain({
      model: new ScriptedModel([{ text: '{"city": 1}' }]),
      outputSchema: Place,
      maxIterations: 1,
    });
    const error = await rejectionOf(
      ProtocolError,
      chain.invoke({
        messages: [{ role: 'user', content: 'capital?' }],
        intermediateResults: { city: 'Lyon' },
      }),
    );
    expect(partialOf(error).output.intermediateResults).toEqual({ city: 'Lyon' });
  });
});
