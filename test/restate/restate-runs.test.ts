// SPEC X3: chains and tool loops on Restate, started for real on 127.0.0.1: a server from the
// npm package with a temporary base directory, and one deployment of 2 worker processes.
import { memoryStore } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { signedPost } from './signed-post.js';
import { useDeployment } from './use-deployment.js';
import { inputOf, surveyLoop, tripChain } from './workload.js';

const deployed = useDeployment({ processes: 2 });

/** What a run's output says, without its timings: text, transcript, tool results. */
function comparable(agent: 'trip' | 'survey', result: Record<string, unknown>) {
  if (agent === 'trip') {
    return { text: result.text, transcript: result.transcript, steps: result.iterations };
  }
  return {
    answer: result.answer,
    rounds: result.rounds,
    actionResults: result.actionResults,
    plans: result.plans,
  };
}

describe('statecraft on Restate', { timeout: 120_000 }, () => {
  it('runs 200 chains and tool loops on 2 worker processes with the outputs of the same runs in memory', async () => {
    // No adminUrl: list() asks the workers, which hold it.
    const runs = deployed().runs();
    const work = Array.from({ length: 200 }, (_, i) => {
      const agent = i % 2 === 0 ? ('trip' as const) : ('survey' as const);
      return { agent, runId: `load-${i}`, input: inputOf(agent, i) };
    });
    await Promise.all(work.map((w) => runs.submit(w.runId, w.agent, w.input)));
    const onRestate = await Promise.all(
      work.map((w) => runs.result<Record<string, unknown>>(w.runId, { timeoutMs: 90_000 })),
    );

    const trip = tripChain();
    const survey = surveyLoop();
    const store = memoryStore();
    const inMemory = await Promise.all(
      work.map(
        (w) =>
          (w.agent === 'trip'
            ? trip.invoke(w.input, { runId: w.runId, store })
            : survey.invoke(w.input, { runId: w.runId, store })) as unknown as Promise<
            Record<string, unknown>
          >,
      ),
    );
    work.forEach((w, i) => {
      expect(comparable(w.agent, onRestate[i] ?? {})).toEqual(
        comparable(w.agent, inMemory[i] ?? {}),
      );
    });
    expect(onRestate[0]?.text).toBe('trip 0: reserve-0, charge-0, ship-0');
    expect(typeof onRestate[0]?.details).toBe('function');

    // The journals are the same entries, in Restate and in memory, but for their timings.
    const shape = (entries: readonly Record<string, unknown>[] | undefined) =>
      entries?.map(({ type, seq, callId, effect, hash }) => ({ type, seq, callId, effect, hash }));
    for (const w of work.slice(0, 10)) {
      expect(shape(await runs.store.read(w.runId))).toEqual(shape(await store.read(w.runId)));
    }

    // Both processes served runs: Restate spread its connections over the cluster.
    const pids = new Set(
      deployed()
        .effects()
        .map((line) => line.pid),
    );
    expect(pids.size).toBe(2);

    const status = await runs.status('load-0');
    expect(status).toMatchObject({ state: 'succeeded', agent: 'trip' });
    const listed = await runs.store.list();
    expect(listed.filter((run) => run.runId.startsWith('load-'))).toHaveLength(200);
    expect(await runs.status('never-submitted')).toBeUndefined();
  });

  it('attaches a second submission of a run id to the one run, and refuses it other input', async () => {
    const runs = deployed().runs();
    const first = await runs.submit('twice-1', 'trip', 'trip 7001');
    const second = await runs.submit('twice-1', 'trip', 'trip 7001');
    expect(first.attached).toBe(false);
    expect(second.attached).toBe(true);
    const result = await runs.result<{ text: string }>('twice-1');
    expect(result.text).toBe('trip 7001: reserve-7001, charge-7001, ship-7001');
    const models = deployed()
      .effects()
      .filter((line) => line.kind === 'model' && line.phase === 'start');
    const keys = models.map((line) => line.key);
    expect(new Set(keys).size).toBe(keys.length);
    // Saying what differs: the message the run started with, and the one submitted now.
    await expect(runs.submit('twice-1', 'trip', 'trip 7002')).rejects.toMatchObject({
      code: 'JOURNAL_MISMATCH',
      changes: [{ option: 'messages[0]', values: '"trip 7001" → "trip 7002"' }],
    });
  });

  it('wakes a parked run when its maxExecutionTime ends (a durable timer), which fails it', async () => {
    const runs = deployed().runs();
    await runs.submit('limited-1', 'refund-limited', 'refund 9');
    const error = await runs.result('limited-1', { timeoutMs: 30_000 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'TIMEOUT' });
    expect(String((error as Error).message)).toMatch(/maxExecutionTime/);
    expect(await runs.status('limited-1')).toMatchObject({ state: 'failed', segment: 2 });
    // The failed run keeps its transcript: the model's call, never approved.
    const partial = (error as { partial?: { transcript?: unknown[] } }).partial;
    expect(partial?.transcript?.length).toBeGreaterThan(1);
  });

  it('fails a run of an agent no worker serves, saying which agents there are, with status failed', async () => {
    const runs = deployed().runs();
    await runs.submit('nobody-1', 'nobody', 'hello');
    await expect(runs.result('nobody-1')).rejects.toThrow(/No agent 'nobody'.*trip/);
    expect(await runs.status('nobody-1')).toMatchObject({ state: 'failed', agent: 'nobody' });
    // The same id submitted for another agent is refused, not attached.
    await expect(runs.submit('nobody-1', 'trip', 'hello')).rejects.toMatchObject({
      code: 'JOURNAL_MISMATCH',
      changes: [{ option: 'agent', values: 'nobody → trip' }],
    });
  });

  it('ends a raw submission it cannot run failed, never retrying it: unreadable input, an inherited name', async () => {
    const runs = deployed().runs();
    const send = async (runId: string, body: unknown) => {
      const target = { service: 'statecraftRun', key: runId, handler: 'run' };
      const response = await signedPost(deployed(), target, body, { send: true });
      expect(response.status).toBe(202);
    };
    await send('raw-1', { agent: 'trip', input: { $sc: 'no-such-tag' } });
    await expect(runs.result('raw-1', { timeoutMs: 20_000 })).rejects.toThrow();
    expect(await runs.status('raw-1')).toMatchObject({ state: 'failed', segment: 0 });
    await send('raw-2', { agent: 'constructor', input: 'x' });
    await expect(runs.result('raw-2', { timeoutMs: 20_000 })).rejects.toThrow(
      /No agent 'constructor'/,
    );
  });

  it('asks again about a call id the model reuses in a later step, on its own durable promise', async () => {
    const runs = deployed().runs();
    await runs.submit('twice-ids', 'refund-twice', 'twice 40');
    const waitingOn = async (promise: string) => {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; ) {
        const status = await runs.status('twice-ids');
        if (status?.state === 'awaiting-approval' && status.waiting[0]?.promise === promise) return;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      throw new Error(`never waited on ${promise}`);
    };
    await waitingOn('approval:t40');
    expect(await runs.approvals.approve('twice-ids', 't40')).toBe(true);
    await waitingOn('approval:t40:2');
    expect(await runs.approvals.reject('twice-ids', 't40', 'once is enough')).toBe(true);
    const result = await runs.result<{ text: string }>('twice-ids', { timeoutMs: 30_000 });
    expect(result.text).toBe('twice 40: refund-40, Not approved: once is enough');
  });
});
