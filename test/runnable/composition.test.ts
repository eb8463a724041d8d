// SPEC R2: pipe / sequence (output → input), parallel (an object of steps on one input),
// fromFunction, retry and fallbacks; intermediate results (C9) flow along a sequence.
import {
  AbortError,
  createChain,
  fromFunction,
  parallel,
  pipe,
  runnable,
  sequence,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const inc = fromFunction((n: number) => n + 1, 'inc');
const double = fromFunction((n: number) => n * 2, 'double');

describe('pipe and sequence (R2)', () => {
  it("passes each step's output to the next, in order (LangChain's (x + 1) * 2)", async () => {
    expect(await pipe(inc, double).invoke(1)).toBe(4);
    expect(await sequence(double, inc).invoke(1)).toBe(3);
    expect(
      await inc
        .pipe(double)
        .pipe((n) => `${n}!`)
        .invoke(1),
    ).toBe('4!');
    expect(await pipe(inc, double).batch([1, 2, 3])).toEqual([
      { status: 'fulfilled', value: 4 },
      { status: 'fulfilled', value: 6 },
      { status: 'fulfilled', value: 8 },
    ]);
  });

  it('stops at the first failing step: later steps never run', async () => {
    const ran: string[] = [];
    const failing = pipe(
      (n: number) => {
        ran.push('first');
        return n;
      },
      () => {
        ran.push('second');
        throw new Error('second step failed');
      },
      (n: number) => {
        ran.push('third');
        return n;
      },
    );
    await expect(failing.invoke(1)).rejects.toThrow('second step failed');
    expect(ran).toEqual(['first', 'second']);
  });

  it('streams every step: each step is a run under the sequence, its events passed on', async () => {
    const events = [];
    for await (const event of pipe(inc, double).stream(1)) events.push(event);
    const runs = events.flatMap((e) => (e.type === 'run-start' ? [e.run] : []));
    expect(runs.map((r) => `${r.kind}:${r.name}`)).toEqual([
      'sequence:inc | double',
      'function:inc',
      'function:double',
    ]);
    const [outer, first, second] = runs;
    expect(first?.parentRunId).toBe(outer?.runId);
    expect(second?.parentRunId).toBe(outer?.runId);
    expect(events.filter((e) => e.type === 'final')).toEqual([{ type: 'final', output: 4 }]);
  });

  it('a later chain reads what an earlier one cached (C9), and a function step sees it too', async () => {
    const place = createChain({
      model: new ScriptedModel([{ text: '{"city": "Paris", "country": "France"}' }]),
      outputSchema: z.object({ city: z.string(), country: z.string() }),
    });
    const adviceModel = new ScriptedModel([{ text: 'Go in spring.' }]);
    const advice = createChain({ model: adviceModel, resultCacheKey: 'advice' });
    let seenByFunction: unknown;
    const trip = pipe(
      place,
      (found, config) => {
        seenByFunction = config.intermediateResults?.current;
        return `When should I visit ${found.result.city}?`;
      },
      advice,
    );
    const result = await trip.invoke('Which capital has the Louvre?');
    expect(seenByFunction).toEqual({ city: 'Paris', country: 'France' });
    expect(result.result).toBe('Go in spring.');
    expect(result.intermediateResults).toEqual({
      city: 'Paris',
      country: 'France',
      advice: 'Go in spring.',
    });
    expect(adviceModel.requests[0]?.messages.at(-1)).toMatchObject({
      content: 'When should I visit Paris?',
    });
    // Each sequence run has its own results: a second run does not see the first one's.
    const again = await pipe((_: string, config) =>
      Object.keys(config.intermediateResults?.current ?? {}),
    ).invoke('x');
    expect(again).toEqual([]);
  });
});

describe('parallel (R2)', () => {
  it('runs an object of steps on one input, concurrently, into a typed object', async () => {
    let running = 0;
    let peak = 0;
    const slow = (label: string) =>
      fromFunction(async (n: number) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((resolve) => setTimeout(resolve, 10));
        running--;
        return `${label}${n}`;
      });
    const both = parallel({ a: slow('a'), b: slow('b'), c: (n: number) => n * 5 });
    expect(await both.invoke(2)).toEqual({ a: 'a2', b: 'b2', c: 10 });
    expect(peak).toBe(2);
    // As in LangChain: a step, then an object of steps on its output.
    expect(
      await pipe(inc, parallel({ mul2: double, mul5: (n: number) => n * 5 })).invoke(1),
    ).toEqual({
      mul2: 4,
      mul5: 10,
    });
  });

  it('aborts the other steps when one fails, and throws its error once all have stopped', async () => {
    let siblingAborted = false;
    let siblingSettled = false;
    const waiting = fromFunction(async (_: number, config) => {
      await new Promise<void>((resolve) =>
        config.signal?.addEventListener('abort', () => {
          siblingAborted = true;
          resolve();
        }),
      );
      siblingSettled = true;
      throw new AbortError('stopped');
    });
    const failing = fromFunction(async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw new Error('lookup failed');
    });
    await expect(parallel({ waiting, failing }).invoke(1)).rejects.toThrow('lookup failed');
    expect(siblingAborted).toBe(true);
    expect(siblingSettled).toBe(true);
  });
});

describe('withRetry and withFallbacks', () => {
  it('retries a failing step up to maxAttempts, each attempt a run of its own', async () => {
    let attempts = 0;
    const flaky = fromFunction((n: number) => {
      attempts++;
      if (attempts < 3) throw new Error(`attempt ${attempts} failed`);
      return n;
    });
    expect(await flaky.withRetry({ maxAttempts: 3 }).invoke(7)).toBe(7);
    expect(attempts).toBe(3);
    attempts = 0;
    await expect(flaky.withRetry({ maxAttempts: 2 }).invoke(7)).rejects.toThrow('attempt 2 failed');
    attempts = 0;
    await expect(
      flaky.withRetry({ shouldRetry: (error) => !String(error).includes('attempt 1') }).invoke(7),
    ).rejects.toThrow('attempt 1 failed');
    expect(() => flaky.withRetry({ maxAttempts: 0 })).toThrow(/maxAttempts/);
  });

  it('does not retry a cancelled run', async () => {
    let attempts = 0;
    const cancelled = fromFunction(() => {
      attempts++;
      throw new AbortError('cancelled by the user');
    });
    await expect(cancelled.withRetry().invoke(1)).rejects.toThrow('cancelled by the user');
    expect(attempts).toBe(1);
  });

  it('falls back to the next step on failure, and throws the primary error when all fail', async () => {
    const down = new ScriptedModel([{ error: new Error('provider down') }]);
    const primary = createChain({ model: down });
    const backup = createChain({ model: new ScriptedModel([{ text: 'from the backup' }]) });
    const answer = await runnable(primary).withFallbacks([backup]).invoke('hi');
    expect(answer.result).toBe('from the backup');

    const first = fromFunction((): number => {
      throw new Error('first');
    });
    const second = fromFunction((): number => {
      throw new Error('second');
    });
    await expect(first.withFallbacks([second]).invoke(1)).rejects.toThrow('first');
  });
});
