// SPEC X4: a call still in flight when its run ends (the run aborted or timed out while a tool
// ran, or a model ignored the abort signal) ends with the run, cancelled, just before the
// run's end: every start observers hear has exactly one end, inside its run, and what the
// call reports afterwards is dropped. Tools here wait for the test to release them, so no
// assertion depends on timing.
import {
  AbortError,
  createChain,
  createToolLoop,
  defineTool,
  type LanguageModel,
  type ToolResult,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ObservedEvent, outcomeOf, recordingObserver } from './helpers.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A tool that runs until the test releases it; `finished` settles once it has returned. */
function heldTool() {
  const release = deferred();
  const started = deferred();
  const finished = deferred();
  const tool = defineTool({
    name: 'slow',
    description: 'Takes as long as the test says.',
    input: z.object({}),
    execute: async () => {
      started.resolve();
      await release.promise;
      finished.resolve();
      return 'late';
    },
  });
  return { tool, started: started.promise, release: release.resolve, finished: finished.promise };
}

const callsSlow = { toolCalls: [{ id: 'call_1', name: 'slow', arguments: {} }] };
const plansSlow = {
  text: JSON.stringify({
    nextAction: 'execute',
    executionCommands: [{ purpose: 'wait', toolName: 'slow', toolKwargs: {} }],
  }),
};

/** Each call start has exactly one end, and every event of the run comes before its end. */
function expectEveryCallEndedInsideItsRun(events: readonly ObservedEvent[]) {
  const hooks = events.map((e) => e.hook);
  expect(hooks.filter((h) => h === 'onRunEnd')).toHaveLength(1);
  expect(hooks.at(-1)).toBe('onRunEnd');
  for (const [start, end] of [
    ['onModelCallStart', 'onModelCallEnd'],
    ['onToolCallStart', 'onToolCallEnd'],
  ] as const) {
    const starts = events.filter((e) => e.hook === start).map((e) => e.call);
    const ends = events.filter((e) => e.hook === end).map((e) => e.call);
    expect(ends).toHaveLength(starts.length);
    for (const call of starts) expect(ends.filter((c) => c === call)).toHaveLength(1);
  }
}

/** The cancelled end of the tool call that was running when the run ended. */
function expectToolCancelled(events: readonly ObservedEvent[]) {
  const end = events.find((e) => e.hook === 'onToolCallEnd');
  const outcome = outcomeOf<{ result: ToolResult; error?: unknown }>(end);
  expect(outcome.result.success).toBe(false);
  expect(AbortError.isInstance(outcome.error)).toBe(true);
  expect((outcome.error as AbortError).code).toBe('ABORTED');
}

describe('calls in flight when their run ends', () => {
  it('a tool running when the run is aborted ends, cancelled, before the run', async () => {
    const { events, observer } = recordingObserver();
    const slow = heldTool();
    const chain = createChain({
      model: new ScriptedModel([callsSlow, { text: 'done' }]),
      tools: [slow.tool],
      name: 'aborted',
    });
    const controller = new AbortController();
    const run = chain.invoke('go', { observers: observer, signal: controller.signal });
    await slow.started;
    controller.abort();
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });
    slow.release();
    await slow.finished;
    await new Promise((resolve) => setImmediate(resolve));

    expectEveryCallEndedInsideItsRun(events);
    expectToolCancelled(events);
  });

  it("a tool running when the tool loop's timeout fires ends before the run", async () => {
    const { events, observer } = recordingObserver();
    const slow = heldTool();
    const loop = createToolLoop({
      model: new ScriptedModel([plansSlow]),
      tools: [slow.tool],
      name: 'timed',
      timeout: 20,
    });
    await expect(loop.invoke('go', { observers: observer })).rejects.toMatchObject({
      code: 'TIMEOUT',
    });
    slow.release();
    await slow.finished;
    await new Promise((resolve) => setImmediate(resolve));

    expectEveryCallEndedInsideItsRun(events);
    expectToolCancelled(events);
  });

  it("a tool running when a chain's maxExecutionTime is reached ends before the run", async () => {
    const { events, observer } = recordingObserver();
    const slow = heldTool();
    const chain = createChain({
      model: new ScriptedModel([callsSlow, { text: 'done' }]),
      tools: [slow.tool],
      name: 'limited',
      maxExecutionTime: 20,
    });
    await chain.invoke('go', { observers: observer }).catch(() => undefined);
    slow.release();
    await slow.finished;
    await new Promise((resolve) => setImmediate(resolve));

    expectEveryCallEndedInsideItsRun(events);
    expectToolCancelled(events);
  });

  it('a model call that ignores the abort signal ends, cancelled, before the run', async () => {
    const { events, observer } = recordingObserver();
    const called = deferred();
    // A provider that never answers and never looks at its signal.
    const model: LanguageModel = Object.assign(new ScriptedModel([{ text: 'never' }]), {
      generate: () => {
        called.resolve();
        return new Promise(() => {});
      },
    });
    const chain = createChain({ model, name: 'hanging' });
    const controller = new AbortController();
    const run = chain.invoke('go', { observers: observer, signal: controller.signal });
    await called.promise;
    controller.abort();
    await expect(run).rejects.toMatchObject({ code: 'ABORTED' });

    expectEveryCallEndedInsideItsRun(events);
    const end = outcomeOf<{ error: unknown }>(events.find((e) => e.hook === 'onModelCallEnd'));
    expect(AbortError.isInstance(end.error)).toBe(true);
  });
});
