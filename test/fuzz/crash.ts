import fc from 'fast-check';
import { fileStore, JournalError, type JournalStore, memoryStore } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { faultyStore } from '../durable/faulty-store.js';
import { FROM_START, REJECT_ONCE, runOptionsOf, type ScriptStart } from './build.js';
import {
  type CrashFault,
  caseFolder,
  checkFolder,
  crashedFolder,
  describeFault,
  faultArb,
  faultAt,
  injected,
  isRunBusy,
  journalFile,
  reasonOf,
  removeFolder,
  STALL_TIMEOUT_MS,
  texts,
} from './faults.js';
import { ATTACHMENT_SETS, type Execution, type ModelState, OpenThings } from './fixtures.js';
import {
  BOUND_MS,
  buildScenario,
  type CheckRunOptions,
  checkRun,
  construct,
  describe,
  type Fail,
  type FuzzRunnable,
  INPUT,
  type Invariant,
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
//
// Some cases add a fault (faults.ts), on a real fileStore in a folder of their own: the store
// fails at one append instead of the crash (6, 7; its resume once the fault is cleared: 10), a
// process died mid-line while taking the crashed run over, or several resume it at once (11);
// after each, the folder holds a valid journal and nothing else (8, 9).

/** A scenario and where its run crashes (see prefixLength). */
export interface CrashCase<S extends Scenario = Scenario> {
  readonly scenario: S;
  /** 0–1000: how far into the journal the crash falls, in thousandths of its length. */
  readonly crash: number;
  /** What else goes wrong (faults.ts); none for most cases, and for every older one. */
  readonly fault?: CrashFault | undefined;
}

// A fraction rather than an index: the journal's length is only known once the scenario ran,
// and a fraction keeps its meaning ("crash about halfway") while fast-check shrinks the
// scenario. It shrinks to 0: a crash right after the start entry.
const crashArb = fc.integer({ min: 0, max: 1000 });

export const CRASH_CASES = {
  chain: fc.record({
    scenario: chainScenarioArb,
    crash: crashArb,
    fault: faultArb,
  }) as fc.Arbitrary<CrashCase<ChainScenario>>,
  loop: fc.record({
    scenario: loopScenarioArb,
    crash: crashArb,
    fault: faultArb,
  }) as fc.Arbitrary<CrashCase<LoopScenario>>,
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

/** The base64 payloads the fuzz tools return (ATTACHMENT_SETS), each checked by bytes-once. */
const PAYLOADS = [
  ...new Set(ATTACHMENT_SETS.flat().flatMap((a) => (a.data === undefined ? [] : [a.data]))),
];

/** Invariant 12: no attachment payload is in the journal more than once. */
function checkBytesOnce(entries: readonly JournalEntry[], label: string, fail: Fail): void {
  const text = JSON.stringify(entries);
  for (const payload of PAYLOADS) {
    const times = text.split(payload).length - 1;
    if (times > 1)
      fail('bytes-once', `${label}the journal holds the bytes of an attachment ${times} times`);
  }
}

/** A journal's entry types, `|` where the crash cut it. */
function shape(entries: readonly JournalEntry[], cut: number): string {
  return entries.map((e, i) => (i === cut ? `| ${e.type}` : e.type)).join(' ');
}

/** Invariant 4 (10 after a store fault): the journal ends with an `end` entry of the outcome's status. */
function checkEnd(
  entries: readonly JournalEntry[],
  outcome: Outcome,
  label: string,
  fail: Fail,
  invariant: Invariant = 'journal-ends',
): boolean {
  const status = outcome.error === undefined ? 'succeeded' : 'failed';
  const last = entries.at(-1);
  if (last?.type === 'end' && last.status === status) return true;
  fail(
    invariant,
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

/** What one run of a case left: its outcome, the tools it ran and the model calls it made. */
interface Ran {
  readonly outcome: Outcome;
  readonly log: readonly Execution[];
  readonly state: ModelState;
}

/** Crash mode's run of one case: returns every invariant it breaks (never throws). */
export async function checkCrash(c: CrashCase, onOutcome?: OutcomeListener): Promise<Violation[]> {
  const s = c.scenario;
  const { fault } = c;
  const found: Violation[] = [];
  const fail: Fail = (invariant, message) => found.push({ invariant, message });
  const runId = `fuzz-${process.pid}-${++runs}`;
  // What every run of the case opened (one per run; racers add theirs as they start).
  const opens: OpenThings[] = [];
  const build = (state: ModelState, log: Execution[], from?: ScriptStart) => {
    const open = new OpenThings();
    opens.push(open);
    return construct(
      () => buildScenario(s, open, state, { log, ...(from && { from }) }),
      fail,
      onOutcome,
    );
  };
  // Journals that ended right when their run settled: read again once stragglers are done.
  const ended: { store: JournalStore; length: number; label: string }[] = [];
  // Faulted, torn and raced cases keep their journal in a folder of their own.
  const dir = fault ? await caseFolder() : undefined;
  /** Entries the faulted run's store confirmed: the journal must keep them first. */
  let confirmed: readonly JournalEntry[] = [];
  try {
    await watched(opens, fail, async () => {
      // 1. The uncrashed durable run, invoked or streamed as the scenario says.
      const store = memoryStore();
      const state1: ModelState = { failed: false, calls: 0 };
      const log1: Execution[] = [];
      const first = build(state1, log1);
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
      checkBytesOnce(entries, 'uncrashed: ', fail);
      if (checkEnd(entries, outcome1, 'uncrashed: ', fail))
        ended.push({ store, length: entries.length, label: 'uncrashed: ' });
      if (entries.length === 0) return;

      // 2. What the resumed run finds: the prefix a crash left, or what a store fault did.
      let left: { prefix: readonly JournalEntry[]; modelFailed: boolean; where: string };
      if (fault?.kind === 'store' && dir) {
        const faulted = await faultedRun(
          s,
          fault,
          entries.length,
          dir,
          runId,
          build,
          fail,
          onOutcome,
        );
        if (!faulted) return;
        confirmed = faulted.confirmed;
        left = { ...faulted, modelFailed: state1.failed || faulted.modelFailed };
      } else {
        const prefix = entries.slice(0, prefixLength(c.crash, entries.length));
        onOutcome?.(`crashed after a '${prefix.at(-1)?.type}' entry`);
        let torn: string | undefined;
        if (dir) {
          torn = await crashedFolder(dir, runId, prefix, entries[prefix.length], fault);
          if (torn) onOutcome?.(`killed taking over: ${torn.replace(/\d+/g, 'N')}`);
        }
        left = {
          prefix,
          modelFailed: state1.failed,
          where: `crash after entry ${prefix.length} of ${entries.length}, a '${prefix.at(-1)?.type}'${torn ? `, then ${torn}` : ''}`,
        };
      }
      const { prefix } = left;
      const facts = factsOf(prefix);
      // A store fault's resume: the fault is cleared (a new process, the same folder).
      const faulted = fault?.kind === 'store';
      const storeOf = () => (dir ? fileStore(dir) : storeWith(runId, prefix));
      const crashed: JournalStore = await storeOf();
      const racers = fault?.kind === 'race' ? fault.racers : 1;
      const resumeIn = (runnable: FuzzRunnable, into: JournalStore) => (signal: AbortSignal) =>
        runnable.resume(runId, { store: into, signal, ...runOptionsOf(s) });
      const resumed = faulted
        ? `resumed once the fault was cleared (${left.where}): `
        : `resumed (${left.where}): `;
      // A ModelError replayed from the journal is the model's own failure, seen before.
      const resumes: Promise<Ran | undefined>[] = [];
      for (let i = 0; i < racers; i++) {
        const state: ModelState = { failed: left.modelFailed, calls: 0 };
        const log: Execution[] = [];
        const runnable = build(state, log, facts.from);
        if (!runnable) return;
        // Each racer is a process of its own: its own fileStore over the same folder.
        const into = racers > 1 ? fileStore(dir as string) : crashed;
        const label = racers > 1 ? `racer ${i + 1} of ${racers} (${left.where}): ` : resumed;
        resumes.push(
          phase(s, s.abortAtMs, resumeIn(runnable, into), 'invoke', state, fail, {
            onOutcome,
            label,
            name: racers > 1 ? 'racer ' : 'resumed ',
            ...(racers > 1 && { provoked: (error) => (isRunBusy(error) ? 'refused' : undefined) }),
          }).then((outcome) => ({ outcome, log, state })),
        );
      }
      const ran = (await Promise.all(resumes)).filter((r): r is Ran => r !== undefined);
      const rerun: Invariant = faulted ? 'fault-resumes' : 'finished-not-rerun';
      const reissued: Invariant = faulted ? 'fault-resumes' : 'reissued-once';
      const logs = ran.flatMap((r) => r.log);
      for (const e of logs) {
        if (facts.finished.has(e.callId))
          fail(
            rerun,
            `${resumed}${e.tool} call ${e.callId} ran again though its result was journaled`,
          );
      }
      for (const id of facts.inFlight) {
        const times = logs.filter((e) => e.callId === id).length;
        if (times > 1) fail(reissued, `${resumed}call ${id}, in flight then, ran ${times} times`);
      }
      checkKeys(logs, runId, resumed, fail);
      const main = racers > 1 ? checkRacers(ran, fail) : ran[0];
      if (!main || !settled(main.outcome)) return;
      const outcome2 = main.outcome;
      onOutcome?.(deterministic(s) ? 'outcomes compared (1)' : 'outcomes not compared (timing)');
      if (deterministic(s) && outcomeName(outcome2) !== outcomeName(outcome1)) {
        fail(
          'same-outcome',
          `the uncrashed run ${outcomeName(outcome1)}; ${resumed}it ${outcomeName(outcome2)} (journal: ${shape(entries, prefix.length)})`,
        );
      }
      const reader = racers > 1 ? await storeOf() : crashed;
      const after = (await reader.read(runId)) ?? [];
      checkBytesOnce(after, resumed, fail);
      if (racers > 1) {
        const ends = after.filter((e) => e.type === 'end').length;
        if (ends !== 1) fail('one-racer', `the raced journal has ${ends} end entries`);
      }
      if (!checkEnd(after, outcome2, resumed, fail, faulted ? 'fault-resumes' : 'journal-ends'))
        return;
      ended.push({ store: reader, length: after.length, label: 'resumed, then re-resumed: ' });

      // 3. Resumed once more, after it ended: settles alike from the journal, calling nothing.
      // No abort: nothing runs live, and an abort arriving mid-replay is not what is tested.
      // (Skipped when the journal did not end right: that is reported already.)
      const state3: ModelState = { failed: ran.some((r) => r.state.failed), calls: 0 };
      const log3: Execution[] = [];
      const third = build(state3, log3, facts.from);
      if (!third) return;
      const again = `re-resumed (${left.where}): `;
      const outcome3 = await phase(s, undefined, resumeIn(third, reader), 'invoke', state3, fail, {
        onOutcome,
        label: again,
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
        fail('journal-ends', `${again}ran ${log3.map((e) => `${e.tool} ${e.callId}`).join(', ')}`);
      if (state3.calls)
        fail('journal-ends', `${again}made ${state3.calls} model, planner or responder call(s)`);
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
    if (dir) {
      const label = `at the end (${fault ? describeFault(fault) : ''}): `;
      const final = await checkFolder(dir, runId, label, fail);
      // What the faulted run was promised is still the journal's beginning.
      const kept = texts(final ?? []).slice(0, confirmed.length);
      if (confirmed.length && kept.join('\n') !== texts(confirmed).join('\n')) {
        fail('nothing-lost', `${label}the journal no longer begins with the confirmed entries`);
      }
    }
  } catch (error) {
    // The harness itself (a folder it could not read): reported, never thrown.
    fail('journal-valid', `the case could not be checked: ${describe(error)}`);
  } finally {
    await removeFolder(dir);
  }
  return found;
}

/**
 * A fresh run of the scenario on a fileStore that fails at one append (and every one after),
 * checked: invariant 6 on how it ended, 7–9 on what it left. Returns the journal it left, to
 * be resumed once the fault is cleared; undefined when there is nothing to resume.
 */
async function faultedRun(
  s: Scenario,
  fault: Extract<CrashFault, { kind: 'store' }>,
  length: number,
  dir: string,
  runId: string,
  build: (state: ModelState, log: Execution[]) => FuzzRunnable | undefined,
  fail: Fail,
  onOutcome: OutcomeListener | undefined,
): Promise<
  | {
      prefix: readonly JournalEntry[];
      confirmed: readonly JournalEntry[];
      modelFailed: boolean;
      where: string;
    }
  | undefined
> {
  const at = faultAt(fault.at, length);
  const store = faultyStore(
    fileStore(dir),
    at,
    injected(fault, journalFile(dir, runId)),
    fault.error === 'stall' ? STALL_TIMEOUT_MS : undefined,
  );
  const state: ModelState = { failed: false, calls: 0 };
  const log: Execution[] = [];
  const runnable = build(state, log);
  if (!runnable) return undefined;
  const where = `${describeFault(fault)} at append ${at} of ${length}`;
  const label = `faulted (${where}): `;
  const struck = () => store.appends >= at;
  const reason = reasonOf(fault.error);
  const outcome = await phase(
    s,
    s.abortAtMs,
    (signal) => {
      const options = { signal, runId, store, ...runOptionsOf(s) };
      return s.via === 'invoke' ? runnable.invoke(INPUT, options) : runnable.stream(INPUT, options);
    },
    s.via,
    state,
    fail,
    {
      onOutcome,
      label,
      name: 'faulted ',
      // A stalled store's small timeoutMs may also cut a slow healthy append: same reason.
      provoked: (error) =>
        JournalError.isInstance(error) && (struck() || error.reason === reason)
          ? 'failed'
          : undefined,
    },
  );
  checkKeys(log, runId, label, fail);
  if (outcome.hung) return undefined;
  onOutcome?.(struck() ? `fault struck: ${fault.error}` : 'fault never struck');
  if (struck()) {
    const { error } = outcome;
    if (!JournalError.isInstance(error)) {
      fail('fault-typed', `${label}the run ${outcomeName(outcome)}, though its store failed`);
    } else {
      if (error.reason !== reason)
        fail('fault-typed', `${label}ended '${error.reason}', not '${reason}': ${describe(error)}`);
      if (error.partial === undefined)
        fail('fault-typed', `${label}${describe(error)} carries no partial run`);
    }
  }
  const read = await checkFolder(dir, runId, label, fail);
  const promised = texts(store.confirmed);
  const kept = texts(read ?? []);
  if (kept.join('\n') !== promised.join('\n')) {
    const firstDiff = promised.findIndex((text, i) => kept[i] !== text);
    fail(
      'nothing-lost',
      `${label}${promised.length} entries confirmed, ${kept.length} read back${firstDiff >= 0 ? `; entry ${firstDiff + 1} (${store.confirmed[firstDiff]?.type}) differs` : ''}`,
    );
  }
  if (read === undefined) return undefined; // its start entry failed: no run to resume
  return {
    prefix: read,
    confirmed: store.confirmed,
    modelFailed: state.failed,
    where: `${where}, journal of ${read.length}`,
  };
}

/**
 * Invariant 11 on resumers that raced: every one that was refused ran nothing; at least one
 * proceeded, at most one made calls, and the others settled alike (they attached to the run
 * it ended). Returns the one that proceeded.
 */
function checkRacers(ran: readonly Ran[], fail: Fail): Ran | undefined {
  const refused = ran.filter((r) => isRunBusy(r.outcome.error));
  for (const r of refused) {
    if (r.log.length || r.state.calls)
      fail('one-racer', 'a racer refused with run-busy had run tools or made model calls first');
  }
  const proceeded = ran.filter((r) => !isRunBusy(r.outcome.error));
  if (proceeded.length === 0) {
    fail('one-racer', `all ${ran.length} racers were refused: ${describe(ran[0]?.outcome.error)}`);
    return undefined;
  }
  const working = proceeded.filter((r) => r.log.length || r.state.calls);
  if (working.length > 1) {
    fail('one-racer', `${working.length} racers ran tools or made model calls`);
  }
  const names = new Set(proceeded.map((r) => outcomeName(r.outcome)));
  if (names.size > 1)
    fail('one-racer', `racers that proceeded ended unlike: ${[...names].join(', ')}`);
  return working[0] ?? proceeded[0];
}
