// The viewer's memory of runs: what each observer hook becomes, what a late page is replayed,
// and what is forgotten so a viewer left open stays small.
import type { ObservedRun, ObservedToolCall, RunObserver } from 'statecraft';
import { createChain, createToolLoop, fromFunction, pipe } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { RunFeed } from '../../src/viewer/run-feed.js';
import type { ViewerEvent } from '../../src/viewer/viewer-events.js';

const eventsOf = (feed: RunFeed) => feed.history().map((entry) => entry.event);
const ofType = <T extends ViewerEvent['type']>(events: readonly ViewerEvent[], type: T) =>
  events.filter((e): e is Extract<ViewerEvent, { type: T }> => e.type === type);

function echoChain(name = 'echo') {
  return createChain({ name, model: new ScriptedModel(() => ({ text: 'ok' })) });
}

describe('RunFeed', () => {
  it('sends a machine’s diagram once, however many of its runs start', async () => {
    const feed = new RunFeed();
    await echoChain().batch(['a', 'b', 'c'], { observers: feed.observer });
    const events = eventsOf(feed);
    expect(ofType(events, 'diagram')).toHaveLength(1);
    const starts = ofType(events, 'run-start');
    expect(starts).toHaveLength(3);
    expect(new Set(starts.map((s) => s.diagramId))).toEqual(new Set(['d1']));
    expect(ofType(events, 'run-end').map((e) => e.status)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
    ]);
  });

  it('keeps the tree of runs: a chain inside a sequence names the sequence as its parent', async () => {
    const feed = new RunFeed();
    const app = pipe(
      fromFunction((text: string) => text.toUpperCase(), 'shout'),
      echoChain('answer'),
    );
    await app.invoke('hi', { observers: feed.observer });
    const starts = ofType(eventsOf(feed), 'run-start');
    const root = starts.find((s) => s.kind === 'sequence');
    const chain = starts.find((s) => s.name === 'answer');
    expect(root?.parentRunId).toBeUndefined();
    expect(chain?.parentRunId).toBe(root?.runId);
    expect(chain?.diagramId).toBeDefined();
    expect(starts.find((s) => s.name === 'shout')?.diagramId).toBeUndefined();
  });

  it('announces a run first heard of mid-run (an observer registered late)', () => {
    const feed = new RunFeed();
    const run: ObservedRun = {
      runId: 'r1',
      parentRunId: undefined,
      name: 'late',
      kind: 'chain',
      startTime: 1000,
    };
    feed.observer.onState?.(run, 'doing', {});
    expect(eventsOf(feed)).toEqual([
      {
        type: 'run-start',
        runId: 'r1',
        parentRunId: undefined,
        name: 'late',
        kind: 'chain',
        startTime: 1000,
      },
      // No machine, no node ids: nothing on a diagram to light up.
      expect.objectContaining({ type: 'state', runId: 'r1', value: 'doing', nodeIds: [] }),
    ]);
  });

  it('matches a tool call’s end to its start, and cuts long previews', () => {
    const feed = new RunFeed();
    const observer = feed.observer as Required<RunObserver>;
    const run: ObservedRun = {
      runId: 'r1',
      parentRunId: undefined,
      name: 'tools',
      kind: 'chain',
      startTime: 0,
    };
    const call = (id: string): ObservedToolCall => ({
      call: { id, name: 'read', arguments: { text: 'x'.repeat(500) } },
      executor: 'local',
      startTime: 1,
    });
    // Two calls with the same id (providers may reuse ids): keys tell them apart.
    const first = call('same');
    const second = call('same');
    observer.onToolCallStart(run, first);
    observer.onToolCallStart(run, second);
    const result = { toolCallId: 'same', name: 'read', output: 'y'.repeat(500), success: true };
    observer.onToolCallEnd(run, second, { result, endTime: 5 });
    observer.onToolCallEnd(run, first, {
      result: { ...result, output: null, success: false, error: 'disk full' },
      endTime: 7,
    });
    // An end whose start was never seen has no row to end.
    observer.onToolCallEnd(run, call('other'), { result, endTime: 8 });

    const events = eventsOf(feed);
    const starts = ofType(events, 'tool-call-start');
    expect(starts.map((s) => s.key)).toEqual([1, 2]);
    expect(starts[0]?.arguments).toHaveLength(160);
    expect(starts[0]?.arguments.endsWith('…')).toBe(true);
    expect(ofType(events, 'tool-call-end')).toEqual([
      expect.objectContaining({ key: 2, ok: true, endTime: 5, preview: `${'y'.repeat(159)}…` }),
      expect.objectContaining({ key: 1, ok: false, endTime: 7, preview: 'disk full' }),
    ]);
  });

  it('a model call that failed carries its error; one that answered, its usage', () => {
    const feed = new RunFeed();
    const observer = feed.observer as Required<RunObserver>;
    const run: ObservedRun = {
      runId: 'r',
      parentRunId: undefined,
      name: 'm',
      kind: 'chain',
      startTime: 0,
    };
    const call = {
      index: 1,
      purpose: 'generation 1',
      request: { messages: [] } as never,
      model: { provider: 'p', modelId: 'm' },
      streamed: false,
      startTime: 1,
    };
    observer.onModelCallEnd(run, call, { error: new TypeError('boom'), endTime: 2 });
    expect(ofType(eventsOf(feed), 'model-call-end')).toEqual([
      { type: 'model-call-end', runId: 'r', index: 1, endTime: 2, error: 'TypeError: boom' },
    ]);
  });

  it('sends one diagram for the many machines that draw the same (a chain each)', async () => {
    const feed = new RunFeed();
    // Every createChain makes a machine of its own (its actors provided): the same drawing.
    for (const input of ['a', 'b', 'c', 'd']) {
      await echoChain().invoke(input, { observers: feed.observer });
    }
    const events = eventsOf(feed);
    expect(ofType(events, 'diagram')).toHaveLength(1);
    expect(new Set(ofType(events, 'run-start').map((s) => s.diagramId))).toEqual(new Set(['d1']));
  });

  it('keeps only the diagrams its kept runs draw, however many runs it has seen', async () => {
    const feed = new RunFeed({ keepRuns: 5 });
    for (let i = 0; i < 60; i++) {
      await echoChain().invoke(String(i), { observers: feed.observer });
    }
    expect(ofType(eventsOf(feed), 'diagram')).toHaveLength(1);
    expect(ofType(eventsOf(feed), 'run-start')).toHaveLength(5);

    // A tool loop draws another diagram; once its run is forgotten, so is its diagram.
    const loop = createToolLoop({ model: new ScriptedModel(() => ({ text: 'done' })), tools: [] });
    await loop.invoke('x', { observers: feed.observer });
    expect(ofType(eventsOf(feed), 'diagram')).toHaveLength(2);
    for (let i = 0; i < 5; i++) {
      await echoChain().invoke(String(i), { observers: feed.observer });
    }
    const events = eventsOf(feed);
    const diagrams = ofType(events, 'diagram');
    expect(diagrams).toHaveLength(1);
    expect(new Set(ofType(events, 'run-start').map((s) => s.diagramId))).toEqual(
      new Set([diagrams[0]?.diagramId]),
    );
    // Drawn again when a run of it comes back: a page that connects then gets it.
    await loop.invoke('y', { observers: feed.observer });
    const again = ofType(eventsOf(feed), 'diagram');
    expect(again).toHaveLength(2);
    const loopStart = ofType(eventsOf(feed), 'run-start').at(-1);
    expect(again.map((d) => d.diagramId)).toContain(loopStart?.diagramId);
  });

  it('forgets the oldest finished runs beyond keepRuns, but not a diagram kept runs draw', async () => {
    const feed = new RunFeed({ keepRuns: 2 });
    const chain = echoChain();
    const runIds: string[] = [];
    const spy: RunObserver = { onRunStart: (run) => void runIds.push(run.runId) };
    for (const input of ['a', 'b', 'c']) {
      await chain.invoke(input, { observers: [feed.observer, spy] });
    }
    const events = eventsOf(feed);
    const kept = new Set(events.flatMap((e) => (e.type === 'diagram' ? [] : [e.runId])));
    expect(kept).toEqual(new Set(runIds.slice(1)));
    expect(ofType(events, 'diagram')).toHaveLength(1);
    // What a late page needs is still whole: each kept run from its start to its end.
    for (const runId of kept) {
      const own = events.filter((e) => e.type !== 'diagram' && e.runId === runId);
      expect(own[0]?.type).toBe('run-start');
      expect(own.at(-1)?.type).toBe('run-end');
    }
  });

  it('history(afterSeq) is what a reconnecting page missed; subscribers get what comes next', async () => {
    const feed = new RunFeed();
    const live: number[] = [];
    const unsubscribe = feed.subscribe((entry) => live.push(entry.seq));
    await echoChain().invoke('a', { observers: feed.observer });
    unsubscribe();
    const all = feed.history();
    expect(live).toEqual(all.map((e) => e.seq));
    expect(feed.history(2).map((e) => e.seq)).toEqual(all.slice(2).map((e) => e.seq));
    await echoChain().invoke('b', { observers: feed.observer });
    expect(live).toHaveLength(all.length); // unsubscribed: told nothing more
  });

  it('keepRuns must be a positive integer', () => {
    expect(() => new RunFeed({ keepRuns: 0 })).toThrow(/keepRuns must be a positive integer/);
  });
});
