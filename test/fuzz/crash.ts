import fc from 'fast-check';
import { type JournalEntry, type JournalStore, memoryStore } from 'statecraft';
import { FROM_START, REJECT_ONCE, runOptionsOf, type ScriptStart } from './build.js';
import { type Execution, type ModelState, OpenThings } from './fixtures.js';
import {
  BOUND_MS,
  buildScenario,
  type CheckRunOptions,
  checkRun,
  construct,
  type Fail,
  type FuzzRunnable,
  INPUT,
  isJournalFailure,
  type Outcome,
  type OutcomeListener,
  outcomeName,
  scheduleAbort,
  type Violation,
  watched,
} from './invariants.js';
import {
  type ChainScenario,
  chainScenarioArb,
  type LoopScenario,
  loopScenarioArb,
  type Scenario,
  STREAMING_TOOLS,
} from './scenario.js';

// Crash mode: a scenario run durably (memoryStore, a fresh runId per run), then "crashed" at a
// random point of its journal (a store holding only a prefix of it, as a process that died
// there would have left it) and resumed by a fresh chain or loop of the same scenario (same
// options, tools and model script), then resumed once more after it ended. Each of the three
// runs is checked like any fuzz run (invariants a–h, as they apply: a resume is not streamed),
// and crash mode adds CRASH_INVARIANTS 1–5 (invariants.ts).

/** A scenario and where its run crashes (see prefixLength). */
export interface CrashCase<S extends Scenario = Scenario> {
  readonly scenario: S;
  /** 0–1000: how far into the journal the crash falls, in thousandths of its length. */
  readonly crash: number;
}

// A fraction rather than an index: the journal's length is only known once the scenario ran,
// and a fraction keeps its meaning ("crash about halfway") while fast-check shrinks the
// scenario. It shrinks to 0: a crash right after the start entry.
const crashArb = fc.integer({ min: 0, max: 1000 });

export const CRASH_CASES = {
  chain: fc.record({ scenario: chainScenarioArb, crash: crashArb }) as fc.Arbitrary<
    CrashCase<ChainScenario>
  >,
  loop: fc.record({ scenario: loopScenarioArb, crash: crashArb }) as fc.Arbitrary<
    CrashCase<LoopScenario>
  >,
} as const;

/** How many entries the crashed store keeps: 1 (the start entry) to all (an ended run). */
export function prefixLength(crash: number, length: number): number {
  return Math.min(length, 1 + Math.floor((crash / 1000) * length));
}

/**
 * Whether the uncrashed run's outcome kind follows from the scenario alone, so that the
 * resumed run must end the same way (invariant 1). Not when a clock takes part:
 * - an abort at a random time (a resume is aborted at that time again, from its own start;
 *   hanging tools and models always come with one);
 * - a run deadline (chain maxExecutionTime, the loop's timeout): it counts from the journaled
 *   start, so a resume finds most or all of it spent by the first run and the crash;
 * - the chain's toolTimeoutMs, which races tools' own delays of about the same size;
 * - the chain's maxTokens or maxCost with a streaming tool: the token estimate counts the
 *   request's text (the scripted model's, and the check before each call, SPEC H3), which
 *   holds the stream batches read so far, and how many items a batch holds is timing (a
 *   resumed process also no longer has the streams the crashed one opened).
 * Everything else (scripted answers, tool behaviours, maxIterations, earlyStopping, plans,
 * retries, validation) is the same in every process. Excluded scenarios still get every
 * other invariant.
 */
export function deterministic(s: Scenario): boolean {
  if (s.abortAtMs !== undefined) return false;
  if (s.kind === 'loop') return s.options.timeout === undefined;
  const o = s.options;
  if (o.maxExecutionTime !== undefined || o.toolTimeoutMs !== undefined) return false;
  return (
    (o.maxTokens === undefined && o.maxCost === undefined) ||
    !s.tools.some((t) => STREAMING_TOOLS.includes(t.behaviour))
  );
}

/** What a journal prefix says of the crashed process (as RunJournal reads it on resume). */
export interface PrefixFacts {
  /** Tool calls whose `result` is journaled: answered from the journal, never run again. */
  readonly finished: ReadonlySet<string>;
  /** Tool calls with an intent (`call`) and no `result`: in flight at the crash. */
  readonly inFlight: ReadonlySet<string>;
  /** Where the resumed process's scripts start (see ScriptStart in build.ts). */
  readonly from: ScriptStart;
}

/**
 * Whether the request entry at `index` is settled within the prefix: answered (after its own
 * call / result entries), or held by an abort or a deadline that came in while it was in
 * flight. Such a request is not issued again on resume; the last one of a prefix, with
 * nothing after it, is.
 */
function settledWithin(prefix: readonly JournalEntry[], index: number): boolean {
  const { seq } = prefix[index] as JournalEntry;
  let next = index + 1;
  for (let e = prefix[next]; e && (e.type === 'call' || e.type === 'result') && e.seq === seq; ) {
    e = prefix[++next];
  }
  return prefix[next] !== undefined;
}

export function factsOf(prefix: readonly JournalEntry[]): PrefixFacts {
  const started = new Set<string>();
  const finished = new Set<string>();
  const effects = new Map<unknown, unknown>();
  let modelCalls = 0;
  let plans = 0;
  let rejected = false;
  for (const [index, entry] of prefix.entries()) {
    if (entry.type === 'call') started.add(String(entry.callId));
    else if (entry.type === 'result') finished.add(String(entry.callId));
    else if (entry.type === 'answer') {
      if (
        effects.get(entry.seq) === 'validateResult' &&
        JSON.stringify(entry.event).includes(REJECT_ONCE)
      )
        rejected = true;
    } else if (entry.type === 'request') {
      effects.set(entry.seq, entry.effect);
      // The crashed process made this call and the journal answers it: the resumed one does
      // not, and its script skips the answer. (A call cut by an abort or a deadline counts as
      // made; whether it reached the model before the cut is timing, and such scenarios are
      // not compared by invariant 1.)
      if (!settledWithin(prefix, index)) continue;
      if (entry.effect === 'callModel') modelCalls++;
      else if (entry.effect === 'plan') plans++;
    }
  }
  const inFlight = new Set([...started].filter((id) => !finished.has(id)));
  return { finished, inFlight, from: { ...FROM_START, modelCalls, plans, rejected } };
}

/** A memory store holding `entries` of run `runId`: what a process that died left behind. */
async function storeWith(runId: string, entries: readonly JournalEntry[]): Promise<JournalStore> {
  const store = memoryStore();
  for (const entry of entries) await store.append(runId, entry);
  return store;
}

/** Run ids are fresh per run, shrinking and replays included: one store never sees one twice. */
let runs = 0;

/** One run of a crash case, with its abort (`at`), checked; a hung run is aborted. */
async function phase(
  s: Scenario,
  at: number | undefined,
  run: (signal: AbortSignal) => Promise<unknown> | AsyncIterable<{ type: string }>,
  via: 'invoke' | 'stream',
  state: ModelState,
  fail: Fail,
  options: CheckRunOptions,
): Promise<Outcome> {
  const abort = scheduleAbort(at);
  try {
    const outcome = await checkRun(s, () => run(abort.signal), via, state, fail, {
      ...options,
      durable: true,
    });
    if (outcome.hung) abort.hung();
    return outcome;
  } finally {
    abort.clear();
  }
}

/** Settled within the bound, and not with a journal failure (reported by checkRun already). */
function settled(outcome: Outcome): boolean {
  return !outcome.hung && outcome.elapsedMs <= BOUND_MS && !isJournalFailure(outcome.error);
}

/** A journal's entry types, `|` where the crash cut it. */
function shape(entries: readonly JournalEntry[], cut: number): string {
  return entries.map((e, i) => (i === cut ? `| ${e.type}` : e.type)).join(' ');
}

/** Invariant 4: the journal ends with an `end` entry whose status is the outcome's. */
function checkEnd(
  entries: readonly JournalEntry[],
  outcome: Outcome,
  label: string,
  fail: Fail,
): boolean {
  const status = outcome.error === undefined ? 'succeeded' : 'failed';
  const last = entries.at(-1);
  if (last?.type === 'end' && last.status === status) return true;
  fail(
    'journal-ends',
    `${label}the run ${outcomeName(outcome)} but its journal ends with ${JSON.stringify(last)?.slice(0, 120)}, not {"type":"end","status":"${status}"}`,
  );
  return false;
}

/** Invariant 3, part: every execution of a durable run is keyed `<runId>:<toolCallId>`. */
function checkKeys(log: readonly Execution[], runId: string, label: string, fail: Fail) {
  for (const e of log) {
    if (e.key !== `${runId}:${e.callId}`) {
      fail(
        'reissued-once',
        `${label}${e.tool} call ${e.callId} ran with idempotencyKey ${JSON.stringify(e.key)}`,
      );
    }
  }
}

/** Crash mode's run of one case: returns every invariant it breaks (never throws). */
export async function checkCrash(c: CrashCase, onOutcome?: OutcomeListener): Promise<Violation[]> {
  const s = c.scenario;
  const found: Violation[] = [];
  const fail: Fail = (invariant, message) => found.push({ invariant, message });
  const runId = `fuzz-${process.pid}-${++runs}`;
  const opens = [new OpenThings(), new OpenThings(), new OpenThings()] as const;
  const build = (open: OpenThings, state: ModelState, log: Execution[], from?: ScriptStart) =>
    construct(() => buildScenario(s, open, state, { log, ...(from && { from }) }), fail, onOutcome);
  // Journals that ended right when their run settled: read again once stragglers are done.
  const ended: { store: JournalStore; length: number; label: string }[] = [];
  await watched(opens, fail, async () => {
    // 1. The uncrashed durable run, invoked or streamed as the scenario says.
    const store = memoryStore();
    const state1: ModelState = { failed: false, calls: 0 };
    const log1: Execution[] = [];
    const first = build(opens[0], state1, log1);
    if (!first) return;
    const outcome1 = await phase(
      s,
      s.abortAtMs,
      (signal) => {
        const options = { signal, runId, store, ...runOptionsOf(s) };
        return s.via === 'invoke' ? first.invoke(INPUT, options) : first.stream(INPUT, options);
      },
      s.via,
      state1,
      fail,
      { onOutcome, label: 'uncrashed: ', name: 'uncrashed ' },
    );
    checkKeys(log1, runId, 'uncrashed: ', fail);
    if (!settled(outcome1)) return;
    const entries = (await store.read(runId)) ?? [];
    if (checkEnd(entries, outcome1, 'uncrashed: ', fail))
      ended.push({ store, length: entries.length, label: 'uncrashed: ' });
    if (entries.length === 0) return;

    // 2. The crash: the store keeps a prefix; a fresh process (chain or loop) resumes it.
    const prefix = entries.slice(0, prefixLength(c.crash, entries.length));
    onOutcome?.(`crashed after a '${prefix.at(-1)?.type}' entry`);
    const facts = factsOf(prefix);
    const crashed = await storeWith(runId, prefix);
    // A ModelError replayed from the journal is the model's own failure, seen by process 1.
    const state2: ModelState = { failed: state1.failed, calls: 0 };
    const log2: Execution[] = [];
    const second = build(opens[1], state2, log2, facts.from);
    if (!second) return;
    const resume = (runnable: FuzzRunnable) => (signal: AbortSignal) =>
      runnable.resume(runId, { store: crashed, signal, ...runOptionsOf(s) });
    const resumed = `resumed (crash after entry ${prefix.length} of ${entries.length}, a '${prefix.at(-1)?.type}'): `;
    const outcome2 = await phase(s, s.abortAtMs, resume(second), 'invoke', state2, fail, {
      onOutcome,
      label: resumed,
      name: 'resumed ',
    });
    for (const e of log2) {
      if (facts.finished.has(e.callId)) {
        fail(
          'finished-not-rerun',
          `${resumed}${e.tool} call ${e.callId} ran again though its result was journaled`,
        );
      }
    }
    for (const id of facts.inFlight) {
      const times = log2.filter((e) => e.callId === id).length;
      if (times > 1)
        fail('reissued-once', `${resumed}call ${id}, in flight at the crash, ran ${times} times`);
    }
    checkKeys(log2, runId, resumed, fail);
    if (!settled(outcome2)) return;
    onOutcome?.(deterministic(s) ? 'outcomes compared (1)' : 'outcomes not compared (timing)');
    if (deterministic(s) && outcomeName(outcome2) !== outcomeName(outcome1)) {
      fail(
        'same-outcome',
        `the uncrashed run ${outcomeName(outcome1)}; ${resumed}it ${outcomeName(outcome2)} (journal: ${shape(entries, prefix.length)})`,
      );
    }
    const after = (await crashed.read(runId)) ?? [];
    if (!checkEnd(after, outcome2, resumed, fail)) return;
    ended.push({ store: crashed, length: after.length, label: 'resumed, then re-resumed: ' });

    // 3. Resumed once more, after it ended: settles alike from the journal, calling nothing.
    // No abort: nothing runs live, and an abort arriving mid-replay is not what is tested.
    // (Skipped when the journal did not end right: that is reported already.)
    const state3: ModelState = { failed: state1.failed || state2.failed, calls: 0 };
    const log3: Execution[] = [];
    const third = build(opens[2], state3, log3, facts.from);
    if (!third) return;
    const outcome3 = await phase(s, undefined, resume(third), 'invoke', state3, fail, {
      onOutcome,
      label: 're-resumed: ',
      name: 're-resumed ',
    });
    if (!settled(outcome3)) return;
    if (outcomeName(outcome3) !== outcomeName(outcome2)) {
      fail(
        'journal-ends',
        `resumed, the run ${outcomeName(outcome2)}; resumed again, it ${outcomeName(outcome3)}`,
      );
    }
    if (log3.length)
      fail(
        'journal-ends',
        `re-resumed: ran ${log3.map((e) => `${e.tool} ${e.callId}`).join(', ')}`,
      );
    if (state3.calls)
      fail('journal-ends', `re-resumed: made ${state3.calls} model, planner or responder call(s)`);
    // Its journal must not grow: checked with the others' below.
  });
  // Nothing is written to an ended journal, by the run that ended it (a straggler) or by a
  // resume that found it ended.
  for (const { store, length, label } of ended) {
    const now = (await store.read(runId)) ?? [];
    if (now.length !== length) {
      const added = now.slice(length).map((e) => e.type);
      fail('journal-ends', `${label}the ended journal grew afterwards: ${added.join(', ')}`);
    }
  }
  return found;
}
