// SPEC R5: examples/support-triage, an app's own machine invoking a classification chain, a
// research tool loop and a drafting chain as child actors, with a human review in between.
// Runs it end to end on the scripted models through its public factory, and as a script.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import {
  type JournalStore,
  type LanguageModel,
  ModelError,
  type ModelRequest,
  memoryStore,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { createActor, toPromise, waitFor } from 'xstate';
import { createTriageAgents, type TriageModels } from '../examples/support-triage/agents.js';
import {
  createTriageMachine,
  type Ticket,
  type TriageEvent,
  type TriageOutput,
} from '../examples/support-triage/machine.js';
import { createScriptedModels, sampleTicket } from '../examples/support-triage/models.js';

/** Runs one ticket; the reviewer answers each draft with the next of `reviews`. */
async function runTicket(
  models: TriageModels,
  reviews: TriageEvent[],
  {
    ticket = sampleTicket,
    maxRevisions,
    agentTimeoutMs,
    store,
  }: { ticket?: Ticket; maxRevisions?: number; agentTimeoutMs?: number; store?: JournalStore } = {},
) {
  const machine = createTriageMachine(createTriageAgents(models), { store });
  const actor = createActor(machine, { input: { ticket, maxRevisions, agentTimeoutMs } });
  const path: string[] = [];
  const pending = [...reviews];
  actor.subscribe((snapshot) => {
    if (snapshot.value === path.at(-1)) return;
    path.push(snapshot.value);
    const review = snapshot.value === 'awaitingReview' ? pending.shift() : undefined;
    if (review) setTimeout(() => actor.send(review), 0);
  });
  actor.start();
  const output = await toPromise(actor);
  expectTypeOf(output).toEqualTypeOf<TriageOutput>();
  return { path, output, context: actor.getSnapshot().context };
}

const userText = (request: ModelRequest | undefined) =>
  request?.messages
    .toArray()
    .flatMap((m) => (m.role === 'user' ? [m.content] : []))
    .join('\n') ?? '';

const revise: TriageEvent = { type: 'REVISE', notes: 'Tell her when the refund will arrive.' };
const approve: TriageEvent = { type: 'APPROVE', reviewer: 'sam@support' };

describe('examples/support-triage: the app machine end to end (SPEC R5)', () => {
  it('classifies, researches, drafts, revises once on review and sends', async () => {
    const models = createScriptedModels();
    const { path, output } = await runTicket(models, [revise, approve]);

    expect(path).toEqual([
      'classifying',
      'researching',
      'drafting',
      'awaitingReview',
      'drafting',
      'awaitingReview',
      'sent',
    ]);
    if (output.status !== 'sent') throw new Error(`escalated: ${output.reason}`);
    expect(output.triage).toEqual({
      category: 'billing',
      urgency: 'high',
      summary: 'Charged twice for order A-1043; wants the duplicate refunded.',
    });
    expect(output.revisions).toBe(1);
    expect(output.reviewedBy).toBe('sam@support');
    expect(output.reply).toContain('We are refunding the duplicate charge (ch_882).');
    expect(output.reply).toContain('within 5-7 business days');
    // SPEC C9: the classification's fields flowed into the drafting chain, which added the reply.
    expect(output.intermediateResults).toEqual({ ...output.triage, reply: output.reply });

    // The research loop ran real tool rounds: two concurrent calls, then the article it found.
    expect(models.researcher.callCount).toBe(4); // three plans and the findings
    const secondPlan = JSON.parse(userText(models.researcher.requests[1]));
    expect(secondPlan.lastRoundResult).toMatchObject([
      { toolName: 'lookup_order', success: true, result: { orderId: 'A-1043' } },
      { toolName: 'search_kb', success: true, result: [{ id: 'KB-12' }] },
    ]);
    expect(userText(models.researcher.requests[3])).toContain(
      'Triage: Charged twice for order A-1043',
    );
    // The writer saw the findings (from the tools' results) first, then the reviewer's notes.
    const [first, second] = models.writer.requests.map(userText);
    expect(first).toContain(
      'Order A-1043 (Pro monthly) has 2 charges of $29 on 2025-03-01: ch_881 and ch_882 [Look up order A-1043].',
    );
    expect(first).toContain('refund arrives within 5-7 business days. [Read KB-12]');
    expect(first).not.toContain('Reviewer notes');
    expect(second).toContain('Reviewer notes:\n- Tell her when the refund will arrive.');
    expect(second).toContain('Previous draft:\nHi Dana, sorry about the double charge');
    expect(models.writer.callCount).toBe(2);
    models.classifier.assertComplete();
  });

  it('skips research for a how-to question', async () => {
    const models = {
      ...createScriptedModels(),
      classifier: new ScriptedModel([
        { text: '{"category": "how-to", "urgency": "low", "summary": "Wants to export data."}' },
      ]),
    };
    const ticket = { ...sampleTicket, subject: 'Export?', body: 'How do I export my data?' };
    const { path, output } = await runTicket(models, [approve], { ticket });

    expect(path).toEqual(['classifying', 'drafting', 'awaitingReview', 'sent']);
    expect(output.status).toBe('sent');
    expect(models.researcher.callCount).toBe(0);
    expect(userText(models.writer.requests[0])).toContain(
      'Research findings:\n(none: answer from the product documentation)',
    );
  });

  // A failed run reaches the machine the same way whether the agents run as machines or
  // durably: the same transition, the same reason.
  it.each(
    [
      {
        why: 'the model fails',
        classifier: () =>
          new ScriptedModel([{ error: new ModelError('the provider is overloaded') }]),
        reason: 'classification failed (MODEL_ERROR: the provider is overloaded)',
      },
      {
        why: 'no answer passes the schema in three tries',
        classifier: () =>
          new ScriptedModel(() => ({ text: 'It is about money, I think.' }), {
            expectedCalls: 3,
          }),
        reason: 'classification failed (PROTOCOL_ERROR',
      },
    ].flatMap((failure) => [
      { ...failure, agents: 'machines' },
      { ...failure, agents: 'durable' },
    ]),
  )(
    'escalates when the classification chain fails: $why (agents as $agents)',
    async ({ classifier: makeClassifier, reason, agents }) => {
      const classifier = makeClassifier();
      const models = { ...createScriptedModels(), classifier };
      const store = agents === 'durable' ? memoryStore() : undefined;
      const { path, output } = await runTicket(models, [], { store });

      expect(path).toEqual(['classifying', 'escalated']);
      if (output.status !== 'escalated') throw new Error('sent without a triage');
      expect(output.reason).toContain(reason);
      expect(output.triage).toBeUndefined();
      expect(models.researcher.callCount + models.writer.callCount).toBe(0);
      classifier.assertComplete();
      // The durable run ended in its journal as failed: restoring the ticket would not rerun it.
      if (store) {
        expect((await store.read('T-5017.classify'))?.at(-1)).toEqual({
          type: 'end',
          status: 'failed',
        });
      }
    },
  );

  it('with durable agents: the same path and reply, each agent run ended in the store', async () => {
    const store = memoryStore();
    const { path, output } = await runTicket(createScriptedModels(), [revise, approve], { store });
    expect(path).toEqual([
      'classifying',
      'researching',
      'drafting',
      'awaitingReview',
      'drafting',
      'awaitingReview',
      'sent',
    ]);
    if (output.status !== 'sent') throw new Error(`escalated: ${output.reason}`);
    expect(output.reply).toContain('We are refunding the duplicate charge (ch_882).');
    const runs = await store.list();
    expect(runs.map((r) => r.runId).sort()).toEqual([
      'T-5017.classify',
      'T-5017.draft-0',
      'T-5017.draft-1',
      'T-5017.research',
    ]);
    for (const run of runs) {
      expect((await store.read(run.runId))?.at(-1)).toEqual({ type: 'end', status: 'succeeded' });
    }
  });

  it('escalates a ticket whose agent does not answer in time, and cancels the call', async () => {
    // A provider that never answers: its call ends only when aborted.
    const aborted: boolean[] = [];
    const hang = (signal: AbortSignal | undefined) =>
      new Promise<never>((_, reject) =>
        signal?.addEventListener('abort', () => {
          aborted.push(true);
          reject(signal.reason);
        }),
      );
    const silent: LanguageModel = {
      specificationVersion: new ScriptedModel([]).specificationVersion,
      provider: 'silent',
      modelId: 'silent',
      generate: (_, options) => hang(options?.signal),
      stream: (_, options) => ({
        [Symbol.asyncIterator]: () => ({ next: () => hang(options?.signal) }),
      }),
    };
    const models = { ...createScriptedModels(), writer: silent };
    const started = Date.now();
    const { path, output } = await runTicket(models, [], { agentTimeoutMs: 50 });

    expect(path).toEqual(['classifying', 'researching', 'drafting', 'escalated']);
    expect(output).toMatchObject({
      status: 'escalated',
      reason: 'the writer did not answer within 50 ms',
      triage: { category: 'billing' },
      draft: undefined,
      openNotes: [],
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    // Leaving `drafting` stopped the drafting chain, whose model call was aborted.
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(aborted).toEqual([true]);
  });

  it('escalates a rejected draft, and a draft still revised past the limit', async () => {
    const rejected = await runTicket(createScriptedModels(), [
      { type: 'REJECT', reason: 'we do not refund annual plans' },
    ]);
    expect(rejected.path.at(-1)).toBe('escalated');
    expect(rejected.output).toMatchObject({
      status: 'escalated',
      reason: 'rejected by the reviewer: we do not refund annual plans',
      triage: { category: 'billing' },
    });

    const models = createScriptedModels();
    const revisedTooOften = await runTicket(models, [revise, revise], { maxRevisions: 1 });
    expect(revisedTooOften.path).toEqual([
      'classifying',
      'researching',
      'drafting',
      'awaitingReview',
      'drafting',
      'awaitingReview',
      'escalated',
    ]);
    expect(revisedTooOften.output).toMatchObject({
      status: 'escalated',
      reason: 'still not approved after 1 revision',
      // The reviewer's last notes go to the person who takes the ticket over.
      openNotes: [revise.type === 'REVISE' && revise.notes],
    });
    expect(revisedTooOften.context.reviewedBy).toBeUndefined();
    expect(models.writer.callCount).toBe(2);
  });
});

describe('the review wait is plain JSON', () => {
  it('persists at awaitingReview and resumes from the snapshot in a new actor', async () => {
    const machine = createTriageMachine(createTriageAgents(createScriptedModels()));
    const first = createActor(machine, { input: { ticket: sampleTicket } }).start();
    await waitFor(first, (snapshot) => snapshot.value === 'awaitingReview');
    const saved = JSON.stringify(first.getPersistedSnapshot());
    first.stop();

    // A later process, e.g. when the reviewer answers the next day.
    // `input` is required by the machine's type; a restored snapshot ignores it.
    const resumed = createActor(machine, {
      snapshot: JSON.parse(saved),
      input: { ticket: sampleTicket },
    }).start();
    resumed.send(approve);
    const output = await toPromise(resumed);
    expect(output).toMatchObject({ status: 'sent', reviewedBy: 'sam@support', revisions: 0 });
  });
});

describe('npm run triage (examples/support-triage/run.ts)', () => {
  it('prints the path through review and the sent reply', async () => {
    const { stdout } = await promisify(execFile)('node', [
      '--conditions=statecraft-source',
      '--import',
      'tsx',
      'examples/support-triage/run.ts',
    ]);
    expect(stdout).toContain('Running on the embedded scripted models.');
    expect(stdout).toContain('  reviewer: {"type":"REVISE","notes":"Tell her when the refund');
    expect(stdout).toContain(
      'path: classifying → researching → drafting → awaitingReview → drafting → awaitingReview → sent',
    );
    expect(stdout).toContain('"status": "sent"');
    expect(stdout).toContain('"reviewedBy": "sam@support"');
  }, 30_000);
});
