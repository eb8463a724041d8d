import { type EventObject, getNextSnapshot, type SnapshotFrom } from 'xstate';
import { getSimplePaths, type StatePath } from 'xstate/graph';
import { budgetCrossed, nextCallEstimate, runCost, toolCallsMade } from '../../machines/budgets.js';
import {
  type ChainConfig,
  type ChainEvent,
  chainMachine,
  type ExecuteToolsOutput,
} from '../../machines/chain.js';
import { answerText, conclusionNote } from '../../machines/early-stopping.js';
import {
  APPROVAL_EVENTS,
  approvalEvents,
  chainPhase,
} from '../../src/cli/walks/approval-events.js';
import {
  ANSWER_TOKENS,
  CHEAP_CALLS_TOKENS,
  HUGE_TOKENS,
  PATH_CONFIG,
  pathInput,
  TOOL_CALL_TOKENS,
  usageOf,
  walksApprovals,
} from '../../src/cli/walks/chain-configs.js';
import { ConfigError } from '../../src/errors.js';
import type { ToolResult } from '../../src/messages.js';
import type { ModelResponse } from '../../src/model/language-model.js';
import {
  allSnapshots,
  type MachineGraph,
  machineGraph,
  type ReachabilityCheck,
  reachabilityViolations,
  type Violation,
  visitedStateNodes,
} from './graph-kit.js';

export {
  PATH_CONFIG,
  PATH_CONFIGS,
  type PathConfigName,
  pathInput,
} from '../../src/cli/walks/chain-configs.js';
export { reachabilityViolations, transitionName, visitedStateNodes } from './graph-kit.js';

// The chain machine as a graph (SPEC D2, D3): the configurations, the events offered in each
// state, a finite serialization, path generation and the graph properties, shared by
// test/machines/chain.paths.test.ts (replay on a real actor is in chain-replay.ts).
//
// The machine is pure: its effects are requests (`callModel`, `executeTools`,
// `validateResult`, `cancel`) sent to one invoked host actor, `effects`, which answers with
// `<effect>.done` / `<effect>.error` events. Traversal never runs that actor: it applies the
// answer events to snapshots directly, and offers the maxExecutionTime timer as an event.

export type ChainMachine = typeof chainMachine;
export type ChainSnapshot = SnapshotFrom<ChainMachine>;

/** The delayed event of `maxExecutionTime` (on the root, id `chain`), sent by replay instead of waiting. */
export const TIME_LIMIT_EVENT = 'xstate.after.maxExecutionTime.chain';

/** The events of a path: the machine's own, and its time limit firing. */
export type ChainPathEvent = ChainEvent | { readonly type: typeof TIME_LIMIT_EVENT };
export type ChainPath = StatePath<ChainSnapshot, ChainPathEvent>;

/** Every state node of the chain (idle, preparing and stopping are transient: `always` only). */
export const STATE_NODES: readonly string[] = Object.keys(chainMachine.root.states);

const LOOKUP = { id: 'call_1', name: 'lookup', arguments: { q: 'France' } };
const TOOL_CALLS = { unified: 'tool-calls', raw: 'tool_calls' } as const;

export const TOOL_CALL_RESPONSE: ModelResponse = {
  content: [
    { type: 'text', text: 'Let me look that up.' },
    { type: 'tool-call', toolCall: LOOKUP },
  ],
  usage: usageOf(TOOL_CALL_TOKENS),
  finishReason: TOOL_CALLS,
};

/** Two calls in one step: never a direct return, even of a returnDirect tool. */
export const TWO_CALLS_RESPONSE: ModelResponse = {
  content: [
    { type: 'tool-call', toolCall: LOOKUP },
    { type: 'tool-call', toolCall: { id: 'call_2', name: 'lookup', arguments: { q: 'Paris' } } },
  ],
  usage: usageOf(TOOL_CALL_TOKENS),
  finishReason: TOOL_CALLS,
};

/** Two calls, cheaply: past maxToolCalls 1, with room left for the final call (SPEC H3). */
export const CHEAP_CALLS_RESPONSE: ModelResponse = {
  content: [
    { type: 'text', text: 'Two lookups.' },
    { type: 'tool-call', toolCall: LOOKUP },
    { type: 'tool-call', toolCall: { id: 'call_2', name: 'lookup', arguments: { q: 'Lyon' } } },
  ],
  usage: usageOf(CHEAP_CALLS_TOKENS),
  finishReason: TOOL_CALLS,
};

/** Calls and no text: no answer for the final call of 'generate'. */
export const CALLS_ONLY_RESPONSE: ModelResponse = {
  content: [{ type: 'tool-call', toolCall: LOOKUP }],
  usage: usageOf(TOOL_CALL_TOKENS),
  finishReason: TOOL_CALLS,
};

export const ANSWER_RESPONSE: ModelResponse = {
  content: [{ type: 'text', text: 'Paris.' }],
  usage: usageOf(ANSWER_TOKENS),
  finishReason: { unified: 'stop', raw: 'stop' },
};

export const HUGE_RESPONSE: ModelResponse = {
  content: [{ type: 'text', text: 'Paris, at great length.' }],
  usage: usageOf(HUGE_TOKENS),
  finishReason: { unified: 'stop', raw: 'stop' },
};

/** Over any budget, and with a call: the final call's ending that must drop its calls. */
export const HUGE_CALLS_RESPONSE: ModelResponse = {
  content: [
    { type: 'text', text: 'Paris, and let me check.' },
    { type: 'tool-call', toolCall: LOOKUP },
  ],
  usage: usageOf(HUGE_TOKENS),
  finishReason: TOOL_CALLS,
};

export const TOOLS_OUTPUT: ExecuteToolsOutput = {
  results: [{ toolCallId: 'call_1', name: 'lookup', output: 'Paris', success: true }],
  streamBatches: [],
  openedStream: false,
};

export const TOOLS_FAILED_OUTPUT: ExecuteToolsOutput = {
  results: [
    { toolCallId: 'call_1', name: 'lookup', output: null, success: false, error: 'not found' },
  ],
  streamBatches: [],
  openedStream: false,
};

/** The events of the paths, one object each, shared by every path so they can be named. */
export const EVENTS = {
  toolCall: { type: 'callModel.done', output: TOOL_CALL_RESPONSE },
  twoCalls: { type: 'callModel.done', output: TWO_CALLS_RESPONSE },
  cheapCalls: { type: 'callModel.done', output: CHEAP_CALLS_RESPONSE },
  callsOnly: { type: 'callModel.done', output: CALLS_ONLY_RESPONSE },
  answer: { type: 'callModel.done', output: ANSWER_RESPONSE },
  huge: { type: 'callModel.done', output: HUGE_RESPONSE },
  hugeCalls: { type: 'callModel.done', output: HUGE_CALLS_RESPONSE },
  modelError: { type: 'callModel.error', error: new Error('model unavailable') },
  configError: {
    type: 'callModel.error',
    error: new ConfigError('remote', 'lists a local tool name'),
  },
  // call_1 finished, before its step ends (SPEC Q8).
  toolResult: { type: 'executeTools.result', result: TOOLS_OUTPUT.results[0] as ToolResult },
  toolsDone: { type: 'executeTools.done', output: TOOLS_OUTPUT },
  toolsFailed: { type: 'executeTools.done', output: TOOLS_FAILED_OUTPUT },
  toolsError: { type: 'executeTools.error', error: new Error('tool host crashed') },
  valid: { type: 'validateResult.done', output: { ok: true, value: 'Paris' } },
  invalid: {
    type: 'validateResult.done',
    output: { ok: false, message: 'Answer with one word in capitals.' },
  },
  validationError: { type: 'validateResult.error', error: new Error('validator crashed') },
  timeLimit: { type: TIME_LIMIT_EVENT },
  abort: { type: 'ABORT', reason: 'user cancelled' },
  ...APPROVAL_EVENTS,
} as const satisfies Record<string, ChainPathEvent>;

const EVENT_NAMES = new Map<EventObject, string>(
  Object.entries(EVENTS).map(([name, event]) => [event, name]),
);

/** A path event's short name, e.g. `toolCall` for callModel.done with a tool-call response. */
export function eventName(event: EventObject): string {
  if (event.type === 'xstate.init') return 'start';
  return EVENT_NAMES.get(event) ?? event.type;
}

/** A path's name: its events, in order, and where it ends, e.g. `toolCall → abort ⇒ failed`. */
export function pathName(path: ChainPath): string {
  const events = path.steps.slice(1).map((step) => eventName(step.event));
  return `${events.length ? events.join(' → ') : '(start)'} ⇒ ${String(path.state.value)}`;
}

/**
 * The events a snapshot can take: only the answers to the effect the active state requested,
 * the time limit when the config has one, and ABORT in any state that is not final. Calls of
 * a returnDirect tool also come two at a time, or fail; under maxToolCalls two cheap calls
 * come at once; the final call may answer with calls only.
 */
export function chainEvents(snapshot: ChainSnapshot): ChainPathEvent[] {
  if (snapshot.status !== 'active') return [];
  const { config, toolCalls, stepResults } = snapshot.context;
  const direct = config.returnDirectTools.length > 0;
  const answered = stepResults.some((r) => r.toolCallId === LOOKUP.id);
  const finishes = !answered && toolCalls.some((call) => call.id === LOOKUP.id);
  const waiting = snapshot.context.approvals.awaiting.some((a) => a.callId === LOOKUP.id);
  const answers: Record<string, readonly ChainPathEvent[]> = {
    thinking: [
      EVENTS.toolCall,
      ...(direct ? [EVENTS.twoCalls] : []),
      ...(config.maxToolCalls === undefined ? [] : [EVENTS.cheapCalls]),
      EVENTS.answer,
      EVENTS.huge,
      EVENTS.modelError,
      EVENTS.configError,
    ],
    // Before the step ends, call_1 may finish: the step's answer then agrees with it. Walks
    // of approvals have it finish while another call waits only, which keeps them small.
    doing: [
      ...(finishes && !walksApprovals(config) ? [EVENTS.toolResult] : []),
      EVENTS.toolsDone,
      ...(direct && !answered ? [EVENTS.toolsFailed] : []),
      EVENTS.toolsError,
    ],
    // Another call, or an approved one, finishes while calls wait; a host may break, as in
    // `doing`.
    awaitingApproval: [...(finishes && !waiting ? [EVENTS.toolResult] : []), EVENTS.toolsError],
    validating: [EVENTS.valid, EVENTS.invalid, EVENTS.validationError],
    concluding: [
      EVENTS.answer,
      EVENTS.toolCall,
      EVENTS.callsOnly,
      EVENTS.hugeCalls,
      EVENTS.modelError,
      EVENTS.configError,
    ],
  };
  const timer = config.maxExecutionTime === undefined ? [] : [EVENTS.timeLimit];
  const state = String(snapshot.value);
  const approvals = walksApprovals(config)
    ? approvalEvents(chainPhase(state), snapshot.context.approvals)
    : [];
  return [...approvals, ...(answers[state] ?? []), ...timer, EVENTS.abort];
}

/**
 * What the future of a snapshot depends on, and what replay checks of it: the state, the
 * generations made, the warnings given, the tokens spent (exact: a handful of sums under
 * these limits), the calls of the last response, the answer text, the steps and whether
 * their results succeeded, the limit that stopped the run, and how it failed. The default
 * (all of the context, transcripts included) is finite here too, but far bigger.
 */
export function serializeChainState(snapshot: ChainSnapshot): string {
  const { context } = snapshot;
  return JSON.stringify({
    value: snapshot.value,
    iterations: context.iterations,
    warned: context.warned,
    tokens: context.usage.totalTokens,
    calls: context.toolCalls.length,
    answer: answerTextOf(snapshot),
    // Per step, in order: an answer and a correction before a tool step is not the same run
    // as after it (its mutation log differs), now that the final call can follow tools.
    results: context.steps.map((step) => step.toolResults.map((r) => r.success)),
    // The results the step in progress has: a step cut short keeps them.
    stepResults: context.stepResults.map((r) => r.toolCallId),
    limit: context.limitReached,
    failure: context.failure?.code,
    approvals: context.approvals,
  });
}

/** The most generations a run can make: every allowed one, and the final call of 'generate'. */
const mostGenerations = (config: ChainConfig) => config.maxIterations + 1;

/** The answer text a snapshot would validate, or report on success (the stop message aside). */
export function answerTextOf(snapshot: ChainSnapshot): string {
  const { context } = snapshot;
  return answerText(context.steps, context.response, context.config.returnDirectTools);
}

function traversalOptions(config: ChainConfig) {
  return {
    input: pathInput(config),
    events: chainEvents,
    serializeState: serializeChainState,
    // Never reached by the chain; it keeps a broken copy (one that stops again and again)
    // finite, so that its checks report instead of running out of memory.
    stopWhen: (snapshot: ChainSnapshot) =>
      snapshot.context.iterations > mostGenerations(snapshot.context.config),
    limit: 50_000,
  };
}

/** Every simple path from the initial snapshot to every reachable snapshot, by name. */
export function simplePaths(
  machine: ChainMachine = chainMachine,
  config: ChainConfig = PATH_CONFIG,
): ChainPath[] {
  // The traversal's events include the time limit's delayed event, which the machine's event
  // type does not list (XState adds it per `after`); the options are typed by the latter.
  const options = traversalOptions(config) as unknown as Parameters<
    typeof getSimplePaths<ChainMachine>
  >[1];
  return (getSimplePaths(machine, options) as unknown as ChainPath[]).sort((a, b) =>
    pathName(a).localeCompare(pathName(b)),
  );
}

export type ChainGraph = MachineGraph<ChainSnapshot, ChainPathEvent>;

/** The reachable graph, by the same events and serialization as the paths. */
export function chainGraph(
  machine: ChainMachine = chainMachine,
  config: ChainConfig = PATH_CONFIG,
): ChainGraph {
  return machineGraph<ChainSnapshot, ChainPathEvent>(machine, traversalOptions(config));
}

/** Each snapshot an edge passes through with the one before it, from its source on. */
function passages(graph: ChainGraph): [ChainSnapshot, ChainSnapshot, ChainPathEvent][] {
  return graph.edges.flatMap((edge) => {
    const passed = [edge.from, ...edge.microsteps];
    return passed
      .slice(1)
      .map(
        (next, i) =>
          [passed[i] as ChainSnapshot, next, edge.event] as [
            ChainSnapshot,
            ChainSnapshot,
            ChainPathEvent,
          ],
      );
  });
}

/**
 * SPEC D3: without earlyStopping, `doing` is unreachable once the generations reach
 * maxIterations. No snapshot (a resting one, or a microstep on the way) is in `doing` with
 * iterations >= maxIterations, and no microstep enters `doing` from a snapshot whose
 * iterations already reached the limit. (`>=`, not `>`: with iterations == maxIterations no
 * generation is left to read the results.) With earlyStopping (SPEC H3) the last generation's
 * tools run, so the bound is one further: `doing` is never reached past maxIterations.
 */
export function doingBoundViolations(graph: ChainGraph, config: ChainConfig): Violation[] {
  const max = config.maxIterations + (config.earlyStopping === undefined ? 0 : 1);
  const violations: Violation[] = [];
  for (const snapshot of allSnapshots(graph)) {
    if (snapshot.matches('doing') && snapshot.context.iterations >= max) {
      violations.push({
        property: 'doing-bound',
        detail: `in doing at ${snapshot.context.iterations} of ${max} iterations: ${serializeChainState(snapshot)}`,
      });
    }
  }
  for (const [before, next, event] of passages(graph)) {
    if (next.matches('doing') && !before.matches('doing') && before.context.iterations >= max) {
      violations.push({
        property: 'doing-bound',
        detail: `entered doing from ${serializeChainState(before)} on ${eventName(event)}`,
      });
    }
  }
  return violations;
}

/**
 * SPEC R4: a limit stops a run once. After `stopping`, a run never thinks, runs tools or
 * prepares again (only `concluding`, `validating` its answer, or a final state), and never
 * passes `stopping` a second time: the final answer of 'generate' is not corrected.
 */
export function stopBoundViolations(graph: ChainGraph): Violation[] {
  const violations: Violation[] = [];
  for (const snapshot of allSnapshots(graph)) {
    const { limitReached } = snapshot.context;
    if (
      limitReached &&
      ['idle', 'preparing', 'thinking', 'doing'].some((s) => snapshot.matches(s as 'idle'))
    ) {
      violations.push({
        property: 'stop-bound',
        detail: `in ${String(snapshot.value)} after ${limitReached} stopped the run: ${serializeChainState(snapshot)}`,
      });
    }
  }
  for (const [before, next, event] of passages(graph)) {
    if (next.matches('stopping') && before.context.limitReached !== undefined) {
      violations.push({
        property: 'stop-bound',
        detail: `stopping again from ${serializeChainState(before)} on ${eventName(event)}`,
      });
    }
  }
  return violations;
}

/**
 * SPEC R4: the time limit bounds the run until a limit stops it; the final call of
 * 'generate' is not bounded. The time limit fires only from thinking, doing (or awaiting
 * approval) or validating,
 * and after a stop it changes nothing.
 */
export function timeLimitViolations(graph: ChainGraph): Violation[] {
  return graph.edges
    .filter((edge) => edge.event.type === TIME_LIMIT_EVENT)
    .flatMap((edge) => {
      const { from, to } = edge;
      const stopped = from.context.limitReached !== undefined;
      const moved = graph.keyOf(from) !== graph.keyOf(to);
      const fires = ['thinking', 'doing', 'awaitingApproval', 'validating'].some((s) =>
        from.matches(s as 'thinking'),
      );
      if (stopped ? !moved : fires && to.context.limitReached === 'maxExecutionTime') return [];
      return [
        {
          property: 'time-limit',
          detail: `${eventName(edge.event)} from ${serializeChainState(from)} led to ${serializeChainState(to)}`,
        },
      ];
    });
}

/**
 * SPEC H3: no model call is made that its budgets cannot pay for. Every microstep that enters
 * `thinking` or `concluding` (a model call requested) comes from a snapshot with tokens and
 * dollars left, whose next call, as estimated before it is made (the final call's note
 * included), fits maxTokens and maxCost.
 */
export function budgetBoundViolations(graph: ChainGraph): Violation[] {
  const violations: Violation[] = [];
  for (const [before, next, event] of passages(graph)) {
    const calling = ['thinking', 'concluding'].find(
      (s) => next.matches(s as 'thinking') && !before.matches(s as 'thinking'),
    );
    if (!calling) continue;
    const { context } = before;
    const { config } = context;
    const note =
      calling === 'concluding' ? [conclusionNote(context.limitReached ?? 'maxIterations')] : [];
    const estimate = nextCallEstimate({
      steps: context.steps,
      transcript: context.transcript,
      pending: context.pending,
      contract: config.contract,
      maxOutputTokens: config.maxOutputTokens,
      extra: note,
    });
    const crossed = budgetCrossed(context.usage, estimate, config);
    if (crossed) {
      violations.push({
        property: 'budget-bound',
        detail: `entered ${calling} though the call would cross ${crossed} (${context.usage.totalTokens} tokens, $${runCost(context.usage, config.prices) ?? 0} spent) from ${serializeChainState(before)} on ${eventName(event)}`,
      });
    }
  }
  return violations;
}

/**
 * SPEC H3: tools never run past maxToolCalls. In `doing`, the calls made before and the
 * step's own never exceed it.
 */
export function toolCallBoundViolations(graph: ChainGraph): Violation[] {
  const violations: Violation[] = [];
  for (const snapshot of allSnapshots(graph)) {
    const { maxToolCalls } = snapshot.context.config;
    if (!snapshot.matches('doing') || maxToolCalls === undefined) continue;
    const made = toolCallsMade(snapshot.context.steps) + snapshot.context.toolCalls.length;
    if (made > maxToolCalls) {
      violations.push({
        property: 'tool-call-bound',
        detail: `${made} tool calls of ${maxToolCalls} in doing: ${serializeChainState(snapshot)}`,
      });
    }
  }
  return violations;
}

/**
 * SPEC H3: a run that spent more than a budget never succeeds: every succeeded snapshot kept
 * maxTokens and maxCost.
 */
export function budgetKeptViolations(graph: ChainGraph): Violation[] {
  return [...graph.vertices.values()]
    .filter((snapshot) => snapshot.matches('succeeded'))
    .flatMap((snapshot) => {
      const { usage, config } = snapshot.context;
      const cost = runCost(usage, config.prices) ?? 0;
      const over =
        usage.totalTokens > config.maxTokens ||
        (config.maxCost !== undefined && cost > config.maxCost);
      return over
        ? [
            {
              property: 'budget-kept',
              detail: `succeeded over budget: ${serializeChainState(snapshot)}`,
            },
          ]
        : [];
    });
}

/**
 * SPEC H3 as a snapshot predicate for assertUnreachable: a model call requested (thinking,
 * concluding) with a budget already spent.
 */
export function callsWithBudgetSpent(snapshot: ChainSnapshot): boolean {
  if (!snapshot.matches('thinking') && !snapshot.matches('concluding')) return false;
  const { usage, config } = snapshot.context;
  const cost = runCost(usage, config.prices);
  return (
    usage.totalTokens >= config.maxTokens ||
    (config.maxCost !== undefined && cost !== undefined && cost >= config.maxCost)
  );
}

/** What assertUnreachable and canReach (statecraft/testing) walk the chain with, under `config`. */
export function reachOptions(config: ChainConfig) {
  return {
    input: pathInput(config),
    // The time limit is offered as the delayed event it is (`delays`, on by default).
    events: (snapshot: ChainSnapshot) =>
      chainEvents(snapshot).filter((event) => event.type !== TIME_LIMIT_EVENT) as ChainEvent[],
    actors: { effects: 'never' as const },
    serializeState: serializeChainState,
  };
}

const isFinal = (snapshot: ChainSnapshot) => snapshot.status === 'done';
const isAbort = (event: ChainPathEvent) => event.type === 'ABORT';

/**
 * A tool step whose run cannot afford a call after it (SPEC H3): once its tools answer, the
 * budget checked before the next call ends the run (or, at maxIterations, keeps 'generate'
 * from its final call). Success is out of reach from it by design, with tokens left.
 */
function budgetEndsAfterTools(snapshot: ChainSnapshot): boolean {
  // A step whose calls wait for decisions ends as it would once they are decided.
  let step = snapshot;
  for (const { callId } of snapshot.context.approvals.awaiting) {
    step = getNextSnapshot(chainMachine, step, { type: 'APPROVE', callId });
  }
  if (!step.matches('doing')) return false;
  const next = getNextSnapshot(chainMachine, step, EVENTS.toolsDone);
  const { failure, limitReached } = next.context;
  return (
    failure !== undefined &&
    (limitReached === 'maxTokens' ||
      limitReached === 'maxCost' ||
      /made no final call: it would exceed/.test(failure.message))
  );
}

/** The D3 reachability properties of the chain, weakest first. */
export const REACHABILITY_CHECKS: readonly ReachabilityCheck<ChainSnapshot, ChainPathEvent>[] = [
  { property: 'final-reachable', isTarget: isFinal },
  // ABORT alone takes every state that is not final to `failed`: without it the check says more.
  { property: 'final-reachable-without-abort', isTarget: isFinal, skipEvent: isAbort },
  // From a state with tokens left. A run that spent its budget exactly can only fail, unless
  // a direct return answers without another model call (the exactBudget config shows both);
  // so can a tool step after which no further call fits the budgets (SPEC H3).
  {
    property: 'success-reachable-without-abort',
    isTarget: (snapshot) => snapshot.matches('succeeded'),
    from: (snapshot) =>
      !isFinal(snapshot) &&
      snapshot.context.usage.totalTokens < snapshot.context.config.maxTokens &&
      !budgetEndsAfterTools(snapshot),
    skipEvent: isAbort,
  },
];

/** Every graph property at once: what a broken machine must make non-empty. */
export function graphViolations(
  machine: ChainMachine = chainMachine,
  config: ChainConfig = PATH_CONFIG,
): Violation[] {
  const graph = chainGraph(machine, config);
  const visited = visitedStateNodes(graph);
  // Only the final call of 'generate' concludes; only walks with approvals await them.
  const expected = STATE_NODES.filter(
    (node) =>
      (node !== 'concluding' || config.earlyStopping === 'generate') &&
      (node !== 'awaitingApproval' || walksApprovals(config)),
  );
  const missing = expected.filter((node) => !visited.has(node));
  return [
    ...doingBoundViolations(graph, config),
    ...budgetBoundViolations(graph),
    ...budgetKeptViolations(graph),
    ...toolCallBoundViolations(graph),
    ...stopBoundViolations(graph),
    ...timeLimitViolations(graph),
    ...REACHABILITY_CHECKS.flatMap((check) => reachabilityViolations(graph, check)),
    ...missing.map((node) => ({ property: 'state-covered', detail: `${node} is never entered` })),
  ];
}
