// SPEC Q4 for a run's options, as for a factory's: every way into a chain's or tool loop's run
// (invoke, stream, batch, resume, durable, planOnly) refuses unknown keys, naming the nearest
// known one, and values of the wrong type, every problem in one ConfigError, before anything
// runs. Before issue 13 (defect 12) `invoke(q, { runID })`, a typo, silently ran a plain run
// that was not durable.
import {
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  fromFunction,
  memoryStore,
  type RunCallbacks,
  runnable,
  sequence,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { thrownBy } from '../support/errors.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: z.object({ word: z.string() }),
  execute: ({ word }) => `${word}: found`,
});

/** A chain whose model answers at once, and the calls it was asked to make. */
function chain(answers = 5) {
  const model = new ScriptedModel(Array.from({ length: answers }, () => ({ text: 'ok' })));
  return { chain: createChain({ model, name: 'helper', tools: [lookup] }), model };
}

function loop() {
  let planned = 0;
  const toolLoop = createToolLoop({
    name: 'survey',
    planner: () => {
      planned++;
      return { nextAction: 'response' };
    },
    tools: [lookup],
    respond: false,
  });
  return { loop: toolLoop, planned: () => planned };
}

/** The ConfigError a promise rejects with; fails the test otherwise. */
async function rejectionOf(promise: Promise<unknown>): Promise<ConfigError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!ConfigError.isInstance(error)) throw new Error(`expected a ConfigError, got ${error}`);
  return error;
}

const optionsOf = (error: ConfigError) => error.problems.map((p) => p.option);

describe("a chain's run options", () => {
  it('refuses a misspelled option, naming the nearest known one, and runs nothing', async () => {
    const { chain: helper, model } = chain();
    const store = memoryStore();
    const error = await rejectionOf(helper.invoke('hi', { runID: 'r1', store } as never));
    expect(error.message).toContain(
      "`runID`: is not an option of invoke() of chain 'helper'; did you mean `runId`?",
    );
    // The store without its id is a problem of its own, in the same error.
    expect(optionsOf(error)).toEqual(['runID', 'runId']);
    expect(model.callCount).toBe(0);
    expect(await store.list()).toEqual([]);
  });

  it('reports every bad option at once, with the type each needs', async () => {
    const { chain: helper } = chain();
    const error = await rejectionOf(
      helper.invoke('hi', {
        signl: new AbortController().signal,
        signal: 'stop',
        inspect: 5,
        observers: { onRunStart: 'yes' },
        parentRunId: 7,
        beforeToolCall: 'log',
        approve: true,
        parkForApproval: 'yes',
      } as never),
    );
    expect(optionsOf(error)).toEqual([
      'signl',
      'signal',
      'inspect',
      'observers.onRunStart',
      'parentRunId',
      'beforeToolCall',
      'approve',
      'parkForApproval',
    ]);
    expect(error.message).toContain("8 invalid options for invoke() of chain 'helper'");
    expect(error.message).toContain('`signl`: is not an option of');
    expect(error.message).toContain('did you mean `signal`?');
    expect(error.message).toContain('`signal`: must be an AbortSignal');
    expect(error.message).toContain('`approve`: must be a function; got a boolean');
    expect(error.message).toContain('`parkForApproval`: must be true or false; got a string');
  });

  it('refuses a non-object, and parkForApproval without a journal', async () => {
    const { chain: helper } = chain();
    expect(optionsOf(await rejectionOf(helper.invoke('hi', 'fast' as never)))).toEqual(['options']);
    const parked = await rejectionOf(helper.invoke('hi', { parkForApproval: true }));
    expect(parked.message).toMatch(/`parkForApproval`: a run parks in its journal/);
  });

  it('stream() throws at once; batch() checks concurrency with the rest', async () => {
    const { chain: helper, model } = chain();
    const streamed = thrownBy(ConfigError, () => helper.stream('hi', { sotre: 1 } as never));
    expect(streamed.message).toContain('did you mean `store`?');
    const batched = await rejectionOf(
      helper.batch(['a', 'b'], { concurrency: 0, runId: 'x' } as never),
    );
    expect(optionsOf(batched)).toEqual(['concurrency', 'store']);
    expect(batched.message).toContain("for batch() of chain 'helper'");
    expect(model.callCount).toBe(0);
  });

  it('resume() takes its run id as its first argument, and needs the store', async () => {
    const { chain: helper } = chain();
    const store = memoryStore();
    await helper.invoke('hi', { runId: 'r', store });
    const error = await rejectionOf(
      helper.resume('r', { store: undefined, runId: 'r', approv: () => true } as never),
    );
    expect(optionsOf(error)).toEqual(['approv', 'runId', 'store']);
    expect(error.message).toContain("`runId`: is resume()'s first argument");
    expect(error.message).toContain('did you mean `approve`?');
    expect(optionsOf(await rejectionOf(helper.resume('r', undefined as never)))).toEqual(['store']);
    expect((await helper.resume('r', { store })).text).toBe('ok');
  });

  it('durable(store, options) is checked when the app machine is built', () => {
    const { chain: helper } = chain();
    const error = thrownBy(ConfigError, () =>
      helper.durable(
        'runs' as never,
        { signal: new AbortController().signal, observer: {} } as never,
      ),
    );
    expect(optionsOf(error)).toEqual(['store', 'observer', 'signal']);
    expect(error.message).toContain('did you mean `observers`?');
    expect(error.message).toContain("`signal`: is the actor's own");
    expect(() => helper.durable(memoryStore(), { approve: () => true })).not.toThrow();
  });

  it('names where a Runnable config option belongs when given to a run directly', async () => {
    const { chain: helper } = chain();
    const callbacks: RunCallbacks = { onStart: () => {} };
    const error = await rejectionOf(helper.invoke('hi', { callbacks } as never));
    expect(error.message).toBe(
      "Invalid option `callbacks`: is an option of a Runnable's config, not of a run: pass it to runnable(chain).invoke(input, { callbacks })",
    );
  });
});

describe("a tool loop's run options", () => {
  it('invoke, stream, batch, resume, durable and planOnly refuse a typo with the nearest name', async () => {
    const { loop: survey, planned } = loop();
    const store = memoryStore();
    const typo = { runid: 'l1', store } as never;
    const messages = [
      (await rejectionOf(survey.invoke('go', typo))).message,
      thrownBy(ConfigError, () => survey.stream('go', typo)).message,
      (await rejectionOf(survey.batch(['go'], typo))).message,
      (await rejectionOf(survey.resume('l1', { store, parkForAproval: true } as never))).message,
      thrownBy(ConfigError, () => survey.durable(store, { aprove: () => true } as never)).message,
      (await rejectionOf(survey.planOnly('go', { obsevers: [] } as never))).message,
    ];
    for (const [index, near] of [
      'runId',
      'runId',
      'runId',
      'parkForApproval',
      'approve',
      'observers',
    ].entries()) {
      expect(messages[index]).toContain(`did you mean \`${near}\`?`);
      expect(messages[index]).toContain("of tool loop 'survey'");
    }
    expect(planned()).toBe(0);
    expect(await store.list()).toEqual([]);
    // planOnly is a probe: it is never journaled.
    const probe = await rejectionOf(survey.planOnly('go', { runId: 'p', store }));
    expect(optionsOf(probe)).toEqual(['runId', 'store']);
    expect(probe.message).toContain('not journaled');
  });

  it('takes every option it knows', async () => {
    const { loop: survey } = loop();
    const store = memoryStore();
    const controller = new AbortController();
    const result = await survey.invoke('go', {
      runId: 'ok',
      store,
      signal: controller.signal,
      inspect: () => {},
      observers: { onRunEnd: () => {} },
      parentRunId: 'parent',
      beforeToolCall: () => undefined,
      afterToolCall: () => {},
      approve: () => true,
      parkForApproval: false,
    });
    expect(result.stopReason).toBeDefined();
  });
});

describe('Runnable configs handed on to a run', () => {
  it('a function step that hands its config (callbacks, intermediate results) to chain.invoke still runs', async () => {
    const { chain: helper } = chain();
    const started: string[] = [];
    const step = fromFunction(async (input: string, config) => {
      return (await helper.invoke(input, config)).text;
    }, 'wrapper');
    const app = sequence(step, (text: string) => text.toUpperCase());
    const output = await app.invoke('hi', {
      callbacks: { onStart: (run) => void started.push(run.name) },
      sessionId: 's1',
      runName: 'app',
    });
    expect(output).toBe('OK');
    expect(started.slice(0, 2)).toEqual(['app', 'wrapper']);
  });

  it('runnable(chain) and runnable(loop) run in a batch and a sequence', async () => {
    const { chain: helper } = chain();
    const { loop: survey } = loop();
    const batched = await runnable(helper).batch(['a', 'b'], { concurrency: 1 });
    expect(batched.map((entry) => entry.status)).toEqual(['fulfilled', 'fulfilled']);
    const app = sequence(helper, (result) => result.text, survey);
    expect((await app.invoke('hi')).stopReason).toBeDefined();
  });
});

describe("a Runnable's config", () => {
  it("refuses a chain's run options (runnable(chain) does not carry them) and typos, running nothing", async () => {
    const { chain: helper, model } = chain();
    const store = memoryStore();
    const durable = await rejectionOf(
      runnable(helper).invoke('hi', { runId: 'r', store } as never),
    );
    expect(optionsOf(durable)).toEqual(['runId', 'store']);
    expect(durable.message).toContain(
      "`runId`: is a run option of a chain or tool loop, which a Runnable's config does not carry: pass it to chain.invoke(input, options)",
    );
    const typo = await rejectionOf(sequence(helper).invoke('hi', { sesionId: 's' } as never));
    expect(typo.message).toBe(
      "Invalid option `sesionId`: is not an option of the config of runnable 'helper'; did you mean `sessionId`?",
    );
    expect(model.callCount).toBe(0);
    expect(await store.list()).toEqual([]);
  });

  it('names wrong types and a bad batch concurrency, every problem at once', async () => {
    const { chain: helper } = chain();
    const error = await rejectionOf(
      runnable(helper).batch(['a'], {
        concurrency: 0,
        runName: 5,
        callbacks: 'log',
        signal: {},
      } as never),
    );
    expect(optionsOf(error)).toEqual(['signal', 'callbacks', 'runName', 'concurrency']);
    expect(error.message).toContain("for the batch options of runnable 'helper'");
  });
});
