// SPEC D2/D3 on an app's own machine: every path of examples/support-triage's machine,
// generated from the statechart with `statecraft/testing` and replayed on a real actor whose
// three children (classify, research, draft) are settled step by step with scripted outcomes.
import {
  type ChainInput,
  type ChainOptions,
  type ChainOutput,
  createChain,
  createToolLoop,
  ModelError,
  type ToolLoopOptions,
  type ToolLoopOutput,
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
import { createActor, type SnapshotFrom, toPromise } from 'xstate';
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
type TriageSnapshot = SnapshotFrom<typeof machine>;

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
    research: {
      outputs: [outcomes.researched, outcomes.researchTimedOut],
      errors: [new Error('loop crashed')],
    },
    draft: { outputs: [outcomes.drafted, outcomes.failed], errors: [new Error('writer crashed')] },
  },
  describeEvent: (event) => event.type,
  limits: { maxDepth: 10, maxPaths: 100 },
} satisfies PathTestOptions<typeof machine>;

const suite = generatePathTests(machine, options);

/** The text of the messages a scripted child was started with (the machine computed them). */
const promptOf = (input: unknown): string =>
  (input as ChainInput).messages
    .flatMap((m) => (m.role === 'user' || m.role === 'system' ? [m.content] : []))
    .join('\n');

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
  });

  it('generates every path: 5 classifications and a crash, 3 research and 3 draft outcomes, 3 reviewer events', () => {
    expect(suite.paths.length).toBe(34);
  });

  for (const path of suite.paths) {
    it(path.name, async () => {
      const replay = await path.run();
      const end = replay.snapshot as TriageSnapshot;
      // The replay itself checked every step against the model; these are the app's rules.
      if (end.value === 'sent') {
        expect(end.output).toMatchObject({
          status: 'sent',
          reply: REPLY,
          reviewedBy: 'sam@support',
        });
      }
      if (end.value === 'escalated') expect(end.output?.status).toBe('escalated');
      const researchedFirst = replay.calls.some((c) => c.id === 'research');
      for (const [i, call] of replay.calls.filter((c) => c.id === 'draft').entries()) {
        const prompt = promptOf(call.input);
        // Every draft sees the findings of research, when there was research …
        if (researchedFirst) expect(prompt).toContain(`Research findings:\n${FINDINGS}`);
        else expect(prompt).toContain('(none: answer from the product documentation)');
        // … and a redraft sees the reviewer's notes and the draft they were about.
        if (i > 0) expect(prompt).toContain('Reviewer notes:\n- Say when the refund arrives.');
        if (i > 0) expect(prompt).toContain(`Previous draft:\n${REPLY}`);
      }
    });
  }
});

describe('support triage: coverage and properties (SPEC D3)', () => {
  it('the paths enter every state and take every transition', async () => {
    const { states, transitions } = suite.coverage;
    console.log(
      `support triage: ${suite.paths.length} paths, states ${states.covered}/${states.total}, transitions ${transitions.covered}/${transitions.total}`,
    );
    expect(states).toEqual({ covered: 6, total: 6, missing: [] });
    expect(transitions).toMatchObject({ covered: 14, total: 14, missing: [] });
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
