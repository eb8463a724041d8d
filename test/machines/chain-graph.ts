import { responseText, userMessage } from 'statecraft';
import { expect } from 'vitest';
import { createActor, type EventObject, fromCallback, type SnapshotFrom } from 'xstate';
import { getSimplePaths, type StatePath } from 'xstate/graph';
import {
  type ChainConfig,
  type ChainEffectRequest,
  type ChainEvent,
  type ChainInput,
  chainMachine,
  type ExecuteToolsOutput,
} from '../../machines/chain.js';
import type { ModelResponse } from '../../src/model/language-model.js';
import type { Usage } from '../../src/usage.js';
import {
  allSnapshots,
  allTransitionNames,
  flush,
  json,
  type MachineGraph,
  machineGraph,
  type ReachabilityCheck,
  reachabilityViolations,
  transitionName,
  type Violation,
  visitedStateNodes,
} from './graph-kit.js';

export { reachabilityViolations, transitionName, visitedStateNodes } from './graph-kit.js';

// The chain machine as a graph (SPEC D2, D3): the configuration, the events offered in each
// state, a finite serialization, path generation, the graph properties and the replay of a
// path on a real actor, shared by test/machines/chain.paths.test.ts.
//
// The machine is pure: its effects are requests (`callModel`, `executeTools`,
// `validateResult`) sent to one invoked host actor, `effects`, which answers with
// `<effect>.done` / `<effect>.error` events. Traversal never runs that actor: it applies the
// answer events to snapshots directly.

export type ChainMachine = typeof chainMachine;
export type ChainSnapshot = SnapshotFrom<ChainMachine>;
export type ChainPath = StatePath<ChainSnapshot, ChainEvent>;

/** Every state node of the chain (idle and preparing are transient: `always` only). */
export const STATE_NODES: readonly string[] = Object.keys(chainMachine.root.states);

// Token sizes, against maxTokens 100 and a token warning at 50 (100 - 50): one tool-call
// response crosses the warning but not the limit, two cross the limit, a huge one crosses it
// at once, and an answer is cheap.
const TOOL_CALL_TOKENS = 60;
const ANSWER_TOKENS = 10;
const HUGE_TOKENS = 1_000;

/** Small limits keep the graph small; both warnings are negative (distance from the limit). */
export const PATH_CONFIG: ChainConfig = {
  maxIterations: 2,
  maxTokens: 100,
  warnings: {
    // warns before generation 2 (2 - 1), i.e. on every way back to `preparing`
    iterations: { prompt: 'One generation left: answer now.', threshold: -1 },
    tokens: { prompt: 'The token budget is nearly spent.', threshold: -50 },
  },
  toolResponseInstructions: { text: 'Use the tool results.', when: 'always' },
  warnRecursiveCalls: true,
  duplicateWarnTools: ['lookup'],
  catchIntermediateResult: true,
  resultCacheKey: 'answer',
  contract: { baseInstruction: 'You answer questions.' },
};

export function pathInput(config: ChainConfig = PATH_CONFIG): ChainInput {
  return { config, messages: [userMessage('What is the capital of France?')] };
}

function usageOf(totalTokens: number): Usage {
  const inputTokens = Math.floor(totalTokens / 2);
  return { inputTokens, outputTokens: totalTokens - inputTokens, totalTokens };
}

export const TOOL_CALL_RESPONSE: ModelResponse = {
  content: [
    { type: 'text', text: 'Let me look that up.' },
    { type: 'tool-call', toolCall: { id: 'call_1', name: 'lookup', arguments: { q: 'France' } } },
  ],
  usage: usageOf(TOOL_CALL_TOKENS),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
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

export const TOOLS_OUTPUT: ExecuteToolsOutput = {
  results: [{ toolCallId: 'call_1', name: 'lookup', output: 'Paris', success: true }],
  streamBatches: [],
  openedStream: false,
};

/** The events of the paths, one object each, shared by every path so they can be named. */
export const EVENTS = {
  toolCall: { type: 'callModel.done', output: TOOL_CALL_RESPONSE },
  answer: { type: 'callModel.done', output: ANSWER_RESPONSE },
  huge: { type: 'callModel.done', output: HUGE_RESPONSE },
  modelError: { type: 'callModel.error', error: new Error('model unavailable') },
  toolsDone: { type: 'executeTools.done', output: TOOLS_OUTPUT },
  toolsError: { type: 'executeTools.error', error: new Error('tool host crashed') },
  valid: { type: 'validateResult.done', output: { ok: true, value: 'Paris' } },
  invalid: {
    type: 'validateResult.done',
    output: { ok: false, message: 'Answer with one word in capitals.' },
  },
  validationError: { type: 'validateResult.error', error: new Error('validator crashed') },
  abort: { type: 'ABORT', reason: 'user cancelled' },
} as const satisfies Record<string, ChainEvent>;

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
 * and ABORT in any state that is not final.
 */
export function chainEvents(snapshot: ChainSnapshot): ChainEvent[] {
  if (snapshot.status !== 'active') return [];
  const answers: Record<string, readonly ChainEvent[]> = {
    thinking: [EVENTS.toolCall, EVENTS.answer, EVENTS.huge, EVENTS.modelError],
    doing: [EVENTS.toolsDone, EVENTS.toolsError],
    validating: [EVENTS.valid, EVENTS.invalid, EVENTS.validationError],
  };
  return [...(answers[String(snapshot.value)] ?? []), EVENTS.abort];
}

/**
 * What the future of a snapshot depends on: the state, the generations made, the warnings
 * given, the tokens spent (exact: a handful of sums under these limits) and how it failed.
 * The default (all of the context, transcripts included) is finite here too, but far bigger.
 */
export function serializeChainState(snapshot: ChainSnapshot): string {
  const { context } = snapshot;
  return JSON.stringify({
    value: snapshot.value,
    iterations: context.iterations,
    warned: context.warned,
    tokens: context.usage.totalTokens,
    failure: context.failure?.code,
  });
}

function traversalOptions(config: ChainConfig) {
  return { input: pathInput(config), events: chainEvents, serializeState: serializeChainState };
}

/** Every simple path from the initial snapshot to every reachable snapshot, by name. */
export function simplePaths(
  machine: ChainMachine = chainMachine,
  config: ChainConfig = PATH_CONFIG,
): ChainPath[] {
  return getSimplePaths(machine, traversalOptions(config)).sort((a, b) =>
    pathName(a).localeCompare(pathName(b)),
  );
}

export type ChainGraph = MachineGraph<ChainSnapshot, ChainEvent>;

/** The reachable graph, by the same events and serialization as the paths. */
export function chainGraph(
  machine: ChainMachine = chainMachine,
  config: ChainConfig = PATH_CONFIG,
): ChainGraph {
  return machineGraph<ChainSnapshot, ChainEvent>(machine, traversalOptions(config));
}

/**
 * SPEC D3: `doing` is unreachable once the generations reach maxIterations. No snapshot (a
 * resting one, or a microstep on the way) is in `doing` with iterations >= maxIterations, and
 * no microstep enters `doing` from a snapshot whose iterations already reached the limit.
 * (`>=`, not `>`: with iterations == maxIterations no generation is left to read the results.)
 */
export function doingBoundViolations(graph: ChainGraph, config: ChainConfig): Violation[] {
  const max = config.maxIterations;
  const violations: Violation[] = [];
  for (const snapshot of allSnapshots(graph)) {
    if (snapshot.matches('doing') && snapshot.context.iterations >= max) {
      violations.push({
        property: 'doing-bound',
        detail: `in doing at ${snapshot.context.iterations} of ${max} iterations: ${serializeChainState(snapshot)}`,
      });
    }
  }
  for (const edge of graph.edges) {
    const passed = [edge.from, ...edge.microsteps];
    passed.forEach((snapshot, i) => {
      const next = passed[i + 1];
      if (next?.matches('doing') && !snapshot.matches('doing')) {
        if (snapshot.context.iterations >= max) {
          violations.push({
            property: 'doing-bound',
            detail: `entered doing from ${serializeChainState(snapshot)} on ${eventName(edge.event)}`,
          });
        }
      }
    });
  }
  return violations;
}

const isFinal = (snapshot: ChainSnapshot) => snapshot.status === 'done';
const isAbort = (event: ChainEvent) => event.type === 'ABORT';

/** The D3 reachability properties of the chain, weakest first. */
export const REACHABILITY_CHECKS: readonly ReachabilityCheck<ChainSnapshot, ChainEvent>[] = [
  { property: 'final-reachable', isTarget: isFinal },
  // ABORT alone takes every state that is not final to `failed`: without it the check says more.
  { property: 'final-reachable-without-abort', isTarget: isFinal, skipEvent: isAbort },
  {
    property: 'success-reachable-without-abort',
    isTarget: (snapshot) => snapshot.matches('succeeded'),
    from: (snapshot) => !isFinal(snapshot),
    skipEvent: isAbort,
  },
];

/** Every D3 property at once: what a broken machine must make non-empty. */
export function graphViolations(
  machine: ChainMachine = chainMachine,
  config: ChainConfig = PATH_CONFIG,
): Violation[] {
  const graph = chainGraph(machine, config);
  const visited = visitedStateNodes(graph);
  const missing = STATE_NODES.filter((node) => !visited.has(node));
  return [
    ...doingBoundViolations(graph, config),
    ...REACHABILITY_CHECKS.flatMap((check) => reachabilityViolations(graph, check)),
    ...missing.map((node) => ({ property: 'state-covered', detail: `${node} is never entered` })),
  ];
}

// ---------------------------------------------------------------------------------------------
// Replay: a path against a real actor whose `effects` host the test answers step by step.

/** The `effects` host as a script: it keeps each request until the test answers it. */
export class EffectsDriver {
  /** Requests not answered yet, in arrival order. */
  readonly pending: ChainEffectRequest[] = [];
  started = false;
  stopped = false;
  #sendBack: ((event: ChainEvent) => void) | undefined;

  readonly logic = fromCallback<ChainEffectRequest>(({ sendBack, receive }) => {
    this.started = true;
    this.#sendBack = sendBack;
    receive((request) => this.pending.push(request));
    return () => {
      // The run ended (final state): whatever it still waited for is dropped with it.
      this.stopped = true;
      this.pending.length = 0;
    };
  });

  /** Answers the one pending request of `type` with `event`, as the real host would. */
  answer(event: ChainEvent): void {
    const type = event.type.split('.')[0];
    const requests = this.pending.filter((request) => request.type === type);
    if (requests.length !== 1 || !this.#sendBack) {
      throw new Error(
        `cannot answer ${event.type}: ${requests.length} pending ${type} request(s), ` +
          `pending: [${this.pending.map((r) => r.type).join(', ')}]`,
      );
    }
    this.pending.splice(this.pending.indexOf(requests[0] as ChainEffectRequest), 1);
    this.#sendBack(event);
  }
}

/** The part of a snapshot a path step must agree on. */
function observed(snapshot: ChainSnapshot) {
  const { context } = snapshot;
  return {
    value: snapshot.value,
    status: snapshot.status,
    iterations: context.iterations,
    warned: context.warned,
    tokens: context.usage.totalTokens,
    failure: context.failure?.code,
    steps: context.steps.length,
  };
}

/** The request the state a snapshot rests in must have sent, built from the snapshot. */
function expectedRequests(snapshot: ChainSnapshot): unknown[] {
  const { context } = snapshot;
  if (snapshot.matches('thinking')) {
    return [
      {
        type: 'callModel',
        input: { messages: context.request.toJSON(), iteration: context.iterations },
      },
    ];
  }
  if (snapshot.matches('doing')) {
    const blocked = new Set(context.blockedResults.map((r) => r.toolCallId));
    const calls = context.toolCalls.filter((call) => !blocked.has(call.id));
    return [{ type: 'executeTools', input: { calls } }];
  }
  if (snapshot.matches('validating')) {
    const text = context.response ? responseText(context.response) : '';
    return [{ type: 'validateResult', input: { text } }];
  }
  return [];
}

/** Every transition the chain defines, by `transitionName`. */
export function chainTransitionNames(machine: ChainMachine = chainMachine): string[] {
  return allTransitionNames(machine);
}

export interface ReplayResult {
  /** The transitions the real actor took, by `transitionName`. */
  readonly transitions: ReadonlySet<string>;
}

/**
 * Replays `path` on a real actor: the first step starts it; each later step answers the
 * request the event belongs to through the `effects` host (or sends ABORT from outside); after
 * every step the actor must agree with the path's snapshot, and the host must hold exactly the
 * request that state makes, with the input its context implies.
 */
export async function replayPath(
  path: ChainPath,
  machine: ChainMachine = chainMachine,
  config: ChainConfig = PATH_CONFIG,
): Promise<ReplayResult> {
  const driver = new EffectsDriver();
  const transitions = new Set<string>();
  const actor = createActor(machine.provide({ actors: { effects: driver.logic } }), {
    input: pathInput(config),
    inspect: (event) => {
      if (event.type === '@xstate.microstep') {
        for (const t of event._transitions) transitions.add(transitionName(t));
      }
    },
  });
  try {
    for (const [i, step] of path.steps.entries()) {
      const event = step.event as ChainEvent | { type: 'xstate.init' };
      const where = `step ${i} (${eventName(event)})`;
      if (event.type === 'xstate.init') actor.start();
      else if (event.type === 'ABORT') actor.send(event);
      else driver.answer(event);
      await flush();
      expect(observed(actor.getSnapshot()), where).toEqual(observed(step.state));
      expect(json(driver.pending), `${where}: requests waiting for an answer`).toEqual(
        json(expectedRequests(step.state)),
      );
    }
    const end = actor.getSnapshot();
    expect(end.status, 'after the last step').toBe(path.state.status);
    if (end.status === 'done') {
      expect(driver.stopped, 'the effects host stops with the run').toBe(driver.started);
      expect(json(end.output), 'output').toEqual(json(path.state.output));
    }
  } finally {
    actor.stop();
  }
  return { transitions };
}
