// The harness of the kill -9 tests (kill-chain.test.ts, kill-loop.test.ts): draws the seeded
// kill points, runs a child process (A) that is killed with SIGKILL at one of them, lets a
// second one (B) take the run over, and checks what every durable run must do whatever the
// moment of the kill: no tool call whose result was journaled runs again, a call in flight is
// issued again once with the same idempotency key, details() says which calls are which, and
// the journal goes on from where the kill left it to a successful end. Each test adds what its
// runs do besides tool calls (model calls, plans, responses) and compares the final output.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pLimit from 'p-limit';
import { fileStore } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { afterAll, beforeAll, describe, type ExpectStatic, expect, it } from 'vitest';
import { childOutput } from '../support/child-output.js';
import { seededRandom } from '../support/seeded-random.js';
import {
  type AnyEffectLine,
  answerType,
  type ChildConfig,
  OUTPUT_PREFIX,
  RUN_DONE,
  type ToolCallFlags,
  type ToolEffectLine,
} from './kill-child-kit.js';

/** Bounds on every wait for a child (never reached when all goes well). */
const CHILD_TIMEOUT_MS = 20_000;
/** Points run this many at a time: each costs two child processes of ~1.5 s. */
const PARALLEL = 3;

/** Where a kill is meant to land: once the child printed `marker`, `delayMs` later. */
export interface Anchor {
  readonly marker: string;
  /** The delay is drawn from [min, max] ms; the child lingers well past max there. */
  readonly delay: readonly [number, number];
}

/** A kind of moment, with the progress lines a kill can follow; `count` points are drawn. */
export interface KillKind {
  readonly kind: string;
  readonly covers: string;
  readonly count: number;
  readonly anchors: readonly Anchor[];
}

export interface KillPoint {
  readonly name: string;
  readonly kind: string;
  readonly marker: string;
  readonly delayMs: number;
  /** How the second process takes the run over. */
  readonly mode: ChildConfig['mode'];
}

/**
 * `count` points of each kind, each at a distinct anchor drawn from `seed`, then one after the
 * run ended (its end entry on disk, its process killed before exiting). The second process
 * resumes the run (`resume`) and invokes it again with the same run id and input (`invoke`)
 * by turns.
 */
function drawKillPoints(seed: number, kinds: readonly KillKind[]): KillPoint[] {
  const random = seededRandom(seed);
  const draw = ([min, max]: readonly [number, number]) =>
    min + Math.floor(random() * (max - min + 1));
  return [
    ...kinds.flatMap(({ kind, count, anchors }) => {
      const pool = [...anchors];
      return Array.from({ length: count }, () => {
        const [anchor] = pool.splice(Math.floor(random() * pool.length), 1) as [Anchor];
        return { kind, marker: anchor.marker, delayMs: draw(anchor.delay) };
      });
    }),
    { kind: 'after-end', marker: RUN_DONE, delayMs: 0 },
  ].map((point, i) => {
    const mode = i % 2 === 0 ? 'resume' : 'invoke';
    const name = `#${i + 1} ${point.kind}: kill ${point.delayMs} ms after ${point.marker}, then ${mode}`;
    return { ...point, mode, name };
  });
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function readEffects<Line extends AnyEffectLine>(file: string): Line[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Line);
}

const isToolLine = <Line extends AnyEffectLine>(line: Line): line is Line & ToolEffectLine =>
  line.kind === 'tool';

/** A place for one run: its journal directory and its side-effect log. */
interface RunPlace {
  readonly dir: string;
  readonly log: string;
}

/** What a kill and the resume after it left: the journal and side effects of A, then of B. */
export interface KillOutcome<Output, Line> {
  readonly before: readonly JournalEntry[];
  readonly effectsA: Line[];
  readonly output: Output;
  readonly after: readonly JournalEntry[];
  readonly effectsB: Line[];
}

/** What a test's child runs: its script and the run's tool calls. */
export interface KillWorkload {
  /** The child's path. */
  readonly child: string;
  readonly runId: string;
  /** Every tool call of an uncrashed run, in the order details() lists them. */
  readonly callIds: readonly string[];
  /** The effect whose requests run tool calls (`executeTools`, `execute`). */
  readonly toolEffect: string;
  /** The prefix of the runs' temporary directories. */
  readonly tmpPrefix: string;
}

/** What the test's own checks of one kill point get. */
export interface KillCheck<Output, Line> extends KillOutcome<Output, Line> {
  /** What the uncrashed run ended with. */
  readonly reference: Output;
  /** Where the run was at the kill, as its journal tells (see killState). */
  readonly state: string;
  /** The point's own context's expect (the points' tests run concurrently). */
  readonly expect: ExpectStatic;
}

/**
 * The kill -9 test of one workload: its children, whose temporary directories are gone after
 * the file's tests, and its test (describeKillPoints).
 */
export function killHarness<
  Output extends { readonly toolCalls: readonly ToolCallFlags[] },
  Line extends AnyEffectLine,
>(workload: KillWorkload) {
  const { child: script, runId, tmpPrefix } = workload;
  const children = new Set<ChildProcess>();
  const directories: string[] = [];
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of directories) rmSync(dir, { recursive: true, force: true });
  });

  /** Starts a child; `printed(line)` resolves once it printed that line. */
  function startChild(config: ChildConfig) {
    const child = spawn(
      process.execPath,
      ['--conditions=statecraft-source', '--import', 'tsx', script, JSON.stringify(config)],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    children.add(child);
    const output = childOutput(child);
    const { lines, exited } = output;
    void exited.then(() => children.delete(child));
    const printed = (line: string) => output.until((seen) => seen.includes(line), `'${line}'`);
    /** Runs the child to its end: its output (it must exit with 0). */
    const finished = async (): Promise<Output> => {
      const code = await within(exited, CHILD_TIMEOUT_MS, `child ${config.proc} to finish`);
      if (code !== 0)
        throw new Error(`child ${config.proc} ended with ${code}; stderr:\n${output.stderr()}`);
      const line = lines.find((text) => text.startsWith(OUTPUT_PREFIX));
      if (line === undefined) throw new Error(`child ${config.proc} printed no output`);
      return JSON.parse(line.slice(OUTPUT_PREFIX.length)) as Output;
    };
    return { child, exited, printed, finished };
  }

  /** A fresh place for one run. */
  function runPlace(): RunPlace {
    const root = mkdtempSync(path.join(tmpdir(), tmpPrefix));
    directories.push(root);
    return { dir: path.join(root, 'journal'), log: path.join(root, 'effects.jsonl') };
  }

  const journalOf = async (place: RunPlace) => (await fileStore(place.dir).read(runId)) ?? [];

  /** The uncrashed run, in a process of its own: its output, side effects and journal. */
  async function referenceRun() {
    const place = runPlace();
    const run = startChild({
      ...place,
      proc: 'R',
      mode: 'invoke',
      linger: false,
      holdAtEnd: false,
    });
    const output = await run.finished();
    return { output, effects: readEffects<Line>(place.log), entries: await journalOf(place) };
  }

  /**
   * Runs the script in process A, kills it with SIGKILL at `point`, then lets process B take
   * the run over and finish it. Whatever happens, neither process outlives this call.
   */
  async function killAndResume(point: KillPoint): Promise<KillOutcome<Output, Line>> {
    const place = runPlace();
    const started: ChildProcess[] = [];
    try {
      const killed = startChild({
        ...place,
        proc: 'A',
        mode: 'invoke',
        linger: true,
        holdAtEnd: true,
      });
      started.push(killed.child);
      await within(killed.printed(point.marker), CHILD_TIMEOUT_MS, `'${point.marker}'`);
      if (point.delayMs > 0) await sleep(point.delayMs);
      killed.child.kill('SIGKILL');
      const signal = await within(killed.exited, CHILD_TIMEOUT_MS, 'the child to die');
      if (signal !== 'SIGKILL') throw new Error(`process A ended with ${signal}, not by the kill`);

      // What A left: its journal (as a new process reads it) and its side effects.
      const before = await journalOf(place);
      const effectsA = readEffects<Line>(place.log);

      const resumer = startChild({
        ...place,
        proc: 'B',
        mode: point.mode,
        linger: false,
        holdAtEnd: false,
      });
      started.push(resumer.child);
      const output = await resumer.finished();
      const after = await journalOf(place);
      const effectsB = readEffects<Line>(place.log).slice(effectsA.length);
      return { before, effectsA, output, after, effectsB };
    } finally {
      for (const child of started) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      }
    }
  }

  /**
   * The kill -9 test of the workload, under `title`. First the uncrashed run, in a process of
   * its own (`reference` checks it besides what every run must do). Then one concurrent test
   * per kill point drawn from `kinds` (PARALLEL at a time): each checks what every durable run
   * must do (expectToolCallsKept), then the test's own `check`, which returns what to report
   * of the point besides. Last, `covered` checks the kills landed where they were meant to.
   */
  function describeKillPoints(test: {
    readonly title: string;
    readonly seed: number;
    readonly kinds: readonly KillKind[];
    readonly reference: (run: Awaited<ReturnType<typeof referenceRun>>) => void;
    readonly check: (outcome: KillCheck<Output, Line>) => string;
    readonly covered: (has: (test: (state: string) => boolean) => boolean) => void;
  }): void {
    const points = drawKillPoints(test.seed, test.kinds);
    const report: string[] = [];
    const reached = new Map<string, string>();
    const limit = pLimit(PARALLEL);
    let reference: Output;

    beforeAll(async () => {
      const run = await referenceRun();
      const executions = run.effects.filter(isToolLine);
      const started = executions.filter((line) => line.phase === 'start');
      expect(started.map((line) => line.callId).sort()).toEqual([...workload.callIds].sort());
      expect(executions).toHaveLength(2 * workload.callIds.length);
      const resumed = run.output.toolCalls.filter((call) => call.replayed || call.possiblyRepeated);
      expect(resumed).toEqual([]);
      expect(run.entries.at(-1)).toEqual({ type: 'end', status: 'succeeded' });
      test.reference(run);
      reference = run.output;
    }, 2 * CHILD_TIMEOUT_MS);

    afterAll(() => {
      if (report.length > 0) {
        console.log(`kill -9 points (seed ${test.seed}):\n${report.join('\n')}`);
      }
    });

    describe(test.title, () => {
      it.concurrent.for(points)(
        '$name',
        // Bounds the queue for a free slot (of `limit`) too; never reached when all goes well.
        { timeout: 3 * CHILD_TIMEOUT_MS * Math.ceil(points.length / PARALLEL) },
        // Concurrent tests assert with their own context's expect.
        (point, { expect }) =>
          limit(async () => {
            const outcome = await killAndResume(point);
            expect(outcome.before[0]?.type, 'the kill points all come after the start entry').toBe(
              'start',
            );
            const state = killState(outcome.before, workload.toolEffect);
            reached.set(point.name, state);
            const doneNotJournaled = expectToolCallsKept(expect, outcome, state, workload);
            const notes = test.check({ ...outcome, reference, state, expect });
            const again = outcome.effectsB.filter((line) => line.phase === 'start').length;
            report.push(
              `${point.name}\n    journal at the kill: ${state}; B made ${again} calls` +
                (doneNotJournaled > 0
                  ? `; ${doneNotJournaled} tool call(s) done, not journaled`
                  : '') +
                notes,
            );
          }),
      );

      it('the kills landed where they were meant to: every kind of moment was hit', () => {
        const states = [...reached.values()];
        expect(states, 'ran after all the points').toHaveLength(points.length);
        test.covered((state) => states.some(state));
      });
    });
  }

  return { describeKillPoints };
}

/**
 * Where the run was when it was killed, as its journal tells: for the report and coverage.
 * `toolEffect` is the effect whose requests run tool calls (`executeTools`, `execute`).
 */
function killState(entries: readonly JournalEntry[], toolEffect: string): string {
  if (entries.some((entry) => entry.type === 'end')) return 'ended';
  const requests = entries.filter((entry) => entry.type === 'request');
  const last = requests.at(-1);
  if (last === undefined) return 'started';
  const answered = entries.some((entry) => entry.type === 'answer' && entry.seq === last.seq);
  const effect = String(last.effect);
  if (answered) return `between: ${effect} #${last.seq} answered`;
  if (effect !== toolEffect) return `in flight: ${effect} #${last.seq}`;
  const ofStep = entries.filter((entry) => entry.seq === last.seq);
  const finished = ofStep.filter((entry) => entry.type === 'result').map((entry) => entry.callId);
  const started = ofStep
    .filter((entry) => entry.type === 'call' && !finished.includes(entry.callId))
    .map((entry) => entry.callId);
  return `in flight: ${toolEffect} #${last.seq} finished [${finished}] started [${started}]`;
}

/** How many `effect` requests, and how many answers of type `answer`, the journal holds. */
export function journaled(entries: readonly JournalEntry[], effect: string, answer: string) {
  return {
    requested: entries.filter((entry) => entry.type === 'request' && entry.effect === effect)
      .length,
    answered: entries.filter((entry) => answerType(entry) === answer).length,
  };
}

/**
 * Checks what every kill and resume must give, whatever the workload: tool calls answered
 * from the journal or issued again once with the same key, details() telling them apart, and
 * the journal going on to a successful end. Returns how many tool calls had finished as side
 * effects but not in the journal (re-issued, legitimately).
 */
function expectToolCallsKept<Line extends AnyEffectLine>(
  expect: ExpectStatic,
  outcome: KillOutcome<{ readonly toolCalls: readonly ToolCallFlags[] }, Line>,
  state: string,
  workload: KillWorkload,
): number {
  const { before, effectsA, output, after, effectsB } = outcome;
  expect(effectsB.every((line) => line.proc === 'B')).toBe(true);

  // Tool calls: answered from the journal, or issued again once with the same key.
  const results = new Set(before.filter((e) => e.type === 'result').map((e) => e.callId));
  const intents = new Set(before.filter((e) => e.type === 'call').map((e) => e.callId));
  const toolLines = (lines: Line[], id: string, phase: 'start' | 'done') =>
    lines.filter(isToolLine).filter((line) => line.callId === id && line.phase === phase);
  let doneNotJournaled = 0;
  for (const id of workload.callIds) {
    const startedA = toolLines(effectsA, id, 'start');
    const doneA = toolLines(effectsA, id, 'done');
    const startedB = toolLines(effectsB, id, 'start');
    expect(toolLines(effectsB, id, 'done'), `${id}: every B execution ends`).toHaveLength(
      startedB.length,
    );
    for (const line of [...startedA, ...doneA, ...startedB]) {
      expect(line.key, `${id}: idempotency key`).toBe(`${workload.runId}:${id}`);
    }
    expect(startedA.length, `${id}: ran at most once before the kill`).toBeLessThanOrEqual(1);
    if (results.has(id)) {
      expect(doneA, `${id}: journaled as finished, so it finished`).toHaveLength(1);
      expect(startedB, `${id}: finished before the kill, ran again`).toHaveLength(0);
    } else if (intents.has(id)) {
      expect(startedB, `${id}: in flight at the kill, issued again once`).toHaveLength(1);
      // Finished as a side effect, killed before its result reached the journal: the
      // at-least-once window that the idempotency key is there for.
      if (doneA.length > 0) doneNotJournaled++;
    } else {
      expect(startedA, `${id}: no intent journaled, yet it ran`).toHaveLength(0);
      expect(startedB, `${id}: not started before the kill, run once`).toHaveLength(1);
    }
  }

  // details() tells each call apart: replayed, possibly repeated, or new.
  expect(output.toolCalls.map((call) => call.id)).toEqual(workload.callIds);
  for (const call of output.toolCalls) {
    expect(call, call.id).toEqual({
      id: call.id,
      replayed: results.has(call.id),
      possiblyRepeated: intents.has(call.id) && !results.has(call.id),
    });
  }

  // The journal goes on from where the kill left it, to a successful end.
  expect(after.slice(0, before.length)).toEqual(before);
  expect(after.at(-1)).toEqual({ type: 'end', status: 'succeeded' });
  expect(after.filter((entry) => entry.type === 'end')).toHaveLength(1);
  if (state === 'ended') {
    expect(after).toEqual(before);
    expect(effectsB, 'a run that had ended makes no call').toEqual([]);
  }
  return doneNotJournaled;
}

/**
 * Checks effects made one after the other, by index (a chain's model calls, a loop's plans):
 * one whose answer was journaled is not made again; one unanswered is made after the kill,
 * once, and was made before at most once if its request was journaled. `made(lines, index,
 * phase)` counts the lines of effect `index`. Returns how many were answered in A but killed
 * before the answer reached the journal (asked again, legitimately).
 */
export function expectEffectsByIndex<Line extends AnyEffectLine>(
  expect: ExpectStatic,
  outcome: Pick<KillOutcome<unknown, Line>, 'effectsA' | 'effectsB'>,
  effects: {
    readonly what: string;
    readonly count: number;
    readonly requested: number;
    readonly answered: number;
    made(lines: readonly Line[], index: number, phase: 'start' | 'done'): number;
  },
): number {
  const { effectsA, effectsB } = outcome;
  const { what, made } = effects;
  let answeredNotJournaled = 0;
  for (let index = 0; index < effects.count; index++) {
    const [inA, inB] = [made(effectsA, index, 'start'), made(effectsB, index, 'start')];
    if (index < effects.answered) {
      expect([inA, inB], `${what} ${index}: answered before the kill`).toEqual([1, 0]);
    } else {
      expect(inB, `${what} ${index}: made after the kill`).toBe(1);
      expect(inA, `${what} ${index}: unanswered, made before`).toBeLessThanOrEqual(
        index < effects.requested ? 1 : 0,
      );
      // Answered in A, killed before the answer reached the journal: asked again.
      if (made(effectsA, index, 'done') > 0) answeredNotJournaled++;
    }
  }
  return answeredNotJournaled;
}
