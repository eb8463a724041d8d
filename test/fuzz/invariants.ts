import {
  AbortError,
  ChainError,
  type ChainStep,
  ConfigError,
  CostLimitError,
  costOf,
  createChain,
  InvalidToolCallError,
  JournalError,
  JournalMismatchError,
  type Message,
  ModelError,
  ProtocolError,
  type RunDetails,
  StatecraftError,
  TimeoutError,
  TokenLimitError,
  ToolHookError,
  userMessage,
} from 'statecraft';
import { responseText } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { encode } from '../../src/durable/codec.js';
import { failed, type RunOutcome, settle, succeeded } from '../../src/restate/run-outcome.js';
import { type BuildExtras, buildChain, buildLoop, runOptionsOf } from './build.js';
import { type ModelState, OpenThings, VALIDATE_BOOM } from './fixtures.js';
import { type ChainScenario, FUZZ_PRICES, type LoopScenario, type Scenario } from './scenario.js';

// One fuzz run: build the chain or loop a scenario describes, run it (invoke or stream), and
// check every invariant of SPEC Q6 on what came out. Returns the violations, never throws.
// Crash mode (crash.ts) runs a scenario durably, crashes and resumes it with the same pieces.

export const INVARIANTS = {
  settles: 'a. settles within the bound',
  'typed-outcome': 'b. succeeds or fails with a documented typed error',
  'partial-complete': 'c. partial kept; transcript holds every answer and is valid input',
  'usage-adds-up': 'd. steps (chain) / model calls (loop) add up to the run usage',
  'stream-ends': 'e. stream() ends with a final event (then the typed error)',
  'no-model-error-from-tools': 'f. ModelError only when the model itself failed',
  'no-unhandled-rejection': 'g. no unhandled rejection or uncaught exception',
  'nothing-left-open': 'h. tools closed or aborted, no timers left pending',
  'budgets-kept':
    'i. no model call once a budget is spent (none with maxIterations 0), no more tool calls than maxToolCalls, a success within maxTokens and maxCost, its cost adding up',
  'crosses-the-wire':
    'j. what the run ended with reaches a Restate client whole: its result and details(), or its error with class, code and partial (statecraft/restate)',
  'finished-calls-kept':
    'k. every tool call that ran to completion before its step ended keeps its real result: in the transcript (chain), in toolLogs (loop); only the others are answered not run',
} as const;

/** Crash mode's own invariants (crash.ts), on top of those above, which apply to every run. */
export const CRASH_INVARIANTS = {
  'same-outcome':
    '1. resumed after a crash, a deterministic scenario ends as its uncrashed durable run did',
  'finished-not-rerun': '2. no tool call whose result was journaled runs again on resume',
  'reissued-once':
    '3. a call started but not finished runs at most once on resume; every key is <runId>:<callId>',
  'journal-ends':
    "4. the journal ends with an end entry of the outcome's status; resumed again, the run settles alike, calling nothing",
  'journal-sound': '5. no JournalMismatchError / JournalCodecError / JournalError',
  'fault-typed':
    "6. a store fault ends the run with a JournalError of the fault's reason, carrying the partial run",
  'nothing-lost':
    '7. every entry whose append resolved is read back, in order, by a fresh store (nothing else is)',
  'journal-valid':
    '8. after a fault, a torn takeover or a race, a fresh fileStore reads the journal and lists it, not as unreadable',
  'no-stray-files':
    '9. no lock or temporary file left: the folder holds only journals, inboxes and the index',
  'fault-resumes':
    '10. once the fault is cleared the run resumes and ends, repeating no call whose result was confirmed, one in flight at most once',
  'one-racer':
    '11. of resumers racing, exactly one proceeds; the others are refused with run-busy or attach to the ended run, calling nothing; the journal ends once',
  'bytes-once':
    "12. each attachment's bytes are in the journal once, however many results, answers and transcripts hold them",
} as const;

export const ALL_INVARIANTS = { ...INVARIANTS, ...CRASH_INVARIANTS } as const;
export type Invariant = keyof typeof ALL_INVARIANTS;

export interface Violation {
  readonly invariant: Invariant;
  readonly message: string;
}

/** How long a run may take before it counts as hung. */
export const BOUND_MS = Number(process.env.FUZZ_BOUND_MS ?? 5_000);
/** After a run settles: how long stragglers (tool delays are at most 20 ms) may take to end. */
const GRACE_MS = 300;

// One listener for the process, reporting into the run in progress (runs are sequential).
let strays: string[] | undefined;
let installed = false;
function listenForStrays(): void {
  if (installed) return;
  installed = true;
  process.on('unhandledRejection', (reason) => {
    strays?.push(`unhandled rejection: ${describe(reason)}`);
  });
  process.on('uncaughtException', (error) => {
    strays?.push(`uncaught exception: ${describe(error)}`);
  });
}

export function describe(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    const text = `${error.name}${code ? ` [${String(code)}]` : ''}: ${error.message}`;
    return text.length > 300 ? `${text.slice(0, 300)}…` : text;
  }
  try {
    return `non-Error thrown: ${String(error)}`;
  } catch {
    return 'non-Error thrown';
  }
}

function timers(): number {
  return process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
}

export interface Outcome {
  readonly hung: boolean;
  readonly elapsedMs: number;
  readonly result?: Record<string, unknown> & { details(): RunDetails };
  readonly error?: unknown;
  /** stream(): the events read, in order. */
  readonly events?: readonly { type: string; output?: { status: string } }[];
}

async function bounded(work: Promise<Omit<Outcome, 'hung' | 'elapsedMs'>>): Promise<Outcome> {
  const started = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<'hung'>((resolve) => {
    timer = setTimeout(() => resolve('hung'), BOUND_MS);
  });
  const settled = await Promise.race([work, hang]);
  clearTimeout(timer);
  const elapsedMs = performance.now() - started;
  return settled === 'hung' ? { hung: true, elapsedMs } : { ...settled, hung: false, elapsedMs };
}

async function consume(
  run: () => Promise<unknown> | AsyncIterable<{ type: string }>,
  via: 'invoke' | 'stream',
): Promise<Omit<Outcome, 'hung' | 'elapsedMs'>> {
  if (via === 'invoke') {
    try {
      return { result: (await run()) as Outcome['result'] };
    } catch (error) {
      return { error };
    }
  }
  const events: { type: string; output?: { status: string }; result?: unknown }[] = [];
  try {
    for await (const event of run() as AsyncIterable<{ type: string }>) events.push(event);
  } catch (error) {
    return { error, events };
  }
  const final = events.at(-1);
  return {
    result: (final?.type === 'final' ? final.result : undefined) as Outcome['result'],
    events,
  };
}

/** How a run ended, for the long run's summary: `succeeded`, an error's name, or `hung`. */
export type OutcomeListener = (outcome: string) => void;

export function outcomeName(outcome: Outcome): string {
  if (outcome.hung) return 'hung';
  if (outcome.error === undefined) return outcome.result ? 'succeeded' : 'no result';
  const e = outcome.error;
  return e instanceof Error
    ? `${e.name}${/machine failed/.test(e.message) ? ' (machine failed)' : ''}`
    : 'non-Error';
}

/** What every fuzz run asks. */
export const INPUT = 'Fuzz this.';

/** What a fuzz run calls: a chain or a tool loop, through the public API. */
export interface FuzzRunnable {
  invoke(input: string, o: object): Promise<unknown>;
  stream(input: string, o: object): AsyncIterable<{ type: string }>;
  resume(runId: string, o: object): Promise<unknown>;
}

/**
 * The chain or loop `build` makes, or undefined when construction refused the scenario (only
 * a ConfigError may: anything else breaks typed-outcome).
 */
export function construct(
  build: () => FuzzRunnable,
  fail: Fail,
  onOutcome?: OutcomeListener,
): FuzzRunnable | undefined {
  try {
    return build();
  } catch (error) {
    onOutcome?.(`construction: ${describe(error).split(':')[0]}`);
    if (!ConfigError.isInstance(error))
      fail('typed-outcome', `construction threw ${describe(error)}`);
    return undefined;
  }
}

/** A chain or loop of `s`, built with fresh pieces reporting into `open` and `state`. */
export function buildScenario(
  s: Scenario,
  open: OpenThings,
  state: ModelState,
  extras?: BuildExtras,
): FuzzRunnable {
  return s.kind === 'chain'
    ? buildChain(s, open, state, extras)
    : buildLoop(s, open, state, extras);
}

/**
 * The scenario's abort (`at` ms from now; -1: already), for one run: its signal, `hung()` to
 * end a run that did not settle within the bound, `clear()` once the run is over.
 */
export function scheduleAbort(at: number | undefined) {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  if (at === -1) controller.abort(new Error('fuzz: aborted before the run'));
  else if (at !== undefined) {
    timer = setTimeout(() => controller.abort(new Error(`fuzz: aborted at ${at} ms`)), at);
  }
  return {
    signal: controller.signal,
    hung: () => controller.abort(new Error('fuzz: the run hung')),
    clear: () => clearTimeout(timer),
  };
}

/**
 * Watches what `body` (one fuzz run: one or more runs of a chain or loop) leaves behind:
 * unhandled rejections and uncaught exceptions while it runs, and once it is done, tools of
 * `open` still open with their signal not aborted, and timers still pending.
 */
export async function watched(
  open: readonly OpenThings[],
  fail: Fail,
  body: () => Promise<void>,
): Promise<void> {
  listenForStrays();
  const runStrays: string[] = [];
  strays = runStrays;
  const timersBefore = timers();
  const leaks = () => open.flatMap((o) => o.leaks());
  try {
    await body();
  } finally {
    // Stragglers (a tool that ignored its signal for its last few ms) may end late on a busy
    // machine: poll a while before calling anything left open a leak.
    const deadline = performance.now() + GRACE_MS;
    do await new Promise((resolve) => setTimeout(resolve, 10));
    while ((leaks().length || timers() > timersBefore) && performance.now() < deadline);
    strays = undefined;
  }
  for (const stray of runStrays) fail('no-unhandled-rejection', stray);
  const left = leaks();
  if (left.length) fail('nothing-left-open', `still open, signal not aborted: ${left.join(', ')}`);
  const extraTimers = timers() - timersBefore;
  if (extraTimers > 0)
    fail('nothing-left-open', `${extraTimers} timer(s) still pending after the run`);
}

/** A failure of the journal itself, which a durable run must never end with (crash mode, 5). */
export function isJournalFailure(error: unknown): boolean {
  if (JournalError.isInstance(error) || JournalMismatchError.isInstance(error)) return true;
  // Not exported: known by its name and code.
  const code = (error as { code?: unknown } | null)?.code;
  return error instanceof Error && (error.name === 'JournalCodecError' || code === 'JOURNAL_CODEC');
}

export interface CheckRunOptions {
  readonly onOutcome?: OutcomeListener | undefined;
  /** Prefixes the run's violation messages (crash mode's phases). */
  readonly label?: string;
  /** Prefixes the run's outcome (default: `label`). */
  readonly name?: string;
  /** A durable run: a journal failure is reported as such (journal-sound). */
  readonly durable?: boolean;
  /**
   * Crash mode's faults: an error the case provoked on purpose, which its caller checks.
   * `refused`: the run never began (a racer refused with run-busy), nothing of it is checked
   * here; `failed`: a store fault ended it, checked as a documented failure with its partial.
   */
  readonly provoked?: (error: unknown) => 'refused' | 'failed' | undefined;
}

/**
 * Runs one run of `s` (`run` starts it; `via` says how to read it) to its end or the bound,
 * and checks invariants a–f on what came out. Returns the outcome; a hung run is the caller's
 * to abort.
 */
export async function checkRun(
  s: Scenario,
  run: () => Promise<unknown> | AsyncIterable<{ type: string }>,
  via: 'invoke' | 'stream',
  state: ModelState,
  failAny: Fail,
  { onOutcome, label = '', name = label, durable = false, provoked }: CheckRunOptions = {},
): Promise<Outcome> {
  const fail: Fail = (invariant, message) => failAny(invariant, `${label}${message}`);
  const outcome = await bounded(consume(run, via));
  onOutcome?.(`${name}${via}: ${outcomeName(outcome)}`);
  if (outcome.hung || outcome.elapsedMs > BOUND_MS) {
    fail('settles', `did not settle within ${BOUND_MS} ms (${Math.round(outcome.elapsedMs)} ms)`);
    return outcome;
  }
  const planned = outcome.error === undefined ? undefined : provoked?.(outcome.error);
  if (planned === 'refused') return outcome;
  if (durable && !planned && isJournalFailure(outcome.error)) {
    fail('journal-sound', `the run failed with ${describe(outcome.error)}`);
    return outcome;
  }
  if (s.kind === 'chain') await checkChain(s, outcome, state, fail, planned === 'failed');
  else checkLoop(s, outcome, state, fail, planned === 'failed');
  // A store fault stops the run in its process as it is, with no output for a final event:
  // its stream ends with the JournalError, which carries the partial run instead.
  if (outcome.events && planned !== 'failed') checkStream(outcome, fail);
  checkWire(outcome, fail);
  return outcome;
}

/**
 * A worker on Restate sends its run's end to the client as a RunOutcome (JSON), which the
 * client settles: it must come back as it was, whatever the run ended with.
 */
function checkWire(outcome: Outcome, fail: Fail): void {
  if (outcome.result === undefined && outcome.error === undefined) return;
  const withDetails = (value: Record<string, unknown> & { details(): RunDetails }) => ({
    ...value,
    details: value.details(),
  });
  const sent = outcome.result ? succeeded(outcome.result) : failed(outcome.error);
  const wire = JSON.parse(JSON.stringify(sent)) as RunOutcome;
  let revived: unknown;
  try {
    revived = { value: settle(wire) };
  } catch (error) {
    revived = { error };
  }
  const expected = outcome.result
    ? { value: withDetails(outcome.result) }
    : { error: outcome.error };
  const got = revived as { value?: Record<string, unknown> & { details(): RunDetails } };
  const actual = got.value ? { value: withDetails(got.value) } : revived;
  const text = (value: unknown) => JSON.stringify(encode(value, { stacks: false }));
  if (text(actual) !== text(expected)) {
    fail('crosses-the-wire', `the run's end changed on the wire: ${text(actual).slice(0, 300)}`);
  }
  const error = (actual as { error?: unknown }).error;
  if (outcome.error !== undefined && StatecraftError.isInstance(outcome.error)) {
    const code = (outcome.error as StatecraftError).code;
    if (!(error instanceof Error) || (error as StatecraftError).code !== code) {
      fail('crosses-the-wire', `a ${code} came back as ${describe(error)}`);
    }
  }
}

/** Runs one scenario and returns every invariant it breaks. */
export async function checkScenario(
  s: Scenario,
  onOutcome?: OutcomeListener,
): Promise<Violation[]> {
  const found: Violation[] = [];
  const fail: Fail = (invariant, message) => found.push({ invariant, message });
  const open = new OpenThings();
  const state: ModelState = { failed: false, calls: 0 };
  await watched([open], fail, async () => {
    const runnable = construct(() => buildScenario(s, open, state), fail, onOutcome);
    if (!runnable) return;
    const abort = scheduleAbort(s.abortAtMs);
    try {
      const options = { signal: abort.signal, ...runOptionsOf(s) };
      const outcome = await checkRun(
        s,
        () =>
          s.via === 'invoke' ? runnable.invoke(INPUT, options) : runnable.stream(INPUT, options),
        s.via,
        state,
        fail,
        { onOutcome },
      );
      if (outcome.hung) abort.hung();
    } finally {
      abort.clear();
    }
  });
  return found;
}

export type Fail = (invariant: Invariant, message: string) => void;

/** Typed and documented: which errors a scenario may end with. */
function checkTyped(s: Scenario, error: unknown, state: ModelState, fail: Fail): boolean {
  if (!StatecraftError.isInstance(error)) {
    fail('typed-outcome', `untyped error: ${describe(error)}`);
    return false;
  }
  const message = error.message;
  if (/machine failed/.test(message)) {
    fail('typed-outcome', `the machine crashed: ${describe(error)}`);
  } else if (AbortError.isInstance(error)) {
    if (s.abortAtMs === undefined) fail('typed-outcome', `AbortError without an abort: ${message}`);
  } else if (TimeoutError.isInstance(error)) {
    const limit = s.kind === 'chain' ? s.options.maxExecutionTime : s.options.timeout;
    // A call's approval deadline fails the run under onApprovalTimeout 'fail' (SPEC H2).
    const approvalDeadline = s.options.approvals === 'deadlineFail';
    if (limit === undefined && !approvalDeadline)
      fail('typed-outcome', `TimeoutError without a time limit: ${message}`);
  } else if (ModelError.isInstance(error)) {
    if (!state.failed) {
      fail(
        'no-model-error-from-tools',
        `ModelError though the model never failed: ${describe(error)}`,
      );
    }
  } else if (ChainError.isInstance(error)) {
    const cause = (error as { cause?: unknown }).cause;
    const fromValidation =
      s.kind === 'chain' &&
      s.options.validate === 'throws' &&
      (message.includes(VALIDATE_BOOM) ||
        (cause instanceof Error && cause.message === VALIDATE_BOOM));
    // A hook that throws, or invalidToolCall 'fail', ends the run with its own error as cause.
    const { hooks, invalidToolCall } = s.options;
    const fromHook =
      ToolHookError.isInstance(cause) &&
      ((hooks === 'throwBefore' && cause.hook === 'beforeToolCall') ||
        (hooks === 'throwAfter' && cause.hook === 'afterToolCall'));
    const fromInvalidCall = invalidToolCall === 'fail' && InvalidToolCallError.isInstance(cause);
    if (!fromValidation && !fromHook && !fromInvalidCall) {
      fail('typed-outcome', `undocumented ChainError: ${describe(error)}`);
    }
  } else if (CostLimitError.isInstance(error)) {
    if (s.kind !== 'chain' || s.options.maxCost === undefined) {
      fail('typed-outcome', `CostLimitError without maxCost: ${message}`);
    }
  } else if (!ProtocolError.isInstance(error) && !TokenLimitError.isInstance(error)) {
    fail('typed-outcome', `undocumented error type: ${describe(error)}`);
  }
  return true;
}

interface ChainPartial {
  readonly transcript?: readonly Message[];
  readonly usage?: { totalTokens: number };
  readonly cost?: number;
  readonly steps?: readonly ChainStep[];
  details?(): RunDetails;
}

/**
 * Every answered model call's text appears, in order, as an assistant message; but the answers
 * whose calls would have passed maxToolCalls (SPEC H3: their message is left out, so that the
 * final call sees the conversation without it), one per step marked `overBudget`.
 */
function missingAnswers(
  transcript: readonly Message[],
  details: RunDetails | undefined,
  steps: readonly ChainStep[] = [],
): string[] {
  if (!details) return ['partial.details is missing'];
  const overBudget = steps.filter((step) => step.overBudget);
  const answers = details.modelCalls
    .filter((c) => c.response)
    .map((c) => c.response)
    .filter((response) => {
      if (!response) return false;
      const ids = response.content.flatMap((p) => (p.type === 'tool-call' ? [p.toolCall.id] : []));
      // By its calls' ids; a response whose ids the chain made unique is matched by its text
      // and number of calls instead.
      const dropped = overBudget.findIndex(
        (step) =>
          ids.length > 0 &&
          ids.length === step.toolCalls.length &&
          (ids.every((id, i) => step.toolCalls[i]?.id === id) ||
            (new Set(ids).size < ids.length && step.text === responseText(response))),
      );
      if (dropped < 0) return true;
      overBudget.splice(dropped, 1);
      return false;
    });
  const assistant = transcript.filter((m) => m.role === 'assistant');
  const missing: string[] = [];
  let at = 0;
  for (const response of answers) {
    if (!response) continue;
    const text = responseText(response);
    const calls = response.content.filter((p) => p.type === 'tool-call').length;
    const found = assistant.findIndex(
      (m, i) =>
        i >= at &&
        m.role === 'assistant' &&
        m.content === text &&
        ((m.toolCalls?.length ?? 0) === calls || (m.toolCalls?.length ?? 0) === 0),
    );
    if (found < 0) missing.push(`${JSON.stringify(text.slice(0, 60))} (+${calls} call(s))`);
    else at = found + 1;
  }
  return missing;
}

async function continues(transcript: readonly Message[]): Promise<string | undefined> {
  const chain = createChain({ model: new ScriptedModel(() => ({ text: 'ok' })) });
  try {
    await chain.invoke({ messages: [...transcript, userMessage('continue')] });
    return undefined;
  } catch (error) {
    return describe(error);
  }
}

function sumSteps(steps: readonly { usage: { totalTokens: number } }[]): number {
  return steps.reduce((sum, step) => sum + step.usage.totalTokens, 0);
}

/**
 * SPEC H3 on what a run did (its details): no model call made once maxTokens or maxCost was
 * spent, none at all with maxIterations 0, no more tool calls than maxToolCalls; a success
 * within both budgets; the cost, when priced, that of the usage.
 */
function checkBudgets(
  s: ChainScenario,
  run: {
    readonly details?: RunDetails;
    readonly usage?: { totalTokens: number };
    readonly cost?: number;
  },
  succeeded: boolean,
  fail: Fail,
): void {
  const { details } = run;
  if (!details) return;
  const o = s.options;
  const maxTokens = o.maxTokens ?? 128_000;
  const calls = [...details.modelCalls].sort((a, b) => a.index - b.index);
  if (o.maxIterations === 0 && calls.length > 0) {
    fail('budgets-kept', `${calls.length} model call(s) with maxIterations 0`);
  }
  let tokens = 0;
  let dollars = 0;
  for (const call of calls) {
    if (tokens >= maxTokens) {
      fail(
        'budgets-kept',
        `model call #${call.index} made with ${tokens} of ${maxTokens} tokens spent`,
      );
    }
    if (o.maxCost !== undefined && dollars >= o.maxCost) {
      fail(
        'budgets-kept',
        `model call #${call.index} made with $${dollars} of $${o.maxCost} spent`,
      );
    }
    tokens += call.usage.totalTokens;
    dollars += costOf(call.usage, FUZZ_PRICES);
  }
  // Every call handed to the tools counts, a cancelled one too (SPEC H3).
  const ran = details.toolCalls.length;
  if (o.maxToolCalls !== undefined && ran > o.maxToolCalls) {
    fail('budgets-kept', `${ran} tool calls ran with maxToolCalls ${o.maxToolCalls}`);
  }
  if (
    succeeded &&
    (tokens > maxTokens || (o.maxCost !== undefined && dollars > o.maxCost + 1e-12))
  ) {
    fail('budgets-kept', `succeeded over budget: ${tokens} tokens, $${dollars}`);
  }
  const priced = o.maxCost !== undefined || o.priced;
  if (!priced && (run.cost !== undefined || details.cost !== undefined)) {
    fail('budgets-kept', 'a cost without prices');
  }
  if (priced && run.usage) {
    const usage = run.usage as Parameters<typeof costOf>[0];
    if (run.cost === undefined || Math.abs(run.cost - costOf(usage, FUZZ_PRICES)) > 1e-9) {
      fail('budgets-kept', `cost ${run.cost} is not the price of usage ${JSON.stringify(usage)}`);
    }
  }
}

async function checkChain(
  s: ChainScenario,
  outcome: Outcome,
  state: ModelState,
  fail: Fail,
  provoked = false,
) {
  const { error, result } = outcome;
  if (error === undefined) {
    if (!result) return; // stream without final: checkStream reports it
    const r = result as unknown as Required<ChainPartial>;
    checkBudgets(s, { ...r, details: result.details() }, true, fail);
    checkFinishedKept(r.transcript, result.details(), fail, 'result');
    const missing = missingAnswers(r.transcript, result.details(), r.steps);
    if (missing.length)
      fail('partial-complete', `result.transcript lacks answers: ${missing.join('; ')}`);
    if (!Object.is(sumSteps(r.steps), r.usage.totalTokens)) {
      fail(
        'usage-adds-up',
        `steps sum to ${sumSteps(r.steps)} tokens, usage says ${r.usage.totalTokens}`,
      );
    }
    return;
  }
  if (!provoked && !checkTyped(s, error, state, fail)) return;
  const partial = (error as { partial?: ChainPartial }).partial;
  if (!partial?.transcript || !partial.usage) {
    fail('partial-complete', `${describe(error)} has no partial transcript/usage`);
    return;
  }
  // A method, as on a result: missing (or not a method) fails as missing details.
  const details = typeof partial.details === 'function' ? partial.details() : undefined;
  checkBudgets(s, { usage: partial.usage, cost: partial.cost, details }, false, fail);
  checkFinishedKept(partial.transcript, details, fail, 'partial');
  const missing = missingAnswers(partial.transcript, details, partial.steps);
  if (missing.length)
    fail('partial-complete', `partial.transcript lacks answers: ${missing.join('; ')}`);
  const refused = await continues(partial.transcript);
  if (refused)
    fail('partial-complete', `partial.transcript + 'continue' is not valid input: ${refused}`);
  if (!partial.steps) fail('usage-adds-up', 'partial.steps is missing');
  else if (!Object.is(sumSteps(partial.steps), partial.usage.totalTokens)) {
    fail(
      'usage-adds-up',
      `partial.steps sum to ${sumSteps(partial.steps)} tokens, partial.usage says ${partial.usage.totalTokens} (${describe(error)})`,
    );
  }
}

/** Whether `value` is a stream (a tool's AsyncIterable output, read in batches). */
function isStream(value: unknown): boolean {
  return (
    typeof (value as { [Symbol.asyncIterator]?: unknown } | null)?.[Symbol.asyncIterator] ===
    'function'
  );
}

/**
 * SPEC Q8: every call details() shows as finished before its step ended (not `discarded`)
 * is answered in the transcript with its result, never as not run: the same success, and the
 * same output or error (a stream's output is its first batch there, so only its success is
 * compared when the stream opened).
 */
function checkFinishedKept(
  transcript: readonly Message[],
  details: RunDetails | undefined,
  fail: Fail,
  where: string,
): void {
  if (!details) return;
  const text = (value: unknown) => JSON.stringify(value) ?? 'undefined';
  for (const done of details.toolCalls) {
    if (done.discarded) continue;
    const { call, result } = done;
    const answers = transcript.flatMap((m) =>
      m.role === 'tool' && m.toolCallId === call.id ? [m] : [],
    );
    const kept = answers.some(
      (m) =>
        !/: not run, /.test(m.error ?? '') &&
        (isStream(result.output)
          ? true
          : m.success === result.success &&
            (result.success ? text(m.output) === text(result.output) : m.error === result.error)),
    );
    if (!kept) {
      const said = answers.map((m) => (m.success ? text(m.output) : m.error)).join(' | ');
      fail(
        'finished-calls-kept',
        `${where}: call ${call.id} ('${call.name}') finished (${result.success ? 'ok' : result.error}) but the transcript says ${said ? said.slice(0, 200) : 'nothing of it'}`,
      );
    }
  }
}

/**
 * SPEC Q8 for the loop: the records in toolLogs are the commands details() shows finished
 * before their round ended (not `discarded`), with the same success.
 */
function checkRecordsKept(
  toolLogs: readonly { toolName?: string; success: boolean }[],
  details: RunDetails | undefined,
  fail: Fail,
  where: string,
): void {
  if (!details) return;
  const finished = details.toolCalls
    .filter((done) => !done.discarded)
    .map((done) => `${done.call.name}:${done.result.success}`)
    .sort();
  const logged = toolLogs.map((record) => `${record.toolName}:${record.success}`).sort();
  if (finished.join() !== logged.join()) {
    fail(
      'finished-calls-kept',
      `${where}: commands finished [${finished.join(', ')}] but toolLogs has [${logged.join(', ')}]`,
    );
  }
}

interface LoopPartial {
  readonly usage?: { totalTokens: number };
  readonly toolLogs?: readonly { toolName?: string; success: boolean }[];
  details?(): RunDetails;
}

function checkLoopUsage(details: RunDetails | undefined, total: number, fail: Fail, where: string) {
  if (!details) return fail('usage-adds-up', `${where}: details are missing`);
  const sum = details.modelCalls.reduce((n, call) => n + call.usage.totalTokens, 0);
  if (!Object.is(sum, total)) {
    fail('usage-adds-up', `${where}: model calls sum to ${sum} tokens, usage says ${total}`);
  }
}

/** SPEC H3: a loop executes no more commands than maxToolCalls. */
function checkLoopToolCalls(s: LoopScenario, details: RunDetails | undefined, fail: Fail) {
  const max = s.options.maxToolCalls;
  const ran = details?.toolCalls.length ?? 0;
  if (max !== undefined && ran > max) {
    fail('budgets-kept', `${ran} commands executed with maxToolCalls ${max}`);
  }
}

function checkLoop(
  s: LoopScenario,
  outcome: Outcome,
  state: ModelState,
  fail: Fail,
  provoked = false,
) {
  const { error, result } = outcome;
  if (error === undefined) {
    if (!result) return;
    const usage = result.usage as { totalTokens: number };
    checkLoopUsage(result.details(), usage.totalTokens, fail, 'result');
    const toolLogs = result.toolLogs as LoopPartial['toolLogs'];
    checkRecordsKept(toolLogs ?? [], result.details(), fail, 'result');
    checkLoopToolCalls(s, result.details(), fail);
    return;
  }
  if (!provoked && !checkTyped(s, error, state, fail)) return;
  const partial = (error as { partial?: LoopPartial }).partial;
  if (!partial?.toolLogs || !partial.usage) {
    fail('partial-complete', `${describe(error)} has no partial toolLogs/usage`);
    return;
  }
  const details = typeof partial.details === 'function' ? partial.details() : undefined;
  const ran = details?.toolCalls.filter((c) => c.result.success && !c.discarded).length ?? 0;
  const logged = partial.toolLogs.filter((r) => r.success).length;
  if (logged < ran) {
    fail('partial-complete', `${ran} tool call(s) succeeded but partial.toolLogs has ${logged}`);
  }
  checkRecordsKept(partial.toolLogs, details, fail, 'partial');
  checkLoopUsage(details, partial.usage.totalTokens, fail, 'partial');
  checkLoopToolCalls(s, details, fail);
}

function checkStream(outcome: Outcome, fail: Fail) {
  const events = outcome.events ?? [];
  const finals = events.filter((e) => e.type === 'final');
  const last = events.at(-1);
  if (finals.length !== 1 || last?.type !== 'final') {
    fail(
      'stream-ends',
      `stream ended ${outcome.error ? `with ${describe(outcome.error)}` : 'normally'} after ${finals.length} final event(s)${last ? `, last event '${last.type}'` : ''}`,
    );
    return;
  }
  const failed = last.output?.status === 'failed';
  if (failed && outcome.error === undefined)
    fail('stream-ends', 'final says failed but the stream did not throw');
  if (!failed && outcome.error !== undefined) {
    fail(
      'stream-ends',
      `final says ${last.output?.status} but the stream threw ${describe(outcome.error)}`,
    );
  }
}
