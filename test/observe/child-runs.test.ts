// SPEC R5 + X4: chains and tool loops an app's own machine invokes as child actors are runs
// too. With no invoke() around them and no per-run options, they report to the observers
// `observeRuns` registered: each its start, states, model and tool calls, and one end, also
// when the app stops it early. Only the public API is used, on the support-triage example's
// machine and on small app machines of the test's own.
import {
  AbortError,
  type ChainResult,
  createChain,
  createToolLoop,
  defineTool,
  type LanguageModel,
  ModelError,
  type ObservedRun,
  type RunObserver,
  type ToolLoopResult,
  type Usage,
} from 'statecraft';
import { observeRuns } from 'statecraft/observe';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { type AnyStateMachine, createActor, setup, toPromise } from 'xstate';
import { z } from 'zod';
import { createTriageAgents, type TriageModels } from '../../examples/support-triage/agents.js';
import { createTriageMachine, type TriageEvent } from '../../examples/support-triage/machine.js';
import { createScriptedModels, sampleTicket } from '../../examples/support-triage/models.js';
import { type ObservedEvent, outcomeOf, recordingObserver } from './helpers.js';

const unregister: (() => void)[] = [];
function observeGlobally(observer: RunObserver): () => void {
  const off = observeRuns(observer);
  unregister.push(off);
  return off;
}
afterEach(() => {
  for (const off of unregister.splice(0)) off();
});

const approve: TriageEvent = { type: 'APPROVE', reviewer: 'sam@support' };

/** Runs one ticket through the triage machine; the reviewer approves the first draft. */
async function runTicket(models: TriageModels, agentTimeoutMs?: number) {
  const agents = createTriageAgents(models);
  const actor = createActor(createTriageMachine(agents), {
    input: { ticket: sampleTicket, agentTimeoutMs },
  });
  actor.subscribe((snapshot) => {
    if (snapshot.value === 'awaitingReview') setTimeout(() => actor.send(approve), 0);
  });
  actor.start();
  return { agents, output: await toPromise(actor) };
}

const startsOf = (events: readonly ObservedEvent[]) =>
  events.filter((event) => event.hook === 'onRunStart').map((event) => event.run);
const endsOf = (events: readonly ObservedEvent[], run: ObservedRun | undefined) =>
  events.filter((event) => event.hook === 'onRunEnd' && event.run === run);

/** A model whose calls never answer; each ends only when aborted. */
function silentModel(onCall?: () => void): LanguageModel {
  const hang = (signal: AbortSignal | undefined) => {
    onCall?.();
    return new Promise<never>((_, reject) =>
      signal?.addEventListener('abort', () => reject(signal.reason)),
    );
  };
  return {
    specificationVersion: new ScriptedModel([]).specificationVersion,
    provider: 'silent',
    modelId: 'silent',
    generate: (_, options) => hang(options?.signal),
    stream: (_, options) => ({
      [Symbol.asyncIterator]: () => ({ next: () => hang(options?.signal) }),
    }),
  };
}

/** An app machine that runs `agent` in `working` until it is done or CANCEL arrives. */
function appMachine(agent: AnyStateMachine, input: unknown, after?: number) {
  return setup({ actors: { agent } }).createMachine({
    initial: 'working',
    states: {
      working: {
        invoke: { id: 'agent', src: 'agent', input, onDone: 'finished', onError: 'crashed' },
        on: { CANCEL: 'cancelled' },
        ...(after !== undefined && { after: { [after]: 'timedOut' } }),
      },
      finished: { type: 'final' },
      crashed: { type: 'final' },
      cancelled: { type: 'final' },
      timedOut: { type: 'final' },
    },
  });
}

describe('agents an app machine invokes (support-triage)', () => {
  it('reports the three agent runs: their states, model and tool calls, and ends', async () => {
    const { observer, events, lines } = recordingObserver();
    observeGlobally(observer);

    const { agents, output } = await runTicket(createScriptedModels());

    expect(output.status).toBe('sent');
    const runs = startsOf(events);
    expect(runs.map((run) => `${run.kind} ${run.name}`)).toEqual([
      'chain chain:classify',
      'tool-loop tool-loop:research',
      'chain chain:draft',
    ]);
    const [classify, research, draft] = runs as [ObservedRun, ObservedRun, ObservedRun];
    expect(classify).toMatchObject({
      parentRunId: undefined,
      machine: agents.classify.machine,
      model: { provider: 'scripted', modelId: 'scripted-model' },
    });
    expect(research.machine).toBe(agents.research.machine);
    expect(draft.machine).toBe(agents.draft.machine);
    expect(new Set(runs.map((run) => run.runId)).size).toBe(3);

    const linesOf = (name: string) =>
      lines().filter((line) => line.startsWith(`${name} `) || line.includes(`:${name} `));
    expect(linesOf('chain:classify')).toEqual([
      'chain:chain:classify start',
      'chain:chain:classify state thinking',
      'chain:chain:classify model #1 generation 1 start',
      'chain:chain:classify model #1 generation 1 end',
      'chain:chain:classify state validating',
      'chain:chain:classify state succeeded',
      'chain:chain:classify end',
    ]);
    // The loop's model and tool calls, in order, and the states it went through.
    const loopLines = linesOf('tool-loop:research');
    expect(loopLines.filter((line) => !line.includes(' state '))).toEqual([
      'tool-loop:tool-loop:research start',
      'tool-loop:tool-loop:research model #1 plan round 1 start',
      'tool-loop:tool-loop:research model #1 plan round 1 end',
      'tool-loop:tool-loop:research tool lookup_order start',
      'tool-loop:tool-loop:research tool search_kb start',
      'tool-loop:tool-loop:research tool lookup_order end',
      'tool-loop:tool-loop:research tool search_kb end',
      'tool-loop:tool-loop:research model #2 plan round 2 start',
      'tool-loop:tool-loop:research model #2 plan round 2 end',
      'tool-loop:tool-loop:research tool read_article start',
      'tool-loop:tool-loop:research tool read_article end',
      'tool-loop:tool-loop:research model #3 plan round 3 start',
      'tool-loop:tool-loop:research model #3 plan round 3 end',
      'tool-loop:tool-loop:research model #4 respond start',
      'tool-loop:tool-loop:research model #4 respond end',
      'tool-loop:tool-loop:research end',
    ]);
    const loopStates = loopLines.flatMap((line) => /state (.*)$/.exec(line)?.[1] ?? []);
    expect(loopStates.filter((state, i) => state !== loopStates[i - 1])).toEqual([
      '{"running":"planning"}',
      '{"running":"executing"}',
      '{"running":"planning"}',
      '{"running":"executing"}',
      '{"running":"planning"}',
      '{"running":"responding"}',
      'done',
    ]);
    expect(linesOf('chain:draft')).toHaveLength(7);
    // Every run ends once, after its last state: an app's agents run one after another.
    expect(lines().filter((line) => /^\S+ end$/.test(line))).toEqual([
      'chain:chain:classify end',
      'tool-loop:tool-loop:research end',
      'chain:chain:draft end',
    ]);

    // Each starts with its machine's input, shaped as invoke() takes it.
    const classifyStart = events.find((e) => e.hook === 'onRunStart' && e.run === classify);
    expect(classifyStart?.input).toEqual({
      messages: [expect.objectContaining({ role: 'user', content: expect.any(String) })],
    });
    const researchStart = events.find((e) => e.hook === 'onRunStart' && e.run === research);
    expect(researchStart?.input).toMatchObject({
      userInput: expect.stringContaining('Triage: Charged twice for order A-1043'),
      extraRequirement: 'Find the facts a support agent needs to answer this ticket.',
    });
    // ...and ends with what invoke() would resolve with, and the tokens it spent.
    const classified = outcomeOf<{ output: ChainResult<unknown>; usage: Usage }>(
      endsOf(events, classify)[0],
    );
    if (output.status !== 'sent') throw new Error('escalated');
    expect(classified.output.result).toEqual(output.triage);
    expect(classified.usage).toEqual(classified.output.usage);
    expect(classified.output.details().modelCalls).toHaveLength(1);
    const researched = outcomeOf<{ output: ToolLoopResult; usage: Usage }>(
      endsOf(events, research)[0],
    );
    expect(researched.output.toolLogs.map((record) => record.toolName)).toEqual([
      'lookup_order',
      'search_kb',
      'read_article',
    ]);
    expect(researched.usage.totalTokens).toBeGreaterThan(0);
    const drafted = outcomeOf<{ output: ChainResult<string> }>(endsOf(events, draft)[0]);
    expect(drafted.output.text).toBe(output.reply);
    // The tool calls are the loop's, with their results.
    const toolEnds = events.filter((e) => e.hook === 'onToolCallEnd');
    expect(toolEnds.every((e) => e.run === research)).toBe(true);
    expect(
      toolEnds.map((e) => outcomeOf<{ result: { success: boolean } }>(e).result.success),
    ).toEqual([true, true, true]);
  });

  it('reports an agent run that failed with its error', async () => {
    const { observer, events } = recordingObserver();
    observeGlobally(observer);
    const classifier = new ScriptedModel([{ error: new ModelError('the provider is overloaded') }]);

    const { output } = await runTicket({ ...createScriptedModels(), classifier });

    expect(output.status).toBe('escalated');
    const runs = startsOf(events);
    expect(runs.map((run) => run.name)).toEqual(['chain:classify']);
    const ends = endsOf(events, runs[0]);
    expect(ends).toHaveLength(1);
    const { error } = outcomeOf<{ error: Error }>(ends[0]);
    expect(ModelError.isInstance(error)).toBe(true);
    expect(error.message).toContain('the provider is overloaded');
  });

  it("reports one end, an AbortError, for the agent the app's timeout stopped", async () => {
    const { observer, events } = recordingObserver();
    observeGlobally(observer);
    let writerCalled!: () => void;
    const writing = new Promise<void>((resolve) => {
      writerCalled = resolve;
    });

    // A writer that never answers: the app's `after` ends the drafting state, which stops it.
    const { output } = await runTicket(
      { ...createScriptedModels(), writer: silentModel(() => writerCalled()) },
      1_000,
    );
    await writing;
    await new Promise((resolve) => setTimeout(resolve, 10)); // the aborted call settles

    expect(output).toMatchObject({
      status: 'escalated',
      reason: 'the writer did not answer within 1000 ms',
    });
    const draft = startsOf(events).find((run) => run.name === 'chain:draft');
    const ends = endsOf(events, draft);
    expect(ends).toHaveLength(1);
    const end = outcomeOf<{ error: AbortError; usage: Usage }>(ends[0]);
    expect(AbortError.isInstance(end.error)).toBe(true);
    expect(end.error.message).toMatch(/stopped before it finished/);
    expect(end.usage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });
    // Its model call started, and ends too (aborted), so no span is left open.
    const calls = events.filter((e) => e.run === draft && e.hook.startsWith('onModelCall'));
    expect(calls.map((e) => e.hook)).toEqual(['onModelCallStart', 'onModelCallEnd']);
    expect(outcomeOf<object>(calls[1])).toHaveProperty('error');
  });
});

describe('agents in an app machine of your own', () => {
  it('a chain stopped by the app (an event) reports one end, with what it had done', async () => {
    const { observer, events } = recordingObserver();
    observeGlobally(observer);
    const add = defineTool({
      name: 'add',
      description: 'Adds two numbers.',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => a + b,
    });
    const scripted = new ScriptedModel([
      {
        toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }],
        usage: { inputTokens: 10, outputTokens: 5 },
      },
    ]);
    const silent = silentModel();
    let calls = 0;
    // The first call answers with a tool call; the second never answers.
    const model: LanguageModel = {
      ...silent,
      generate: (request, options) =>
        ++calls === 1 ? scripted.generate(request, options) : silent.generate(request, options),
    };
    const chain = createChain({ model, tools: [add], name: 'adder' });
    // Cancelled once the second model call has started. Registered before the app's actor is
    // created: its invoked chain actor, created with it, takes the observers of that moment.
    observeGlobally({
      onModelCallStart: (_, call) => {
        if (call.index === 2) setTimeout(() => app.send({ type: 'CANCEL' }), 0);
      },
    });
    const app = createActor(appMachine(chain.machine, chain.input('What is 1 + 2?')));

    app.start();
    await toPromise(app);
    await new Promise((resolve) => setTimeout(resolve, 10)); // the aborted call settles

    expect(app.getSnapshot().value).toBe('cancelled');
    const [run] = startsOf(events);
    expect(run).toMatchObject({ kind: 'chain', name: 'adder:agent', machine: chain.machine });
    const ends = endsOf(events, run);
    expect(ends).toHaveLength(1);
    const end = outcomeOf<{
      error: AbortError & { partial: { usage: Usage; steps: unknown[] } };
      usage: Usage;
    }>(ends[0]);
    expect(AbortError.isInstance(end.error)).toBe(true);
    expect(end.usage).toEqual({ inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    expect(end.error.partial.steps).toHaveLength(1);
    expect(events.filter((e) => e.hook === 'onToolCallEnd')).toHaveLength(1);
    // Nothing reports the run's end a second time, however the rest settles.
    expect(events.filter((e) => e.hook === 'onRunEnd')).toHaveLength(1);
  });

  it('a tool loop stopped mid-round by the app reports one end; its chain responder is its child', async () => {
    const { observer, events } = recordingObserver();
    observeGlobally(observer);
    let toolStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      toolStarted = resolve;
    });
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until it is cancelled.',
      input: z.object({}),
      execute: (_, { signal }) => {
        toolStarted();
        return new Promise((_, reject) =>
          signal?.addEventListener('abort', () => reject(signal.reason)),
        );
      },
    });
    const command = { purpose: 'Wait', toolName: 'wait', toolKwargs: {}, todoSuggestion: '' };
    const loop = createToolLoop({
      planner: () => ({ nextAction: 'execute', executionCommands: [command] }),
      tools: [wait],
      name: 'waiter',
    });
    const app = createActor(appMachine(loop.machine, loop.input('Wait, please.')));
    app.start();
    await started;
    app.send({ type: 'CANCEL' });
    await toPromise(app);
    await new Promise((resolve) => setTimeout(resolve, 10)); // the aborted tool settles

    const [run] = startsOf(events);
    expect(run).toMatchObject({ kind: 'tool-loop', name: 'waiter:agent' });
    const ends = endsOf(events, run);
    expect(ends).toHaveLength(1);
    expect(AbortError.isInstance(outcomeOf<{ error: unknown }>(ends[0]).error)).toBe(true);
    expect(events.filter((e) => e.hook === 'onToolCallStart')).toHaveLength(1);

    // A loop that finishes, with a chain responder: the responder's run is the loop run's child.
    const responder = createChain({
      model: new ScriptedModel([{ text: 'Done.' }]),
      name: 'responder',
    });
    const answering = createToolLoop({
      planner: () => ({ nextAction: 'response' }),
      respond: responder,
      name: 'answerer',
    });
    await toPromise(createActor(appMachine(answering.machine, answering.input('Hi'))).start());
    const runs = new Map(startsOf(events).map((r) => [r.name, r]));
    expect(runs.get('responder')?.parentRunId).toBe(runs.get('answerer:agent')?.runId);
    const answered = outcomeOf<{ output: ToolLoopResult }>(
      endsOf(events, runs.get('answerer:agent'))[0],
    );
    expect(answered.output.answer).toBe('Done.');
  });

  // SPEC Q8: stopped in the middle of a tool step, an agent keeps what finished in it.
  describe('stopped by the app in the middle of a tool step, it keeps the calls that finished', () => {
    /** `charge` finishes at once; `wait` until aborted. `charged`: charge has finished. */
    function payTools() {
      let charged!: () => void;
      const done = new Promise<void>((resolve) => {
        charged = resolve;
      });
      const charge = defineTool({
        name: 'charge',
        description: 'Charges a card.',
        input: z.object({}),
        execute: () => {
          charged();
          return 'charged';
        },
      });
      const wait = defineTool({
        name: 'wait',
        description: 'Waits for the bank.',
        input: z.object({}),
        execute: (_, { signal }) =>
          new Promise((_, reject) =>
            signal?.addEventListener('abort', () => reject(signal.reason)),
          ),
      });
      return { tools: [charge, wait], charged: done };
    }

    /** Runs `agent` in an app machine, cancelled once charge has finished; its end's error. */
    async function cancelledAfterCharge(
      agent: AnyStateMachine,
      input: unknown,
      charged: Promise<void>,
    ) {
      const { observer, events } = recordingObserver();
      observeGlobally(observer);
      const app = createActor(appMachine(agent, input)).start();
      await charged;
      // A turn for charge's result to reach the agent's machine.
      await new Promise((resolve) => setTimeout(resolve, 0));
      app.send({ type: 'CANCEL' });
      await toPromise(app);
      const [run] = startsOf(events);
      return outcomeOf<{ error: AbortError & { partial: Record<string, unknown> } }>(
        endsOf(events, run)[0],
      ).error;
    }

    it('a chain: the finished call keeps its result in the partial transcript and steps', async () => {
      const { tools, charged } = payTools();
      const model = new ScriptedModel([
        {
          toolCalls: [
            { id: 'c1', name: 'charge', arguments: {} },
            { id: 'c2', name: 'wait', arguments: {} },
          ],
        },
      ]);
      const chain = createChain({ model, tools, name: 'payer' });
      const error = await cancelledAfterCharge(chain.machine, chain.input('Pay.'), charged);

      expect(AbortError.isInstance(error)).toBe(true);
      const transcript = error.partial.transcript as readonly {
        role: string;
        toolCallId?: string;
      }[];
      const tool = (id: string) => transcript.find((m) => m.role === 'tool' && m.toolCallId === id);
      expect(tool('c1')).toMatchObject({ success: true, output: 'charged' });
      expect(tool('c2')).toMatchObject({ success: false, error: expect.stringMatching(/not run/) });
      const steps = error.partial.steps as { toolResults: { toolCallId: string }[] }[];
      expect(steps.map((step) => step.toolResults.map((r) => r.toolCallId))).toEqual([['c1']]);
    });

    it("a tool loop: the finished command's record is in partial.toolLogs", async () => {
      const { tools, charged } = payTools();
      const loop = createToolLoop({
        planner: () => ({
          nextAction: 'execute',
          executionCommands: [
            { purpose: 'Charge', toolName: 'charge', toolKwargs: {} },
            { purpose: 'Wait', toolName: 'wait', toolKwargs: {} },
          ],
        }),
        tools,
        name: 'payer',
      });
      const error = await cancelledAfterCharge(loop.machine, loop.input('Pay.'), charged);

      expect(AbortError.isInstance(error)).toBe(true);
      expect(error.partial.toolLogs).toMatchObject([
        { toolName: 'charge', success: true, result: 'charged' },
      ]);
    });
  });

  it("an app's own `after` stopping a chain whose model hangs reports one abort end", async () => {
    const { observer, events } = recordingObserver();
    observeGlobally(observer);
    const chain = createChain({ model: silentModel(), name: 'slow' });
    // Nothing else runs: the timer ends the state whatever the machine's load.
    const app = createActor(appMachine(chain.machine, chain.input('Hello?'), 20)).start();
    await toPromise(app);

    expect(app.getSnapshot().value).toBe('timedOut');
    const [run] = startsOf(events);
    expect(endsOf(events, run)).toHaveLength(1);
    expect(AbortError.isInstance(outcomeOf<{ error: unknown }>(endsOf(events, run)[0]).error)).toBe(
      true,
    );
  });

  it('reports nothing once unregistered, and nothing at all while nobody observes', async () => {
    const { observer, events } = recordingObserver();
    const off = observeGlobally(observer);
    off();

    const { output } = await runTicket(createScriptedModels());

    expect(output.status).toBe('sent');
    expect(events).toEqual([]);
  });
});
