// SPEC R5 (the tool-loop half): `loop.machine` composes into an application's own XState
// machine as an invoked child actor with typed input and output; and D1's `inspect` option
// sees every event of a run.
import {
  createToolLoop,
  defineTool,
  type Planner,
  type ToolLoopInput,
  type ToolLoopOutput,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { assign, createActor, type InspectionEvent, setup, toPromise } from 'xstate';
import { z } from 'zod';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: a diagram of states and transitions`,
});

function lookupPlanner(words: readonly string[]) {
  return vi.fn<Planner>((context) =>
    context.roundIndex === 0
      ? {
          nextAction: 'execute',
          executionCommands: words.map((word) => ({
            purpose: `Define ${word}`,
            toolName: 'lookup',
            toolKwargs: { word },
          })),
        }
      : { nextAction: 'response' },
  );
}

describe('the tool loop inside an application machine (R5)', () => {
  it('runs as an invoked child actor with typed input and output', async () => {
    const model = new ScriptedModel([{ text: 'A statechart is a diagram of states.' }]);
    const planner = lookupPlanner(['statechart']);
    const loop = createToolLoop({ model, planner, tools: [lookup] });
    expectTypeOf(loop.input('q')).toEqualTypeOf<ToolLoopInput>();

    const app = setup({
      types: {
        context: {} as {
          question: string;
          answer?: string;
          logs?: number;
          stopReason?: string;
          failed?: string;
        },
      },
      actors: { research: loop.machine },
    }).createMachine({
      context: { question: 'What is a statechart?' },
      initial: 'researching',
      states: {
        researching: {
          invoke: {
            src: 'research',
            input: ({ context }) => loop.input(context.question),
            onDone: {
              target: 'done',
              actions: assign(({ event }) => {
                expectTypeOf(event.output).toEqualTypeOf<ToolLoopOutput>();
                const output = event.output;
                if (output.status === 'failed') return { failed: output.failure.code };
                return {
                  answer: output.response?.text,
                  logs: output.toolLogs.length,
                  stopReason: output.stopReason,
                };
              }),
            },
          },
        },
        done: { type: 'final' },
      },
    });

    const actor = createActor(app).start();
    await toPromise(actor);

    expect(actor.getSnapshot().value).toBe('done');
    expect(actor.getSnapshot().context).toEqual({
      question: 'What is a statechart?',
      answer: 'A statechart is a diagram of states.',
      logs: 1,
      stopReason: 'response',
    });
    expect(planner.mock.calls[0]?.[0].userInput).toBe('What is a statechart?');
    model.assertComplete();
  });

  it('hands over the toolLogs and convergence in the output', async () => {
    const loop = createToolLoop({ planner: lookupPlanner(['actor', 'guard']), tools: [lookup] });
    let output: ToolLoopOutput | undefined;
    const app = setup({ actors: { research: loop.machine } }).createMachine({
      initial: 'researching',
      states: {
        researching: {
          invoke: {
            src: 'research',
            input: () => loop.input({ userInput: 'Define two words', extraRequirement: 'brief' }),
            onDone: {
              target: 'done',
              actions: ({ event }) => {
                output = event.output;
              },
            },
          },
        },
        done: { type: 'final' },
      },
    });
    await toPromise(createActor(app).start());

    if (output?.status !== 'done') throw new Error(`the loop did not finish: ${output?.status}`);
    expect(output.rounds).toBe(1);
    expect(output.toolLogs.map((r) => r.result)).toEqual([
      'actor: a diagram of states and transitions',
      'guard: a diagram of states and transitions',
    ]);
    expect(Object.keys(output.convergence?.actionResults ?? {})).toEqual([
      'Define actor',
      'Define guard',
    ]);
    // No model: the loop makes no final response.
    expect(output.response).toBeUndefined();
  });

  it('reports a failed loop as data in the output, which the app can branch on', async () => {
    const planner = vi.fn<Planner>(() => 'not a plan');
    const loop = createToolLoop({ planner, tools: [lookup], planRetries: 0 });
    const app = setup({
      types: { context: {} as { code: string } },
      actors: { research: loop.machine },
    }).createMachine({
      context: { code: '' },
      initial: 'researching',
      states: {
        researching: {
          invoke: {
            src: 'research',
            input: () => loop.input('go'),
            onDone: [
              {
                guard: ({ event }) => event.output.status === 'failed',
                target: 'gaveUp',
                actions: assign({
                  code: ({ event }) =>
                    event.output.status === 'failed' ? event.output.failure.code : '',
                }),
              },
              { target: 'done' },
            ],
          },
        },
        gaveUp: { type: 'final' },
        done: { type: 'final' },
      },
    });
    const actor = createActor(app).start();
    await toPromise(actor);
    expect(actor.getSnapshot().value).toBe('gaveUp');
    expect(actor.getSnapshot().context.code).toBe('PROTOCOL_ERROR');
    expect(planner).toHaveBeenCalledTimes(1);
  });

  it('stops the loop and its running tools when the app leaves the invoking state', async () => {
    const signals: AbortSignal[] = [];
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const hang = defineTool({
      name: 'hang',
      description: 'Never finishes on its own.',
      input: z.object({}),
      execute: (_args, { signal }) => {
        signals.push(signal);
        started();
        return new Promise((resolve) => signal.addEventListener('abort', resolve));
      },
    });
    const planner = vi.fn<Planner>(() => ({
      nextAction: 'execute',
      executionCommands: [{ toolName: 'hang', toolKwargs: {} }],
    }));
    const loop = createToolLoop({ planner, tools: [hang] });
    const app = setup({ actors: { research: loop.machine } }).createMachine({
      initial: 'researching',
      states: {
        researching: {
          invoke: { src: 'research', input: () => loop.input('go') },
          on: { CANCEL: 'cancelled' },
        },
        cancelled: { type: 'final' },
      },
    });
    const actor = createActor(app).start();
    await running;
    actor.send({ type: 'CANCEL' });
    expect(actor.getSnapshot().value).toBe('cancelled');
    expect(signals[0]?.aborted).toBe(true);
  });
});

describe('inspection (D1)', () => {
  it('the inspect option of invoke receives every event and snapshot of the run', async () => {
    const inspected: InspectionEvent[] = [];
    const loop = createToolLoop({ planner: lookupPlanner(['actor']), tools: [lookup] });

    await loop.invoke('What is an actor?', { inspect: (event) => inspected.push(event) });

    const eventTypes = inspected.flatMap((e) =>
      e.type === '@xstate.event' &&
      e.actorRef === inspected[0]?.actorRef &&
      !e.event.type.startsWith('xstate.init') &&
      !e.event.type.startsWith('xstate.after')
        ? [e.event.type]
        : [],
    );
    expect(eventTypes).toEqual(['plan.done', 'execute.record', 'execute.done', 'plan.done']);
    const values = inspected.flatMap((e) =>
      e.type === '@xstate.snapshot' && e.actorRef === inspected[0]?.actorRef
        ? [JSON.stringify((e.snapshot as { value?: unknown }).value)]
        : [],
    );
    expect(values).toContain(JSON.stringify({ running: 'planning' }));
    expect(values).toContain(JSON.stringify({ running: 'executing' }));
    expect(values.at(-1)).toBe(JSON.stringify('done'));
    // The effects host is visible as an actor of the run, and each request as an event to it.
    const actorIds = new Set(
      inspected.flatMap((e) =>
        e.type === '@xstate.actor' ? [(e.actorRef as unknown as { id: string }).id] : [],
      ),
    );
    expect(actorIds).toContain('effects');
    const requests = inspected.flatMap((e) =>
      e.type === '@xstate.event' && (e.actorRef as unknown as { id: string }).id === 'effects'
        ? [e.event.type]
        : [],
    );
    expect(requests).toEqual(['xstate.init', 'plan', 'execute', 'plan']);
  });

  it('the inspect option of stream receives events too', async () => {
    const seen: string[] = [];
    const loop = createToolLoop({ planner: lookupPlanner([]), tools: [lookup] });
    for await (const _event of loop.stream('hi', {
      inspect: (event) => {
        if (event.type === '@xstate.event') seen.push(event.event.type);
      },
    })) {
      // drain
    }
    expect(seen).toContain('plan.done');
  });
});
