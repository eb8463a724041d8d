// SPEC D1: `inspectRuns` registers an XState inspector for every chain and tool-loop run of
// the process (invoke, stream, batch, Runnables), besides a run's own `inspect` option. Only
// the public API is used.
import {
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  fromChain,
  sequence,
} from 'statecraft';
import { inspectRuns } from 'statecraft/observe';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { z } from 'zod';

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

function addingChain() {
  return createChain({
    model: new ScriptedModel([
      { toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'It is 3.' },
    ]),
    tools: [add],
    name: 'calculator',
  });
}

const unregister: (() => void)[] = [];
function inspectGlobally(...args: Parameters<typeof inspectRuns>): () => void {
  const off = inspectRuns(...args);
  unregister.push(off);
  return off;
}
afterEach(() => {
  for (const off of unregister.splice(0)) off();
  vi.restoreAllMocks();
});

/** The state values of the root actor's snapshots, each change once. */
function rootStates(events: readonly InspectionEvent[]): unknown[] {
  const values = events.flatMap((event) =>
    event.type === '@xstate.snapshot' && event.actorRef.sessionId === event.rootId
      ? [JSON.stringify((event.snapshot as { value?: unknown }).value)]
      : [],
  );
  return values.filter((value, i) => value !== values[i - 1]).map((value) => JSON.parse(value));
}

describe('inspectRuns', () => {
  it("delivers every chain run's inspection events, and stops once unregistered", async () => {
    const events: InspectionEvent[] = [];
    const off = inspectGlobally((event) => events.push(event));

    const result = await addingChain().invoke('What is 1 + 2?');

    expect(result.text).toBe('It is 3.');
    expect(rootStates(events)).toEqual([
      'thinking',
      'doing',
      'thinking',
      'validating',
      'succeeded',
    ]);
    // The chain actor's registration comes first, as an inspector needs it.
    expect(events[0]?.type).toBe('@xstate.actor');
    expect(events.some((event) => event.type === '@xstate.event')).toBe(true);

    off();
    off(); // twice is harmless
    const seen = events.length;
    await addingChain().invoke('What is 1 + 2?');
    expect(events).toHaveLength(seen);
  });

  it('reaches streamed, batched and tool-loop runs, and runs inside Runnables', async () => {
    const roots = new Set<string>();
    const values: unknown[] = [];
    inspectGlobally({
      next: (event) => {
        roots.add(event.rootId);
        if (event.type === '@xstate.snapshot') values.push(event.snapshot);
      },
    });

    for await (const _event of addingChain().stream('What is 1 + 2?')) {
      // drained
    }
    const echo = createChain({ model: new ScriptedModel(() => ({ text: 'ok' })), name: 'echo' });
    const batched = await echo.batch(['one', 'two']);
    expect(batched.map((settled) => settled.status)).toEqual(['fulfilled', 'fulfilled']);
    const loop = createToolLoop({
      planner: () => ({ nextAction: 'response' }),
      respond: () => 'Done.',
      name: 'loop',
    });
    await loop.invoke('Hi');
    await sequence(fromChain(addingChain())).invoke('What is 1 + 2?');

    // One actor system per run: 1 streamed + 2 batched + 1 loop + 1 chain in a sequence.
    expect(roots.size).toBe(5);
    expect(values.length).toBeGreaterThan(0);
  });

  it("adds to a run's own inspect; one passed both ways hears each event once", async () => {
    const global: InspectionEvent[] = [];
    const own: InspectionEvent[] = [];
    const both: InspectionEvent[] = [];
    const bothInspector = { next: (event: InspectionEvent) => both.push(event) };
    inspectGlobally((event) => global.push(event));
    inspectGlobally(bothInspector);

    await addingChain().invoke('What is 1 + 2?', { inspect: (event) => own.push(event) });
    await addingChain().invoke('What is 1 + 2?', { inspect: bothInspector });

    expect(own.length).toBeGreaterThan(0);
    expect(global.slice(0, own.length)).toEqual(own);
    expect(both).toEqual(global);
  });

  it('never fails a run: a throwing inspector is reported once on stderr', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const healthy: InspectionEvent[] = [];
    inspectGlobally(() => {
      throw new Error('inspector down');
    });
    inspectGlobally((event) => healthy.push(event));

    const result = await addingChain().invoke('What is 1 + 2?');

    expect(result.text).toBe('It is 3.');
    expect(rootStates(healthy).at(-1)).toBe('succeeded');
    expect(errors).toHaveBeenCalledTimes(1);
    expect(String(errors.mock.calls[0]?.[0])).toContain('inspectRuns');
  });

  it('rejects what is not an inspector with a ConfigError naming the option', () => {
    expect(() => inspectRuns(null as never)).toThrow(ConfigError);
    expect(() => inspectRuns(42 as never)).toThrow(
      /`inspect`: must be an XState inspection observer/,
    );
    expect(() => inspectRuns({ next: 'log' } as never)).toThrow(
      /`inspect.next`: must be a function/,
    );
  });
});
