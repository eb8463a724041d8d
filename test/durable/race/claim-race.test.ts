// Several processes resume the same crashed run at the same instant, round after round: in
// every round exactly one of them takes the run over and finishes it (its in-flight tool call
// is issued again once, never more), the others are refused with run-busy (or, coming late,
// attach to the ended run), and the journal stays valid and resumable.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { fileStore } from 'statecraft';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ANSWER, raceChain } from './race-chain.js';

const CHILD = fileURLToPath(new URL('./race-child.ts', import.meta.url));
const RACERS = 4;
const ROUNDS = Number(process.env.STATECRAFT_RACE_ROUNDS ?? 200);

interface Reply {
  readonly runId: string;
  readonly pid: number;
  readonly toolRuns: number;
  readonly outcome: 'done' | 'busy' | 'error';
  readonly text?: string;
  readonly liveModelCalls?: number;
  readonly message?: string;
}

const children: ChildProcess[] = [];
let dir: string;

function child(args: readonly string[], ipc: boolean): ChildProcess {
  const process_ = spawn(
    process.execPath,
    ['--conditions=statecraft-source', '--import', 'tsx', CHILD, ...args],
    {
      stdio: ipc ? ['ignore', 'pipe', 'inherit', 'ipc'] : ['ignore', 'pipe', 'inherit'],
    },
  );
  children.push(process_);
  return process_;
}

function until<T>(
  what: string,
  ms: number,
  wait: (done: (value: T) => void, fail: (error: Error) => void) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
    wait(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'statecraft-race-'));
  // One process starts every run and dies with each one's tool call in flight.
  const creator = child(['create', dir, String(ROUNDS)], false);
  await until<void>('the runs to start', 120_000, (done, fail) => {
    creator.stdout?.on('data', (data: Buffer) => {
      if (String(data).includes('ready')) done();
    });
    creator.on('exit', () => fail(new Error('the process starting the runs exited')));
  });
  creator.kill('SIGKILL');
  await until<void>('the creator to die', 10_000, (done) => {
    if (creator.exitCode !== null || creator.signalCode !== null) done();
    else creator.on('exit', () => done());
  });
}, 180_000);

afterAll(() => {
  for (const process_ of children) process_.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('resumers racing for one crashed run', () => {
  it(`exactly one of ${RACERS} processes takes the run over, in each of ${ROUNDS} rounds`, async () => {
    const racers = Array.from({ length: RACERS }, () => child(['race', dir], true));
    await Promise.all(
      racers.map((racer) =>
        until<void>('a racer to start', 60_000, (done) =>
          racer.on('message', (message: { ready?: boolean }) => {
            if (message.ready) done();
          }),
        ),
      ),
    );
    const check = raceChain(async () => {
      throw new Error('a finished run ran its tool again');
    });
    const outcomes = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      const runId = `race-${round}`;
      const replies = Promise.all(
        racers.map((racer) =>
          until<Reply>(`round ${round}`, 60_000, (done) => {
            const onMessage = (reply: Reply) => {
              if (reply.runId !== runId) return;
              racer.off('message', onMessage);
              done(reply);
            };
            racer.on('message', onMessage);
          }),
        ),
      );
      const at = Date.now() + 25;
      for (const racer of racers) racer.send({ runId, at });
      const round_ = await replies;
      for (const reply of round_) {
        outcomes.set(reply.outcome, (outcomes.get(reply.outcome) ?? 0) + 1);
      }
      const errors = round_.filter((reply) => reply.outcome === 'error');
      expect(errors, `round ${round}`).toEqual([]);
      // The in-flight call ran again exactly once, in exactly one process, which made the
      // run's remaining model call; the others were refused or attached to the ended run.
      expect(
        round_.reduce((sum, reply) => sum + reply.toolRuns, 0),
        `round ${round}`,
      ).toBe(1);
      const live = round_.filter((reply) => (reply.liveModelCalls ?? 0) > 0);
      expect(live, `round ${round}`).toHaveLength(1);
      for (const reply of round_) {
        if (reply.outcome === 'done') expect(reply.text).toBe(ANSWER);
      }
      // The journal is whole: one end, read by a fresh store, and resumable again.
      const entries = (await fileStore(dir).read(runId)) ?? [];
      expect(
        entries.filter((entry) => entry.type === 'end'),
        `round ${round}`,
      ).toHaveLength(1);
      expect(entries.at(-1)?.type).toBe('end');
      const again = await check.resume(runId, { store: fileStore(dir) });
      expect(again.text).toBe(ANSWER);
    }
    expect(outcomes.get('busy') ?? 0).toBeGreaterThan(0);
    // No lock, claim or temporary file anywhere: only the journals and the index.
    const others = readdirSync(dir).filter((name) => !name.endsWith('.jsonl'));
    expect(others).toEqual([]);
  }, 600_000);
});
