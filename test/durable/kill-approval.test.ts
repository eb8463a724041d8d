// SPEC H2 / X2 (issue 16): approvals survive kill -9. A child process runs a durable chain
// (fileStore) whose first step calls `drop_table` (needs approval) and `read_table`; the test
// kills it with SIGKILL while the run waits for a decision, decides from this process with
// approvals(store), and a new child resumes the run. A decision sent twice counts once; a
// deadline that passed while no process ran the run fires once, on resume, and never again.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { approvals, fileStore } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { afterAll, describe, expect, it } from 'vitest';
import { childOutput } from '../support/child-output.js';
import { APPROVAL_RUN_ID, type ApprovalChildConfig } from './approval-workload.js';

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 'approval-child.ts');
const CHILD_TIMEOUT_MS = 15_000;
const children = new Set<ChildProcess>();
const roots: string[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function place() {
  const root = mkdtempSync(path.join(tmpdir(), 'statecraft-approval-'));
  roots.push(root);
  return { dir: path.join(root, 'journal'), log: path.join(root, 'effects.log') };
}

function start(config: ApprovalChildConfig) {
  const child = spawn(
    process.execPath,
    ['--conditions=statecraft-source', '--import', 'tsx', CHILD, JSON.stringify(config)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  const output = childOutput(child);
  void output.exited.then(() => children.delete(child));
  const bounded = <T>(promise: Promise<T>, what: string) =>
    Promise.race([
      promise,
      sleep(CHILD_TIMEOUT_MS).then(() => {
        throw new Error(`timed out waiting for ${what}; stderr:\n${output.stderr()}`);
      }),
    ]);
  return {
    child,
    /** How it ended (a signal or exit code), however early. */
    exited: output.exited,
    printed: (line: string) =>
      bounded(
        output.until((lines) => lines.includes(line), `'${line}'`),
        `'${line}'`,
      ),
    async output(): Promise<{ text?: string; error?: string; code?: string }> {
      const code = await bounded(output.exited, `child ${config.proc} to end`);
      if (code !== 0)
        throw new Error(`child ${config.proc} ended with ${code}:\n${output.stderr()}`);
      const line = output.lines.find((l) => l.startsWith('output '));
      if (!line) throw new Error(`child ${config.proc} printed no output`);
      return JSON.parse(line.slice('output '.length));
    },
  };
}

/** Starts a run in a child and kills it with SIGKILL once the run waits for call c1. */
async function killWhileWaiting(
  where: { dir: string; log: string },
  options: Partial<ApprovalChildConfig> = {},
) {
  const a = start({ ...where, proc: 'A', mode: 'invoke', ...options });
  await a.printed('asked c1');
  // Killed once the step's other call finished and its result is on disk: the run has
  // nothing left to do but wait.
  for (let i = 0; !(await journalOf(where.dir)).some(isResultOf('c2')); i++) {
    if (i > 500) throw new Error("read_table's result never reached the journal");
    await sleep(10);
  }
  a.child.kill('SIGKILL');
  expect(await a.exited).toBe('SIGKILL');
}

const effects = (log: string) => readFileSync(log, 'utf8').trim().split('\n');
const journalOf = async (dir: string) =>
  ((await fileStore(dir).read(APPROVAL_RUN_ID)) ?? []) as JournalEntry[];
const isResultOf = (callId: string) => (entry: JournalEntry) =>
  entry.type === 'result' && entry.callId === callId;
const decisions = (journal: readonly JournalEntry[]) =>
  journal.filter((entry) => entry.type === 'decision');

// Child processes start tsx and fsync every entry: seconds each on a loaded 2-core machine.
describe('approvals across kill -9 (fileStore)', { timeout: 60_000 }, () => {
  it('an approval given while no process runs the run takes effect on resume; no call repeats', async () => {
    const where = place();
    await killWhileWaiting(where);
    const store = fileStore(where.dir);
    const pending = await approvals(store).list();
    expect(pending.map((p) => [p.runId, p.callId, p.tool, p.arguments])).toEqual([
      [APPROVAL_RUN_ID, 'c1', 'drop_table', { table: 'logs' }],
    ]);
    expect(await approvals(store).approve(APPROVAL_RUN_ID, 'c1')).toBe(true);
    // A second decision, from anyone, counts for nothing.
    expect(await approvals(store).reject(APPROVAL_RUN_ID, 'c1', 'changed my mind')).toBe(false);

    const b = start({ ...where, proc: 'B', mode: 'resume' });
    expect(await b.output()).toEqual({ text: 'drop_table logs | read_table logs' });
    // read_table ran once, before the kill; drop_table once, after the approval; one model
    // call each side of the kill (the first was journaled, not made again).
    expect(effects(where.log)).toEqual(['A model 0', 'A tool c2', 'B tool c1', 'B model 2']);
    expect(decisions(await journalOf(where.dir))).toEqual([
      expect.objectContaining({ callId: 'c1', approved: true }),
    ]);
    expect(await approvals(store).list()).toEqual([]);
  });

  it('a rejection takes effect once: the call never runs, even when resumed again', async () => {
    const where = place();
    const a = start({ ...where, proc: 'A', mode: 'invoke', parkForApproval: true });
    const parked = await a.output();
    expect(parked.code).toBe('APPROVAL_PENDING');
    const store = fileStore(where.dir);
    expect(await approvals(store).reject(APPROVAL_RUN_ID, 'c1', 'keep the logs')).toBe(true);
    expect(await approvals(store).approve(APPROVAL_RUN_ID, 'c1')).toBe(false);
    const b = start({ ...where, proc: 'B', mode: 'resume' });
    expect(await b.output()).toEqual({ text: 'Not approved: keep the logs | read_table logs' });
    const journal = await journalOf(where.dir);
    const c = start({ ...where, proc: 'C', mode: 'resume' });
    expect(await c.output()).toEqual({ text: 'Not approved: keep the logs | read_table logs' });
    expect(await journalOf(where.dir)).toEqual(journal);
    expect(decisions(journal)).toHaveLength(1);
    expect(effects(where.log)).toEqual(['A model 0', 'A tool c2', 'B model 2']);
  });

  it('a deadline that passed while no process ran the run fires once, on resume', async () => {
    const where = place();
    const timeout = { approvalTimeoutMs: 1500 };
    await killWhileWaiting(where, timeout);
    const [asked] = await approvals(fileStore(where.dir)).list();
    await sleep(Math.max(0, (asked?.deadline ?? 0) - Date.now() + 50));
    const b = start({ ...where, proc: 'B', mode: 'resume', ...timeout });
    expect(await b.output()).toEqual({
      text: 'Not approved: no decision in time | read_table logs',
    });
    const journal = await journalOf(where.dir);
    expect(decisions(journal)).toEqual([
      expect.objectContaining({ callId: 'c1', approved: false, timedOut: true }),
    ]);
    const c = start({ ...where, proc: 'C', mode: 'resume', ...timeout });
    expect(await c.output()).toEqual({
      text: 'Not approved: no decision in time | read_table logs',
    });
    expect(await journalOf(where.dir)).toEqual(journal);
    expect(effects(where.log)).toEqual(['A model 0', 'A tool c2', 'B model 2']);
  });

  it("a deadline with onApprovalTimeout 'fail' fails the run once, and its replay fails alike", async () => {
    const where = place();
    const timeout = { approvalTimeoutMs: 1500, onApprovalTimeout: 'fail' as const };
    await killWhileWaiting(where, timeout);
    await sleep(1600);
    const b = start({ ...where, proc: 'B', mode: 'resume', ...timeout });
    const failed = await b.output();
    expect(failed.code).toBe('TIMEOUT');
    const journal = await journalOf(where.dir);
    expect(journal.at(-1)).toMatchObject({ type: 'end', status: 'failed' });
    const c = start({ ...where, proc: 'C', mode: 'resume', ...timeout });
    expect(await c.output()).toEqual(failed);
    expect(await journalOf(where.dir)).toEqual(journal);
    expect(effects(where.log)).toEqual(['A model 0', 'A tool c2']);
  });
});
