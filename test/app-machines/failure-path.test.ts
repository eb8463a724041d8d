// One failure path into app machines: `chain.machine`, `loop.machine`, `chain.durable(store)`
// and `loop.durable(store)` deliver a failed run the same way, to `onDone` with the machine's
// output (`status: 'failed'`), and `runFailure` reads it as the error `invoke()` throws. Only
// a run this process could not bring to an end (bad input, a journal that disagrees) goes to
// `onError`.
import {
  type ChainOutput,
  createChain,
  createToolLoop,
  defineTool,
  isFailedRun,
  JournalError,
  type JournalStore,
  ModelError,
  memoryStore,
  ProtocolError,
  type RunOutput,
  runFailure,
  StatecraftError,
  type ToolLoopOutput,
} from 'statecraft';
import { ScriptedModel, type ScriptedTurn } from 'statecraft/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { type AnyActorLogic, assign, createActor, type OutputFrom, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { faultyStore } from '../durable/faulty-store.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks an order up.',
  input: z.object({ order: z.string() }),
  execute: ({ order }) => `order ${order}: shipped`,
});

const callsLookup: ScriptedTurn = {
  toolCalls: [{ id: 'c1', name: 'lookup', arguments: { order: 'A-1' } }],
};

/** A chain that fails: its one iteration asks for a tool, and no iteration is left to answer. */
const overIterations = () =>
  createChain({ model: new ScriptedModel([callsLookup]), tools: [lookup], maxIterations: 1 });
/** A chain whose provider fails. */
const providerDown = () =>
  createChain({ model: new ScriptedModel([{ error: new ModelError('the provider is down') }]) });
/** A chain that answers. */
const answering = () => createChain({ model: new ScriptedModel([{ text: 'Shipped.' }]) });
/** A tool loop whose planner fails. */
const plannerDown = () =>
  createToolLoop({
    planner: () => {
      throw new ModelError('the planner is down');
    },
    planRetries: 0,
    tools: [lookup],
    respond: false,
  });

/** What the app recorded of the run it invoked, and where it went. */
interface Seen {
  readonly state: string;
  readonly output?: RunOutput;
  readonly error?: unknown;
}

/**
 * An app that invokes `logic` and reads it the documented way: a failed run is data on
 * `onDone`; `onError` is only a run that could not be brought to an end.
 */
function appOf(logic: AnyActorLogic, input: unknown) {
  return setup({
    types: { context: {} as { output?: RunOutput; error?: unknown } },
    actors: { agent: logic },
    guards: { runFailed: (_, { output }: { output: RunOutput }) => isFailedRun(output) },
  }).createMachine({
    id: 'app',
    context: {},
    initial: 'working',
    states: {
      working: {
        invoke: {
          id: 'agent',
          src: 'agent',
          input,
          onDone: [
            {
              guard: { type: 'runFailed', params: ({ event }) => ({ output: event.output }) },
              target: 'failed',
              actions: assign({ output: ({ event }) => event.output }),
            },
            { target: 'succeeded', actions: assign({ output: ({ event }) => event.output }) },
          ],
          onError: { target: 'crashed', actions: assign({ error: ({ event }) => event.error }) },
        },
      },
      succeeded: { type: 'final' },
      failed: { type: 'final' },
      crashed: { type: 'final' },
    },
  });
}

async function runApp(logic: AnyActorLogic, input: unknown): Promise<Seen> {
  const actor = createActor(appOf(logic, input)).start();
  await toPromise(actor);
  const { value, context } = actor.getSnapshot();
  return { state: String(value), ...context };
}

/** The output's shape as a reader sees it: its keys, the failure's, the transcript as JSON. */
function shapeOf(output: RunOutput | undefined) {
  const json = JSON.parse(JSON.stringify(output)) as Record<string, unknown>;
  const failure = json.failure as Record<string, unknown> | undefined;
  return {
    keys: Object.keys(json).sort(),
    failureKeys: failure && Object.keys(failure).sort(),
    code: failure?.code,
    message: failure?.message,
    usage: json.usage,
    transcript: json.transcript,
    toolLogs: json.toolLogs,
  };
}

type ChainMaker = () => ReturnType<typeof overIterations>;

/** Runs a fresh chain of `make` as its machine and durably, in an app each. */
async function chainBothWays(make: ChainMaker, store: JournalStore, runId: string) {
  const direct = make();
  const durable = make();
  return {
    machine: await runApp(direct.machine, direct.input('Where is order A-1?')),
    durable: await runApp(durable.durable(store), { runId, input: 'Where is order A-1?' }),
  };
}

describe('one failure path into app machines', () => {
  it('a chain over its iteration limit: machine and durable() reach the same onDone branch with the same output', async () => {
    const store = memoryStore();
    const seen = await chainBothWays(overIterations, store, 'limit-1');
    expect(seen.machine.state).toBe('failed');
    expect(seen.durable.state).toBe('failed');
    expect(shapeOf(seen.durable.output)).toEqual(shapeOf(seen.machine.output));
    expect(shapeOf(seen.durable.output).code).toBe('PROTOCOL_ERROR');
    // The tool call the run made is kept: the partial run is on the output.
    const transcript = shapeOf(seen.durable.output).transcript as { role: string }[];
    expect(transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    // The durable run ended in its journal, as failed: resuming it changes nothing.
    expect((await store.read('limit-1'))?.at(-1)).toEqual({ type: 'end', status: 'failed' });
  });

  it('a chain whose provider fails: the same, and runFailure gives the ModelError invoke() throws', async () => {
    const seen = await chainBothWays(providerDown, memoryStore(), 'down-1');
    expect([seen.machine.state, seen.durable.state]).toEqual(['failed', 'failed']);
    expect(shapeOf(seen.durable.output)).toEqual(shapeOf(seen.machine.output));

    const thrown = await providerDown()
      .invoke('Where is order A-1?')
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    for (const output of [seen.machine.output, seen.durable.output]) {
      const failure = runFailure(output as RunOutput);
      expect(ModelError.isInstance(failure)).toBe(true);
      expect(failure?.code).toBe((thrown as StatecraftError).code);
      expect(failure?.message).toBe((thrown as StatecraftError).message);
      expect(failure?.partial.usage).toEqual((thrown as StatecraftError).partial?.usage);
      expect(failure?.partial.transcript).toEqual((thrown as StatecraftError).partial?.transcript);
    }
  });

  it("observers hear of a failed durable run once, with its error, as invoke()'s", async () => {
    const ends: unknown[] = [];
    const observers = { onRunEnd: (_run: unknown, outcome: object) => ends.push(outcome) };
    const seen = await runApp(providerDown().durable(memoryStore(), { observers }), {
      runId: 'observed-1',
      input: 'Where is order A-1?',
    });
    expect(seen.state).toBe('failed');
    expect(ends).toHaveLength(1);
    expect(ModelError.isInstance((ends[0] as { error?: unknown }).error)).toBe(true);
  });

  it('a tool loop whose planner fails: loop.machine and loop.durable() alike', async () => {
    const store = memoryStore();
    const direct = plannerDown();
    const durable = plannerDown();
    const machine = await runApp(direct.machine, direct.input('Where is order A-1?'));
    const viaStore = await runApp(durable.durable(store), {
      runId: 'plan-1',
      input: 'Where is order A-1?',
    });
    expect([machine.state, viaStore.state]).toEqual(['failed', 'failed']);
    expect(shapeOf(viaStore.output)).toEqual(shapeOf(machine.output));
    expect(shapeOf(viaStore.output).code).toBe('MODEL_ERROR');
    const failure = runFailure(viaStore.output as ToolLoopOutput);
    expect(ModelError.isInstance(failure)).toBe(true);
    expect(failure?.partial.toolLogs).toEqual([]);
    expect((await store.read('plan-1'))?.at(-1)).toEqual({ type: 'end', status: 'failed' });
  });

  it('a run that succeeds: onDone with the machine output, machine and durable() alike', async () => {
    const seen = await chainBothWays(answering, memoryStore(), 'ok-1');
    expect([seen.machine.state, seen.durable.state]).toEqual(['succeeded', 'succeeded']);
    expect(shapeOf(seen.durable.output)).toEqual(shapeOf(seen.machine.output));
    expect(runFailure(seen.durable.output as RunOutput)).toBeUndefined();
    expect((seen.durable.output as ChainOutput<string>).status === 'succeeded').toBe(true);
  });

  it('onError is a run this process could not bring to an end: bad input, a journal that disagrees', async () => {
    const store = memoryStore();
    const badInput = await runApp(answering().durable(store), { input: 'no run id' });
    expect(badInput.state).toBe('crashed');
    expect(StatecraftError.isInstance(badInput.error)).toBe(true);
    expect((badInput.error as StatecraftError).code).toBe('CONFIG_ERROR');

    await runApp(answering().durable(store), { runId: 'order-9', input: 'first question' });
    const otherInput = await runApp(answering().durable(store), {
      runId: 'order-9',
      input: 'another question',
    });
    expect(otherInput.state).toBe('crashed');
    expect((otherInput.error as StatecraftError).code).toBe('JOURNAL_MISMATCH');
  });

  it('a store that cannot write is onError, with the partial run; healed, the same run ends on onDone', async () => {
    for (const kind of ['chain', 'loop'] as const) {
      const store = faultyStore(memoryStore(), 3, { kind: 'ENOSPC' });
      const make = () =>
        kind === 'chain'
          ? createChain({
              model: new ScriptedModel([callsLookup, { text: 'Shipped.' }]),
              tools: [lookup],
            }).durable(store)
          : createToolLoop({
              planner: ({ roundIndex }) =>
                roundIndex === 0
                  ? { toolCommand: { toolName: 'lookup', toolKwargs: { order: 'A-1' } } }
                  : { nextAction: 'response' },
              tools: [lookup],
              respond: false,
            }).durable(store);
      const input = { runId: `full-${kind}`, input: 'Where is order A-1?' };
      const full = await runApp(make(), input);
      expect(full.state, kind).toBe('crashed');
      expect(JournalError.isInstance(full.error)).toBe(true);
      expect((full.error as JournalError).reason).toBe('no-space');
      expect((full.error as JournalError).partial?.usage).toBeDefined();
      store.heal();
      const healed = await runApp(make(), input);
      expect(healed.state, kind).toBe('succeeded');
    }
  });

  it('runFailure reads an output kept in a persisted snapshot (its transcript as JSON)', async () => {
    const seen = await chainBothWays(overIterations, memoryStore(), 'json-1');
    const persisted = JSON.parse(JSON.stringify(seen.durable.output)) as ChainOutput;
    const failure = runFailure(persisted);
    expect(ProtocolError.isInstance(failure)).toBe(true);
    expect(failure?.partial.transcript.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(failure?.partial.steps).toHaveLength(1);
  });

  it('types: durable() outputs what the machine outputs, and isFailedRun narrows it', () => {
    const chain = createChain({
      model: new ScriptedModel([]),
      outputSchema: z.object({ a: z.number() }),
    });
    const loop = plannerDown();
    expectTypeOf<OutputFrom<ReturnType<typeof chain.durable>>>().toEqualTypeOf<
      OutputFrom<typeof chain.machine>
    >();
    expectTypeOf<OutputFrom<ReturnType<typeof chain.durable>>>().toEqualTypeOf<
      ChainOutput<{ a: number }>
    >();
    expectTypeOf<OutputFrom<ReturnType<typeof loop.durable>>>().toEqualTypeOf<
      OutputFrom<typeof loop.machine>
    >();
    const output = {} as ChainOutput<{ a: number }>;
    if (isFailedRun(output)) {
      expectTypeOf(output.failure.code).toEqualTypeOf<
        | 'PROTOCOL_ERROR'
        | 'TOKEN_LIMIT'
        | 'COST_LIMIT'
        | 'TIMEOUT'
        | 'CHAIN_ERROR'
        | 'MODEL_ERROR'
        | 'CONFIG_ERROR'
        | 'ABORTED'
      >();
    } else {
      expectTypeOf(output.result).toEqualTypeOf<{ a: number }>();
    }
    expectTypeOf(runFailure({} as ToolLoopOutput)).toMatchTypeOf<
      { readonly partial: { readonly toolLogs: readonly unknown[] } } | undefined
    >();
  });
});
