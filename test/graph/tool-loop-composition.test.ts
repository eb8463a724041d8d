// SPEC D2 + R5: generatePathTests on an app machine that invokes OUR tool loop as a child.
// The child's outcomes in the paths are real: outputs of the same loop run with a
// ScriptedModel. The replay replaces the child (by its src) with a scripted one and checks
// the app passes the loop the input loop.input() builds.
import { createToolLoop, defineTool, type ToolLoopOutput } from 'statecraft';
import { generatePathTests, ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { assign, createActor, setup, toPromise } from 'xstate';
import { z } from 'zod';

const capital = defineTool({
  name: 'capital',
  description: 'The capital of a country.',
  input: z.object({ country: z.string() }),
  execute: ({ country }) => (country === 'France' ? 'Paris' : 'unknown'),
});

const QUESTION = 'What is the capital of France?';

function loopWith(model: ScriptedModel) {
  return createToolLoop({ model, tools: [capital], planRetries: 0 });
}

/** Runs the real loop machine to its output, as the app's child would. */
async function outputOf(model: ScriptedModel): Promise<ToolLoopOutput> {
  const loop = loopWith(model);
  const output = await toPromise(
    createActor(loop.machine, { input: loop.input(QUESTION) }).start(),
  );
  model.assertComplete();
  return output;
}

const answered = await outputOf(
  new ScriptedModel([
    {
      text: JSON.stringify({
        nextAction: 'execute',
        executionCommands: [
          { purpose: 'Find the capital', toolName: 'capital', toolKwargs: { country: 'France' } },
        ],
      }),
    },
    { text: JSON.stringify({ nextAction: 'response' }) },
    { text: 'Paris.' },
  ]),
);
const gaveUp = await outputOf(new ScriptedModel([{ text: 'I would rather chat.' }]));

// The app: research with the loop, then a human publishes or discards the answer.
const loop = loopWith(new ScriptedModel([]));
const app = setup({
  types: {
    context: {} as { answer?: string; failure?: string; crash?: string },
    events: {} as { type: 'PUBLISH' } | { type: 'DISCARD' },
  },
  actors: { research: loop.machine },
  guards: { answered: (_, params: { output: ToolLoopOutput }) => params.output.status === 'done' },
}).createMachine({
  id: 'app',
  context: {},
  initial: 'researching',
  states: {
    researching: {
      invoke: {
        id: 'research',
        src: 'research',
        input: () => loop.input(QUESTION),
        onDone: [
          {
            guard: { type: 'answered', params: ({ event }) => ({ output: event.output }) },
            target: 'reviewing',
            actions: assign({
              answer: ({ event }) =>
                event.output.status === 'done' ? event.output.response?.text : undefined,
            }),
          },
          {
            target: 'gaveUp',
            actions: assign({
              failure: ({ event }) =>
                event.output.status === 'failed' ? event.output.failure.code : undefined,
            }),
          },
        ],
        onError: {
          target: 'crashed',
          actions: assign({ crash: ({ event }) => String((event.error as Error).message) }),
        },
      },
    },
    reviewing: { on: { PUBLISH: 'published', DISCARD: 'discarded' } },
    published: { type: 'final' },
    discarded: { type: 'final' },
    gaveUp: { type: 'final' },
    crashed: { type: 'final' },
  },
});

const suite = generatePathTests(app, {
  events: (s) => (s.matches('reviewing') ? [{ type: 'PUBLISH' }, { type: 'DISCARD' }] : []),
  actors: { research: { outputs: [answered, gaveUp], errors: [new Error('loop crashed')] } },
});

describe('generatePathTests on an app that invokes the tool loop', () => {
  it('has real loop outputs to branch on', () => {
    expect(answered).toMatchObject({ status: 'done', rounds: 1, stopReason: 'response' });
    expect(answered.status === 'done' && answered.response?.text).toBe('Paris.');
    expect(gaveUp).toMatchObject({ status: 'failed', failure: { code: 'PROTOCOL_ERROR' } });
  });

  it('generates the paths through the app', () => {
    expect(suite.paths.map((p) => p.name)).toEqual([
      'research:done#0 → DISCARD ⇒ discarded',
      'research:done#0 → PUBLISH ⇒ published',
      'research:done#1 ⇒ gaveUp',
      'research:error#0 ⇒ crashed',
    ]);
    expect(suite.coverage.states.missing).toEqual([]);
    expect(suite.coverage.transitions.missing).toEqual([]);
  });

  for (const path of suite.paths) {
    it(`replays ${path.name}, handing the loop the input loop.input() builds`, async () => {
      const replay = await path.run();
      expect(replay.calls).toEqual([
        {
          id: 'research',
          src: 'research',
          input: loop.input(QUESTION),
          outcome: path.name.startsWith('research:error') ? 'error' : 'output',
        },
      ]);
    });
  }

  it('fails the replay when the app mistakes a failed loop for an answer', async () => {
    const careless = app.provide({ guards: { answered: () => true } });
    const path = suite.paths.find((p) => p.name === 'research:done#1 ⇒ gaveUp');
    await expect(path?.run({ machine: careless })).rejects.toThrow(
      /step 1 \(research:done#1\): the state value differs\n {2}expected: "gaveUp"\n {2}actual: {3}"reviewing"/,
    );
  });
});
