// SPEC D2/D3 on an app's own machine: every path of examples/support-triage's machine,
// generated from the statechart with `statecraft/testing` and replayed on a real actor whose
// three children (classify, research, draft) are settled step by step with scripted outcomes,
// and whose agent timeouts (`after`) fire on the replay's clock.
import {
  type ChainInput,
  type ChainOptions,
  type ChainOutput,
  type ChainRunInput,
  createChain,
  createToolLoop,
  type DurableActorInput,
  ModelError,
  memoryStore,
  type ToolLoopOptions,
  type ToolLoopOutput,
  userMessage,
} from 'statecraft';
import {
  assertCanReach,
  assertUnreachable,
  canReach,
  generatePathTests,
  type PathReplay,
  PathReplayError,
  type PathTestOptions,
  reachabilityViolations,
  ScriptedModel,
  type ScriptedTurn,
} from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { createTriageAgents, supportTools } from '../examples/support-triage/agents.js';
import {
  createTriageMachine,
  type Triage,
  type TriageEvent,
  triageSchema,
} from '../examples/support-triage/machine.js';
import { createScriptedModels, sampleTicket } from '../examples/support-triage/models.js';

// The agents' machines are never run here: every replay replaces them by their src.
const agents = createTriageAgents(createScriptedModels());
const machine = createTriageMachine(agents);

// What the children may answer: outputs of real runs of small chains and loops on scripted
// models, so every field the app does not read is what a real child reports. A failed run is
// an output (status 'failed'); an error is a child that threw.
async function chainOutput<T>(options: ChainOptions<T>): Promise<ChainOutput> {
  const chain = createChain<T>(options);
  return toPromise(createActor(chain.machine, { input: chain.input('the ticket') }).start());
}
async function loopOutput(options: ToolLoopOptions): Promise<ToolLoopOutput> {
  const loop = createToolLoop({ tools: supportTools, ...options });
  return toPromise(createActor(loop.machine, { input: loop.input('the ticket') }).start());
}
const answer = (turn: ScriptedTurn) => new ScriptedModel([turn]);
const classified = (triage: Triage) =>
  chainOutput({ model: answer({ text: JSON.stringify(triage) }), outputSchema: triageSchema });

const summary = 'Charged twice for order A-1043.';
const FINDINGS = 'Order A-1043 has two charges of $29 [Look up order A-1043].';
const REPLY = 'Hi Dana, we are refunding the duplicate charge.';
const outcomes = {
  billing: await classified({ category: 'billing', urgency: 'high', summary }),
  bug: await classified({ category: 'bug', urgency: 'low', summary: 'The export fails.' }),
  howTo: await classified({ category: 'how-to', urgency: 'low', summary: 'How to export.' }),
  failed: await chainOutput({ model: answer({ error: new ModelError('the provider is down') }) }),
  notATriage: await chainOutput({ model: answer({ text: 'billing, I think' }) }),
  researched: await loopOutput({
    model: answer({ text: FINDINGS }),
    planner: () => ({ nextAction: 'response' }),
  }),
  researchTimedOut: await loopOutput({
    planner: (_, { signal }) => new Promise((end) => signal.addEventListener('abort', end)),
    timeout: 1,
  }),
  // A loop that makes no response and ran no tool: done, with nothing to report.
  researchedNothing: await loopOutput({
    respond: false,
    planner: () => ({ nextAction: 'response' }),
  }),
  drafted: await chainOutput({ model: answer({ text: REPLY }), resultCacheKey: 'reply' }),
};

const events: TriageEvent[] = [
  { type: 'APPROVE', reviewer: 'sam@support' },
  { type: 'REVISE', notes: 'Say when the refund arrives.' },
  { type: 'REJECT', reason: 'wrong policy' },
];

const options = {
  input: { ticket: sampleTicket, maxRevisions: 1 },
  events,
  actors: {
    // done#0 billing, #1 bug, #2 how-to, #3 a failed run, #4 a result that is no triage.
    classify: {
      outputs: [
        outcomes.billing,
        outcomes.bug,
        outcomes.howTo,
        outcomes.failed,
        outcomes.notATriage,
      ],
      errors: [new Error('classifier crashed')],
    },
    // done#0 findings, #1 the loop's own timeout (a failed run), #2 nothing found.
    research: {
      outputs: [outcomes.researched, outcomes.researchTimedOut, outcomes.researchedNothing],
      errors: [new Error('loop crashed')],
    },
    draft: { outputs: [outcomes.drafted, outcomes.failed], errors: [new Error('writer crashed')] },
  },
  describeEvent: (event) => event.type,
  limits: { maxDepth: 10, maxPaths: 100 },
} satisfies PathTestOptions<typeof machine>;

const suite = generatePathTests(machine, options);

// How many paths there are. A draft ends the path (it failed, crashed or timed out) or goes
// to review: APPROVE, REJECT, or REVISE to a redraft, whose review allows no further REVISE
// (maxRevisions 1), so its REVISE escalates.
const drafting = (reviewPaths: number) => 3 + reviewPaths;
const draftPaths = drafting(2 + drafting(3));
// Research fails, crashes or times out, or goes on to a draft with findings or without.
const researchPaths = 3 + 2 * draftPaths;
// Classification fails, answers no triage, crashes or times out; billing and bug tickets are
// researched, a how-to question goes straight to a draft.
const PATH_COUNT = 4 + 2 * researchPaths + draftPaths;

/**
 * The text of the messages a scripted child was started with (the machine computed them):
 * the chain's machine input, or a durable actor's `{ runId, input }`.
 */
const promptOf = (input: ChainInput | DurableActorInput<string | ChainRunInput>): string => {
  const run = 'runId' in input ? input.input : input;
  const messages = typeof run === 'string' ? [userMessage(run)] : run.messages;
  return messages
    .flatMap((m) => (m.role === 'user' || m.role === 'system' ? [m.content] : []))
    .join('\n');
};

/** The path that ends with `events` (by name), and where. */
function pathNamed(name: string) {
  const path = suite.paths.find((p) => p.name === name);
  if (!path) throw new Error(`no path ${name}`);
  return path;
}

describe('support triage: one test per generated path (SPEC D2)', () => {
  it('offers the children outcomes that are what they say', () => {
    expect(outcomes.billing).toMatchObject({
      status: 'succeeded',
      result: { category: 'billing' },
    });
    expect(outcomes.failed).toMatchObject({ status: 'failed', failure: { code: 'MODEL_ERROR' } });
    expect(outcomes.notATriage).toMatchObject({ status: 'succeeded', result: 'billing, I think' });
    expect(outcomes.researched).toMatchObject({ status: 'done', response: { text: FINDINGS } });
    expect(outcomes.researchTimedOut).toMatchObject({
      status: 'failed',
      failure: { code: 'TIMEOUT' },
    });
    expect(outcomes.drafted).toMatchObject({ intermediateResults: { reply: REPLY } });
    expect(outcomes.researchedNothing).toMatchObject({
      status: 'done',
      response: undefined,
      convergence: undefined,
    });
  });

  it('generates every path: 5 classifications and a crash, 4 research and 3 draft outcomes, 3 reviewer events, and each agent timing out', () => {
    expect(suite.paths.length).toBe(PATH_COUNT);
  });

  for (const path of suite.paths) {
    it(path.name, async () => {
      const replay = await path.run();
      const end = replay.snapshot;
      // The replay itself checked every step against the model; these are the app's rules.
      if (end.value === 'sent') {
        expect(end.output).toMatchObject({
          status: 'sent',
          reply: REPLY,
          reviewedBy: 'sam@support',
        });
      }
      if (end.value === 'escalated') expect(end.output?.status).toBe('escalated');
      // Findings only from research that found some (done#0); else the draft is told so.
      const found = path.name.includes('research:done#0');
      for (const [i, call] of replay.calls.filter((c) => c.src === 'draftReply').entries()) {
        const prompt = promptOf(call.input);
        // Every draft sees the findings of research, when there are findings …
        if (found) expect(prompt).toContain(`Research findings:\n${FINDINGS}`);
        else expect(prompt).toContain('(none: answer from the product documentation)');
        // … and a redraft sees the reviewer's notes and the draft they were about.
        if (i > 0) expect(prompt).toContain('Reviewer notes:\n- Say when the refund arrives.');
        if (i > 0) expect(prompt).toContain(`Previous draft:\n${REPLY}`);
      }
    });
  }
});

describe('support triage: what an escalation hands a person', () => {
  it('an agent that never answers is stopped after agentTimeoutMs, and the ticket escalated', async () => {
    for (const [state, agent] of [
      ['classifying', 'the classifier'],
      ['researching', 'research'],
      ['drafting', 'the writer'],
    ] as const) {
      const path = suite.paths.find((p) =>
        p.name.endsWith(`after:agentTimeout@${state} ⇒ escalated`),
      );
      if (!path) throw new Error(`no timeout path for ${state}`);
      const replay = await path.run();
      expect(replay.snapshot.output).toMatchObject({
        status: 'escalated',
        reason: `${agent} did not answer within 120000 ms`,
      });
      expect(replay.calls.at(-1)?.outcome).toBe('stopped');
    }
  });

  it('after a redraft that failed, the last draft comes with the notes it does not address', async () => {
    const notes = ['Say when the refund arrives.'];
    for (const redraft of ['draft:done#1', 'draft:error#0', 'after:agentTimeout@drafting']) {
      const replay = await pathNamed(
        `classify:done#2 → draft:done#0 → REVISE → ${redraft} ⇒ escalated`,
      ).run();
      expect(replay.snapshot.output).toMatchObject({ status: 'escalated', draft: REPLY });
      expect(
        replay.snapshot.output?.status === 'escalated' && replay.snapshot.output.openNotes,
      ).toEqual(notes);
    }
    // A REVISE past the limit: its notes are open too, and the reason counts in words.
    const limit = await pathNamed(
      'classify:done#2 → draft:done#0 → REVISE → draft:done#0 → REVISE ⇒ escalated',
    ).run();
    expect(limit.snapshot.output).toMatchObject({
      reason: 'still not approved after 1 revision',
      draft: REPLY,
      openNotes: notes,
    });
    // A draft no reviewer asked to change has no open notes.
    const rejected = await pathNamed('classify:done#2 → draft:done#0 → REJECT ⇒ escalated').run();
    expect(rejected.snapshot.output).toMatchObject({ draft: REPLY, openNotes: [] });
  });
});

describe('support triage: coverage and properties (SPEC D3)', () => {
  it('the paths enter every state and take every transition', async () => {
    const { states, transitions } = suite.coverage;
    console.log(
      `support triage: ${suite.paths.length} paths, states ${states.covered}/${states.total}, transitions ${transitions.covered}/${transitions.total}`,
    );
    expect(states).toEqual({ covered: 6, total: 6, missing: [] });
    expect(transitions).toMatchObject({ covered: 17, total: 17, missing: [] });
    // The real actors of the replays did too, not only the model.
    const replays: PathReplay[] = [];
    for (const path of suite.paths) replays.push(await path.run());
    expect(suite.replayCoverage(replays)).toEqual(suite.coverage);
  });

  it('can send a reply, and shows the shortest way there', () => {
    const witness = assertCanReach(machine, 'sent', options);
    expect(witness.name).toBe('classify:done#2 → draft:done#0 → APPROVE ⇒ sent');
  });

  it('never sends without a reviewer, revises past the limit, or researches a how-to', () => {
    // Named functions: their names are what a failing assertion reports.
    assertUnreachable(
      machine,
      function sentWithoutReview(s) {
        return s.matches('sent') && s.context.reviewedBy === undefined;
      },
      options,
    );
    assertUnreachable(
      machine,
      function revisedPastTheLimit(s) {
        return s.context.revisions > s.context.maxRevisions;
      },
      options,
    );
    assertUnreachable(
      machine,
      function researchingAHowTo(s) {
        return s.matches('researching') && s.context.triage?.category === 'how-to';
      },
      options,
    );
    // Without a triage nothing downstream runs.
    const noTriage = {
      ...options,
      actors: { ...options.actors, classify: { outputs: [outcomes.failed] } },
    };
    expect(canReach(machine, 'researching', noTriage).reachable).toBe(false);
    expect(canReach(machine, 'drafting', noTriage).reachable).toBe(false);
  });

  it('every state can still end: in sent or escalated', () => {
    const violations = reachabilityViolations(suite.graph, {
      property: 'reaches a final state',
      isTarget: (s) => s.status === 'done',
    });
    expect(violations).toEqual([]);
  });

  it('goes red when a guard is broken (the suite can fail)', async () => {
    // An off-by-one, the likeliest bug in such a guard.
    const broken = machine.provide({
      guards: { canRevise: ({ context }) => context.revisions <= context.maxRevisions },
    });
    expect(() =>
      assertUnreachable(
        broken,
        function revisedPastTheLimit(s) {
          return s.context.revisions > s.context.maxRevisions;
        },
        options,
      ),
    ).toThrow(/revisedPastTheLimit is reachable/);
    // A path generated from the right machine fails its replay on the broken one.
    const name = 'classify:done#2 → draft:done#0 → REVISE → draft:done#0 → REVISE ⇒ escalated';
    const overLimit = suite.paths.find((p) => p.name === name);
    await expect(overLimit?.run()).resolves.toBeDefined();
    const failure = overLimit?.run({ machine: broken });
    await expect(failure).rejects.toBeInstanceOf(PathReplayError);
    await expect(failure).rejects.toThrow(/step 5 \(REVISE\): the state value differs/);
  });
});

describe('support triage with durable agents: the same paths, the same outcomes', () => {
  // The agents run durably (`durable(store)`): their outputs, failed runs included, are the
  // machines' outputs, so the outcomes above model them unchanged and every path is the same.
  const durableMachine = createTriageMachine(agents, { store: memoryStore() });
  const durableSuite = generatePathTests(durableMachine, options);

  it('generates the same paths', () => {
    expect(durableSuite.paths.map((p) => p.name)).toEqual(suite.paths.map((p) => p.name));
  });

  it('every path ends as it does with the agents as machines, each agent given { runId, input }', async () => {
    for (const [i, path] of durableSuite.paths.entries()) {
      const replay = await path.run();
      const expected = await (suite.paths[i] as (typeof suite.paths)[number]).run();
      expect(replay.snapshot.value).toBe(expected.snapshot.value);
      expect(replay.snapshot.output).toEqual(expected.snapshot.output);
      for (const call of replay.calls) {
        expect(call.input).toMatchObject({ runId: expect.stringMatching(/^T-5017\./) });
      }
    }
  });

  it('names each draft its own run, so a redraft is not the first draft resumed', async () => {
    const replay = await durableSuite.paths
      .find(
        (p) => p.name === 'classify:done#2 → draft:done#0 → REVISE → draft:done#0 → APPROVE ⇒ sent',
      )
      ?.run();
    expect(replay?.calls.map((c) => (c.input as { runId: string }).runId)).toEqual([
      'T-5017.classify',
      'T-5017.draft-0',
      'T-5017.draft-1',
    ]);
  });
});
