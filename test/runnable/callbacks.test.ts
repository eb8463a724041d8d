// SPEC R3: start / end / error callbacks around every run, with run ids and parent ids that
// form the tree of nested runs; the error callback has finished before the error is rethrown.
import {
  createChain,
  fromFunction,
  parallel,
  pipe,
  type RunCallbacks,
  type RunInfo,
  runnable,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';

interface Entry {
  readonly event: 'start' | 'end' | 'error';
  readonly run: RunInfo;
  readonly value: unknown;
}

function recorder() {
  const entries: Entry[] = [];
  const callbacks: RunCallbacks = {
    onStart: (run, input) => {
      entries.push({ event: 'start', run, value: input });
    },
    onEnd: (run, output) => {
      entries.push({ event: 'end', run, value: output });
    },
    onError: (run, error) => {
      entries.push({ event: 'error', run, value: error });
    },
  };
  /** `kind:name` of each run, indented under its parent, in start order. */
  const tree = () => {
    const starts = entries.filter((e) => e.event === 'start').map((e) => e.run);
    const depth = (run: RunInfo): number => {
      const parent = starts.find((r) => r.runId === run.parentRunId);
      return parent ? depth(parent) + 1 : 0;
    };
    return starts.map((run) => `${'  '.repeat(depth(run))}${run.kind}:${run.name}`);
  };
  return { entries, callbacks, tree };
}

describe('callbacks around every run (R3)', () => {
  it('report a tree of runs: a sequence, its steps, and the runs a step starts itself', async () => {
    const { entries, callbacks, tree } = recorder();
    const chain = createChain({ model: new ScriptedModel([{ text: 'Bonjour' }]) });
    const translate = runnable(chain, 'translate');
    const app = pipe(
      fromFunction((name: string) => `Say hello to ${name}`, 'prompt'),
      // A function step that starts runs of its own hands its config on: they become its children.
      fromFunction(async (prompt: string, config) => {
        const reply = await translate.invoke(prompt, config);
        return reply.result.toUpperCase();
      }, 'shout'),
      parallel({ same: (s: string) => s, length: (s: string) => s.length }),
    );
    const output = await app.invoke('Ana', { callbacks });
    expect(output).toEqual({ same: 'BONJOUR', length: 7 });
    expect(tree()).toEqual([
      'sequence:prompt | shout | parallel(same, length)',
      '  function:prompt',
      '  function:shout',
      '    chain:translate',
      '  parallel:parallel(same, length)',
      '    function:same',
      '    function:length',
    ]);
    // Every run that started ended, with its own output; ids are unique.
    const starts = entries.filter((e) => e.event === 'start');
    const ends = entries.filter((e) => e.event === 'end');
    expect(new Set(starts.map((e) => e.run.runId)).size).toBe(starts.length);
    expect(ends.map((e) => e.run.runId).sort()).toEqual(starts.map((e) => e.run.runId).sort());
    expect(starts[0]?.run.parentRunId).toBeUndefined();
    expect(starts[0]?.value).toBe('Ana');
    expect(ends.at(-1)?.value).toEqual(output);
    expect(ends.find((e) => e.run.kind === 'chain')?.value).toMatchObject({ result: 'Bonjour' });
  });

  it('fire the error callbacks, innermost first, before the error reaches the caller', async () => {
    const order: string[] = [];
    const failing = fromFunction(() => {
      throw new Error('step failed');
    }, 'failing');
    const callbacks: RunCallbacks = {
      onError: async (run, error) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(`onError ${run.name}: ${(error as Error).message}`);
      },
    };
    await pipe(
      fromFunction((n: number) => n, 'ok'),
      failing,
    )
      .invoke(1, { callbacks })
      .catch((error: Error) => order.push(`caught: ${error.message}`));
    expect(order).toEqual([
      'onError failing: step failed',
      'onError ok | failing: step failed',
      'caught: step failed',
    ]);
  });

  it('a chain that fails reports its typed error to onError', async () => {
    const { entries, callbacks } = recorder();
    const chain = createChain({
      model: new ScriptedModel([{ toolCalls: [{ name: 'missing' }] }]),
      maxIterations: 1,
    });
    await expect(runnable(chain).invoke('hi', { callbacks })).rejects.toThrow(/maxIterations/);
    const error = entries.find((e) => e.event === 'error');
    expect(error?.run.kind).toBe('chain');
    expect((error?.value as { code?: string } | undefined)?.code).toBe('PROTOCOL_ERROR');
  });

  it('take several handlers, a run name, and a parent id from the caller', async () => {
    const a = recorder();
    const b = recorder();
    await fromFunction((n: number) => n, 'echo').invoke(1, {
      callbacks: [a.callbacks, b.callbacks],
      runName: 'renamed',
      parentRunId: 'outer-run',
    });
    for (const { entries } of [a, b]) {
      expect(entries.map((e) => `${e.event} ${e.run.name} ${e.run.parentRunId}`)).toEqual([
        'start renamed outer-run',
        'end renamed outer-run',
      ]);
    }
  });

  it('streams fire the same callbacks as invoke', async () => {
    const { entries, callbacks } = recorder();
    for await (const _ of pipe(fromFunction((n: number) => n + 1, 'inc')).stream(1, {
      callbacks,
    })) {
      // drain
    }
    expect(entries.map((e) => `${e.event} ${e.run.kind}`)).toEqual([
      'start sequence',
      'start function',
      'end function',
      'end sequence',
    ]);
  });

  it('a callback that throws fails the run, so a broken handler is seen', async () => {
    const callbacks: RunCallbacks = {
      onStart: () => {
        throw new Error('logger is down');
      },
    };
    await expect(fromFunction((n: number) => n).invoke(1, { callbacks })).rejects.toThrow(
      'logger is down',
    );
  });
});
