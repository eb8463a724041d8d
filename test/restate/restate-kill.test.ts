// SPEC X3 under faults, with real processes: a worker killed with SIGKILL under load, and the
// server and every worker killed while runs wait for people.

import type { RunDetails } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { isDecisionEntry } from '../../src/durable/run-entries.js';
import { useDeployment } from './use-deployment.js';
import { type EffectLine, modelCallKey } from './workload.js';

const deployed = useDeployment({ processes: 2, effectMs: 25 });

const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
};

/** Starts of each effect key, in log order. */
function startsByKey(lines: readonly EffectLine[]): Map<string, EffectLine[]> {
  const starts = new Map<string, EffectLine[]>();
  for (const line of lines) {
    if (line.phase !== 'start') continue;
    starts.set(line.key, [...(starts.get(line.key) ?? []), line]);
  }
  return starts;
}

describe('statecraft on Restate, killed', { timeout: 180_000 }, () => {
  it('finishes every run when a worker is killed with SIGKILL under load, repeating no finished call', async () => {
    const runs = deployed().runs();
    const ids = Array.from({ length: 80 }, (_, i) => i);
    const agentOf = (i: number) => (i % 4 === 3 ? 'survey' : 'trip');
    await Promise.all(ids.map((i) => runs.submit(`kill-${i}`, agentOf(i), `${agentOf(i)} ${i}`)));

    // Kill a worker with calls in flight, once both have served some.
    let victim: number | undefined;
    await until('both workers to be busy', () => {
      const lines = deployed().effects();
      const busy = new Set(lines.map((line) => line.pid));
      if (busy.size < 2 || lines.length < 60) return false;
      const open = new Map<string, number>();
      for (const line of lines) {
        if (line.phase === 'start') open.set(line.key, line.pid);
        else open.delete(line.key);
      }
      victim = [...open.values()][0];
      return victim !== undefined;
    });
    const killed = victim as number;
    const before = deployed().effects().length;
    process.kill(killed, 'SIGKILL');

    const results = await Promise.all(
      ids.map((i) => runs.result<Record<string, unknown>>(`kill-${i}`, { timeoutMs: 120_000 })),
    );
    ids.forEach((i) => {
      const result = results[i] ?? {};
      if (agentOf(i) === 'trip') {
        expect(result.text).toBe(`trip ${i}: reserve-${i}, charge-${i}, ship-${i}`);
      } else {
        expect(result.answer).toMatch(/^survey done/);
      }
    });

    const lines = deployed().effects();
    expect(lines.length).toBeGreaterThan(before);
    const repeated = [...startsByKey(lines)].filter(([, starts]) => starts.length > 1);
    for (const [, starts] of repeated) {
      // Only a call the killed worker had started runs again: once, on another worker.
      expect(starts.map((start) => start.pid === killed)).toEqual([true, false]);
    }
    // And each of those was one the journal knew as started but not finished: the resumed run
    // flags it `possiblyRepeated`. A tool's key is its idempotency key, `<runId>:<callId>`, so
    // the re-run carried the same key; a model call's is the hash of its request. A finished
    // call, journaled, was answered from there.
    const flagged = new Set<string>();
    ids.forEach((i) => {
      const details = (results[i] as { details(): RunDetails }).details();
      for (const call of details.toolCalls) {
        if (call.possiblyRepeated) flagged.add(`kill-${i}:${call.call.id}`);
      }
      for (const call of details.modelCalls) {
        if (call.possiblyRepeated) flagged.add(modelCallKey(call.request));
      }
    });
    expect(repeated.map(([key]) => key).filter((key) => !flagged.has(key))).toEqual([]);
    // The kill landed mid-call: the resumed runs issued something again.
    expect(flagged.size).toBeGreaterThan(0);
    const journals = await Promise.all(ids.map((i) => runs.store.read(`kill-${i}`)));
    expect(journals.every((entries) => entries?.at(-1)?.type === 'end')).toBe(true);
  });

  it('keeps an approval and its deadline across a SIGKILL of the server and every worker', async () => {
    const runs = deployed().runs();
    await runs.submit('approve-1', 'refund', 'refund 1');
    await runs.submit('deadline-1', 'refund-deadline', 'refund 2');
    await until('both runs to wait', async () => {
      const statuses = await Promise.all([runs.status('approve-1'), runs.status('deadline-1')]);
      return statuses.every((status) => status?.state === 'awaiting-approval');
    });
    expect(await runs.status('approve-1')).toMatchObject({
      state: 'awaiting-approval',
      waiting: [{ callId: 'f1', tool: 'refund', promise: 'approval:f1' }],
    });

    await deployed().workers.crash();
    await deployed().server.crash();
    await deployed().server.restart();
    await deployed().startWorkers();

    // From this process, after the restart: the first decision counts, a second does not.
    expect(await runs.approvals.approve('approve-1', 'f1')).toBe(true);
    expect(await runs.approvals.approve('approve-1', 'f1')).toBe(false);
    expect(await runs.approvals.reject('approve-1', 'f1', 'changed my mind')).toBe(false);
    const approved = await runs.result<{ text: string }>('approve-1', { timeoutMs: 60_000 });
    expect(approved.text).toBe('refund 1: refund-1');

    // The deadline (3 s after the request) fires once, after the restart, by its durable timer.
    const timedOut = await runs.result<{ text: string }>('deadline-1', { timeoutMs: 60_000 });
    expect(timedOut.text).toBe('refund 2: Not approved: no decision in time');
    const decisions = ((await runs.store.read('deadline-1')) ?? []).filter(isDecisionEntry);
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ callId: 'f2', approved: false, timedOut: true });
    expect(await runs.approvals.approve('deadline-1', 'f2')).toBe(false);

    const refunds = deployed()
      .effects()
      .filter((line) => line.kind === 'tool');
    expect(
      refunds.filter((line) => line.key === 'approve-1:f1' && line.phase === 'start'),
    ).toHaveLength(1);
    expect(refunds.filter((line) => line.key === 'deadline-1:f2')).toHaveLength(0);
    expect(await runs.status('deadline-1')).toMatchObject({ state: 'succeeded' });
  });
});
