// SPEC X4: how observers are registered and which runs they hear of. An observer registered
// twice hears each event once; the observers of a tree of runs are fixed when its top-level
// run starts; `parentRunId` is checked the same whether or not anyone observes; and
// observers hear of a Runnable run's end only once its callbacks have decided it.
import {
  ConfigError,
  createChain,
  fromFunction,
  fromModel,
  type ObservedRun,
  type RunObserver,
  sequence,
} from 'statecraft';
import { observeRuns } from 'statecraft/observe';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { outcomeOf, recordingObserver } from './helpers.js';

const unregister: (() => void)[] = [];
function observeGlobally(observer: RunObserver): () => void {
  const off = observeRuns(observer);
  unregister.push(off);
  return off;
}
afterEach(() => {
  for (const off of unregister.splice(0)) off();
});

const answering = (name: string) =>
  createChain({ model: new ScriptedModel([{ text: `${name} answered` }]), name });

describe('observeRuns with an observer already registered', () => {
  it('registers it once: each event is heard once, and either unregister removes it', async () => {
    const { observer, lines } = recordingObserver();
    const first = observeGlobally(observer);
    const second = observeGlobally(observer);
    await answering('twice').invoke('hi');
    expect(lines()).toEqual([
      'chain:twice start',
      'chain:twice state thinking',
      'chain:twice model #1 generation 1 start',
      'chain:twice model #1 generation 1 end',
      'chain:twice state validating',
      'chain:twice state succeeded',
      'chain:twice end',
    ]);

    second();
    const heard = lines().length;
    await answering('after').invoke('hi');
    expect(lines()).toHaveLength(heard);
    first(); // already unregistered: harmless
  });

  it('an observer given per run and twice in the list hears each event once', async () => {
    const { observer, lines } = recordingObserver();
    observeGlobally(observer);
    await answering('listed').invoke('hi', { observers: [observer, observer] });
    expect(lines().filter((line) => line.endsWith(' start'))).toEqual([
      'chain:listed start',
      'chain:listed model #1 generation 1 start',
    ]);
  });
});

describe('the observers of a tree of runs', () => {
  it('are fixed when the top-level run starts: one registered mid-sequence hears none of it', async () => {
    const late = recordingObserver();
    const steps = sequence(
      fromFunction((input: string) => {
        observeGlobally(late.observer);
        return input;
      }, 'register'),
      fromFunction((input: string) => input, 'plain'),
      answering('agent'),
    );
    await steps.invoke('hi');
    // Before the fix, the Runnable step and the chain after it were reported, with a parent
    // (the sequence) the observer never heard of.
    expect(late.lines()).toEqual([]);

    await answering('next').invoke('hi');
    expect(late.lines()[0]).toBe('chain:next start');
  });

  it('holds for a model step too: one registered mid-sequence hears none of it', async () => {
    const late = recordingObserver();
    const steps = sequence(
      fromFunction((input: string) => {
        observeGlobally(late.observer);
        return input;
      }, 'register'),
      fromModel(new ScriptedModel([{ text: 'model answered' }]), {}, 'model step'),
    );
    await steps.invoke('hi');
    expect(late.lines()).toEqual([]);
  });

  it('one unregistered mid-sequence hears the whole tree, every run ended', async () => {
    const { observer, events } = recordingObserver();
    const off = observeGlobally(observer);
    const steps = sequence(
      fromFunction((input: string) => {
        off();
        return input;
      }, 'unregister'),
      fromFunction((input: string) => input, 'plain'),
      answering('agent'),
    );
    await steps.invoke('hi');
    const starts = events.filter((e) => e.hook === 'onRunStart').map((e) => e.run);
    expect(starts.map((run) => `${run.kind}:${run.name}`)).toEqual([
      'sequence:unregister | plain | agent',
      'function:unregister',
      'function:plain',
      'chain:agent',
    ]);
    const [outer, ...children] = starts as [ObservedRun, ...ObservedRun[]];
    for (const child of children) expect(child.parentRunId).toBe(outer.runId);
    expect(events.filter((e) => e.hook === 'onRunEnd')).toHaveLength(4);
  });

  it('a chain a function step invokes with its config keeps to the tree', async () => {
    const late = recordingObserver();
    const step = fromFunction(async (input: string, config) => {
      observeGlobally(late.observer);
      return (await answering('inner').invoke(input, config)).text;
    }, 'wrapper');
    await step.invoke('hi');
    expect(late.lines()).toEqual([]);
  });
});

describe('parentRunId on a chain run', () => {
  it('is checked whether or not anyone observes: a ConfigError naming it', async () => {
    const bad = { parentRunId: null as unknown as string };
    const unobserved = await answering('plain')
      .invoke('hi', bad)
      .catch((error) => error);
    expect(ConfigError.isInstance(unobserved)).toBe(true);
    expect((unobserved as ConfigError).option).toBe('parentRunId');

    const observed = await answering('observed')
      .invoke('hi', { ...bad, observers: recordingObserver().observer })
      .catch((error) => error);
    expect(ConfigError.isInstance(observed)).toBe(true);
    expect((observed as ConfigError).option).toBe('parentRunId');
  });

  it('a valid one is accepted either way', async () => {
    const { observer, events } = recordingObserver();
    await answering('plain').invoke('hi', { parentRunId: 'outer-run' });
    await answering('observed').invoke('hi', { parentRunId: 'outer-run', observers: observer });
    expect(events[0]?.run.parentRunId).toBe('outer-run');
  });
});

describe('a Runnable run whose onEnd callback throws', () => {
  it('is reported to observers as failed, with the callback error, after the callback ran', async () => {
    const order: string[] = [];
    const { observer, events } = recordingObserver();
    const tracking: RunObserver = {
      onRunEnd: (_run, outcome) =>
        order.push('error' in outcome ? 'observer: failed' : 'observer: ok'),
    };
    const step = fromFunction((input: string) => input, 'step');
    const broken = new Error('logger down');
    const caught = await step
      .invoke('hi', {
        observers: [observer, tracking],
        callbacks: {
          onEnd: () => {
            order.push('onEnd');
            throw broken;
          },
        },
      })
      .catch((error) => error);

    expect(caught).toBe(broken);
    expect(order).toEqual(['onEnd', 'observer: failed']);
    const end = events.find((e) => e.hook === 'onRunEnd');
    expect(outcomeOf<{ error: unknown }>(end).error).toBe(broken);
  });

  it('is reported as succeeded after its onEnd callbacks when they pass', async () => {
    const order: string[] = [];
    const tracking: RunObserver = { onRunEnd: () => void order.push('observer') };
    await fromFunction((input: string) => input, 'step').invoke('hi', {
      observers: tracking,
      callbacks: { onEnd: () => void order.push('onEnd') },
    });
    expect(order).toEqual(['onEnd', 'observer']);
  });
});
