// SPEC D1: every way of running a chain or a tool loop hands XState's `inspect` option to the
// run's actor system, so an inspector sees the run's machine and the actors it invokes.
import {
  createChain,
  createToolLoop,
  defineTool,
  pipe,
  type RunConfig,
  runnable,
  sequence,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import type { AnyActorRef, InspectionEvent } from 'xstate';
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
      { toolCalls: [{ name: 'add', arguments: { a: 2, b: 3 } }] },
      { text: 'The sum is 5.' },
    ]),
    tools: [add],
  });
}

function plannedLoop() {
  const plan = (nextAction: string, commands: object[] = []) => ({
    text: JSON.stringify({ nextAction, executionCommands: commands }),
  });
  const command = {
    purpose: 'add',
    toolName: 'add',
    toolKwargs: { a: 1, b: 1 },
    todoSuggestion: '',
  };
  return createToolLoop({
    model: new ScriptedModel([plan('execute', [command]), plan('response'), { text: '2' }]),
    tools: [add],
  });
}

/** Collects what an inspector would receive: the machines it saw, and their state values. */
function recorder() {
  const events: InspectionEvent[] = [];
  const inspect = (event: InspectionEvent) => {
    events.push(event);
  };
  const actorIds = () =>
    events.filter((e) => e.type === '@xstate.actor').map((e) => (e.actorRef as AnyActorRef).id);
  const states = (machineId: string) =>
    events
      .filter((e) => e.type === '@xstate.snapshot')
      .filter((e) => ((e.actorRef as AnyActorRef).src as { id?: string }).id === machineId)
      .map((e) => JSON.stringify((e.snapshot as { value?: unknown }).value));
  return { events, inspect, actorIds, states };
}

describe('the inspect option (SPEC D1)', () => {
  it('chain.invoke: the chain machine, its effects actor, and each state of the run', async () => {
    const seen = recorder();
    await addingChain().invoke('2 + 3?', { inspect: seen.inspect });
    // XState's inspection is system-wide: the invoked effects actor is reported too.
    expect(seen.actorIds()).toContain('effects');
    expect(seen.states('chain')).toEqual(
      expect.arrayContaining(['"thinking"', '"doing"', '"validating"', '"succeeded"']),
    );
    const sent = seen.events.filter((e) => e.type === '@xstate.event').map((e) => e.event.type);
    expect(sent).toEqual(expect.arrayContaining(['callModel.done', 'executeTools.done']));
  });

  it('chain.stream', async () => {
    const seen = recorder();
    for await (const _ of addingChain().stream('2 + 3?', { inspect: seen.inspect })) {
      // drained
    }
    expect(seen.states('chain')).toEqual(expect.arrayContaining(['"doing"', '"succeeded"']));
  });

  it('chain.batch: every input of the batch', async () => {
    const seen = recorder();
    const chain = createChain({ model: new ScriptedModel(() => ({ text: 'ok' })) });
    await chain.batch(['a', 'b', 'c'], { inspect: seen.inspect });
    // One actor system per input: each has its own root, the chain machine.
    const roots = seen.events
      .filter((e) => e.type === '@xstate.actor' && e.actorRef.sessionId === e.rootId)
      .map((e) => e.rootId);
    expect(new Set(roots).size).toBe(3);
  });

  it('tool loops: invoke, through their compound states', async () => {
    const seen = recorder();
    await plannedLoop().invoke('1 + 1?', { inspect: seen.inspect });
    expect(seen.states('toolLoop')).toEqual(
      expect.arrayContaining(['{"running":"executing"}', '"done"']),
    );
  });

  it('Runnable composition: pipe, sequence, a function step handing its config on', async () => {
    const seen = recorder();
    const chain = addingChain();
    const loop = plannedLoop();
    const app = pipe(
      (question: string) => question,
      chain,
      (result) => result.text,
      // A plain function step calls the tool loop itself, with the config it was given.
      (text: string, config: RunConfig) => loop.invoke(text, config),
    );
    await app.invoke('2 + 3?', { inspect: seen.inspect });
    expect(seen.states('chain')).toContain('"succeeded"');
    expect(seen.states('toolLoop')).toContain('"done"');

    const streamed = recorder();
    const twice = sequence(runnable(plannedLoop()), (result) => result.answer);
    for await (const _ of twice.stream('1 + 1?', { inspect: streamed.inspect })) {
      // drained
    }
    expect(streamed.states('toolLoop')).toContain('"done"');

    const batched = recorder();
    await runnable(addingChain()).batch(['2 + 3?'], { inspect: batched.inspect });
    expect(batched.states('chain')).toContain('"succeeded"');
  });
});
