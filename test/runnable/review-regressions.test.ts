// Regressions from the review of the Runnable layer: each failed before its fix.
import {
  createChain,
  createToolLoop,
  fromFunction,
  InMemoryChatMemory,
  type Message,
  pipe,
  type RunCallbacks,
  runnable,
  withMemory,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';

describe('Runnable review regressions', () => {
  it('a step that needs more than the previous step gives does not compile', () => {
    const giveA = fromFunction((n: number) => ({ a: String(n) }));
    const needsB = fromFunction((x: { a: string; b: number }) => x.b.toFixed());
    // @ts-expect-error needsB needs `b`, which giveA does not give
    pipe(giveA, needsB);
    // @ts-expect-error the same through .pipe
    giveA.pipe(needsB);
    const anyString = fromFunction((n: number) => String(n));
    // @ts-expect-error a step taking only 'a' | 'b' after one giving any string
    anyString.pipe(fromFunction((s: 'a' | 'b') => s.length));
  });

  it('a failed fallback attempt leaves no intermediate results behind (C9)', async () => {
    const draft = createChain({
      model: new ScriptedModel([{ text: '{"draft": "from the failed attempt", "unsafe": true}' }]),
      responseFormat: { type: 'json_object' },
    });
    const check = (): string => {
      throw new Error('the draft is unsafe');
    };
    let seenByBackup: unknown;
    const backup = fromFunction((_: unknown, config) => {
      seenByBackup = config.intermediateResults?.current;
      return 'safe answer';
    });
    let seenAfter: unknown;
    const app = pipe(
      (q: string) => q,
      pipe(draft, check).withFallbacks([backup]),
      (answer: string, config) => {
        seenAfter = config.intermediateResults?.current;
        return answer;
      },
    );
    expect(await app.invoke('write a reply')).toBe('safe answer');
    expect(seenByBackup).toEqual({});
    expect(seenAfter).toEqual({});
  });

  it('a retry that succeeds keeps its own intermediate results', async () => {
    let attempts = 0;
    const flaky = createChain({
      model: new ScriptedModel(() => {
        attempts++;
        return attempts === 1
          ? { error: new Error('flaky provider') }
          : { text: '{"city": "Oslo"}' };
      }),
      responseFormat: { type: 'json_object' },
    });
    const seen = await pipe(
      runnable(flaky).withRetry({ maxAttempts: 2 }),
      (_, config) => config.intermediateResults?.current,
    ).invoke('q');
    expect(seen).toEqual({ city: 'Oslo' });
  });

  it('cancelling during a retry delay ends at once, also for a platform AbortError', async () => {
    const controller = new AbortController();
    const fetchLike = fromFunction(async (_: number, config) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (config.signal?.aborted)
        throw new DOMException('This operation was aborted', 'AbortError');
      throw new Error('503');
    });
    setTimeout(() => controller.abort(), 10);
    const started = performance.now();
    await expect(
      fetchLike
        .withRetry({ maxAttempts: 5, delayMs: 2_000 })
        .invoke(1, { signal: controller.signal }),
    ).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('batch works unbound, and a synchronous throw fails only its own input', async () => {
    const loop = createToolLoop({
      model: new ScriptedModel(() => ({ text: 'ok' })),
      tools: [],
    });
    const { batch } = loop;
    const results = await batch(['a', 'b']);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);

    const syncThrower = runnable({
      invoke: (n: number) => {
        if (n === 2) throw new Error('sync throw');
        return Promise.resolve(n);
      },
    });
    expect((await syncThrower.batch([1, 2, 3])).map((r) => r.status)).toEqual([
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
  });

  it("a stream's return() settles a pending next()", async () => {
    const never = fromFunction(() => new Promise<number>(() => {}));
    const iterator = never.stream(1)[Symbol.asyncIterator]();
    await iterator.next(); // run-start
    const pending = iterator.next();
    await iterator.return?.();
    await expect(pending).resolves.toEqual({ value: undefined, done: true });
  });

  it("a function step's own invoke of a chain streams into the outer stream", async () => {
    const chain = createChain({
      model: new ScriptedModel([{ text: 'Bonjour', chunks: ['Bon', 'jour'] }]),
    });
    const translate = runnable(chain, 'translate');
    const app = pipe(async (text: string, config) => (await translate.invoke(text, config)).result);
    const deltas: string[] = [];
    const runs: string[] = [];
    for await (const event of app.stream('hello')) {
      if (event.type === 'text-delta') deltas.push(event.delta);
      if (event.type === 'run-start') runs.push(event.run.kind);
    }
    expect(deltas).toEqual(['Bon', 'jour']);
    expect(runs).toEqual(['sequence', 'function', 'chain']);
  });

  it('stream() starts the run only when it is iterated', async () => {
    const started: string[] = [];
    const callbacks: RunCallbacks = { onStart: (run) => void started.push(run.name) };
    const stream = fromFunction((n: number) => n, 'lazy').stream(1, { callbacks });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(started).toEqual([]);
    for await (const _ of stream) {
      // drain
    }
    expect(started).toEqual(['lazy']);
  });

  it('memory goes after system messages given in the input, and saves none of them', async () => {
    const model = new ScriptedModel(() => ({ text: 'ok' }));
    const memory = new InMemoryChatMemory();
    const chat = withMemory(createChain({ model }), memory);
    const input = (question: string) => ({
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: question },
      ] satisfies Message[],
    });
    await chat.invoke(input('one'));
    await chat.invoke(input('two'));
    expect(model.requests[1]?.messages.toArray().map((m) => m.role)).toEqual([
      'system',
      'user',
      'assistant',
      'user',
    ]);
    expect(memory.messages().map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
  });
});
