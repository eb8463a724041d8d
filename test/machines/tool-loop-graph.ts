import { expect } from 'vitest';
import { createActor, type EventObject, fromCallback, type SnapshotFrom } from 'xstate';
import { getSimplePaths, type StatePath } from 'xstate/graph';
import {
  type ExecuteInput,
  type RespondInput,
  type ToolLoopConfig,
  type ToolLoopEffectRequest,
  type ToolLoopEvent,
  type ToolLoopInput,
  toolLoopMachine,
} from '../../machines/tool-loop.js';
import type { ApprovalDecision } from '../../src/approvals/approval.js';
import {
  APPROVAL_EVENTS,
  approvalEvents as sharedApprovalEvents,
} from '../../src/cli/walks/approval-events.js';
import {
  PATH_CONFIG,
  PLANS,
  pathInput,
  RECORD,
  RESPONSE,
  SECOND_RECORD,
} from '../../src/cli/walks/tool-loop-configs.js';
import type { Usage } from '../../src/usage.js';
import {
  allSnapshots,
  flush,
  json,
  type MachineGraph,
  machineGraph,
  type ReachabilityCheck,
  reachabilityViolations,
  stateNodePaths,
  transitionName,
  type Violation,
  visitedStateNodes,
} from './graph-kit.js';

export {
  PATH_CONFIG,
  pathInput,
  RECORD,
  RESPONSE,
  SECOND_RECORD,
  TOOL_BUDGET_CONFIG,
} from '../../src/cli/walks/tool-loop-configs.js';

// The tool-loop machine as a graph (SPEC D2, D3), shared by tool-loop.paths.test.ts. The
// machine requests `plan`, `execute` and `respond` from its one `effects` actor; traversal
// never runs it, it applies the answers — `plan.done`, `execute.record`, `execute.done`, … —
// to snapshots. Replay runs a real actor whose effects host the test answers step by step.
//
// SPEC H2: the machine cannot tell which tools need approval (the host asks). Walks whose
// config names a deadline policy (APPROVAL_CONFIG, APPROVAL_FAIL_CONFIG) offer the host's
// approval events and people's decisions, once per run, which keeps the graph small.

/** PATH_CONFIG, walking approvals: a deadline rejects the command. */
export const APPROVAL_CONFIG: ToolLoopConfig = {
  ...PATH_CONFIG,
  maxRounds: 1,
  planRetries: 0,
  approvalTimeout: 'reject',
};
/** PATH_CONFIG, walking approvals: a deadline fails the run. */
export const APPROVAL_FAIL_CONFIG: ToolLoopConfig = { ...APPROVAL_CONFIG, approvalTimeout: 'fail' };

/** Whether a walk under `config` offers approval events. */
export function walksApprovals(config: ToolLoopConfig): boolean {
  return config.approvalTimeout !== undefined;
}

export type ToolLoopMachine = typeof toolLoopMachine;
export type ToolLoopSnapshot = SnapshotFrom<ToolLoopMachine>;
/** The events of a path: the effects' answers, ABORT, and the timeout's delayed event. */
export type LoopPathEvent = ToolLoopEvent | { readonly type: typeof TIMEOUT_EVENT };
export type LoopPath = StatePath<ToolLoopSnapshot, LoopPathEvent>;

/** The delayed event of the loop's `timeout`, sent by replay instead of waiting for it. */
export const TIMEOUT_EVENT = 'xstate.after.loopTimeout.toolLoop.running';

/** Every state node, nested ones as `running.planning`. */
export const STATE_NODES: readonly string[] = stateNodePaths(toolLoopMachine);

/** The events of the paths, one object each, so they can be named. */
export const EVENTS = {
  planExecute: { type: 'plan.done', output: PLANS.execute },
  planExecuteTwo: { type: 'plan.done', output: PLANS.executeTwo },
  planResponse: { type: 'plan.done', output: PLANS.response },
  planNoCommands: { type: 'plan.done', output: PLANS.noCommands },
  planMalformed: { type: 'plan.done', output: PLANS.malformed },
  planError: { type: 'plan.error', error: new Error('planner unavailable') },
  record: { type: 'execute.record', index: 0, record: RECORD },
  secondRecord: { type: 'execute.record', index: 1, record: SECOND_RECORD },
  executed: { type: 'execute.done', output: [RECORD] },
  executedTwo: { type: 'execute.done', output: [RECORD, SECOND_RECORD] },
  executeError: { type: 'execute.error', error: new Error('executor crashed') },
  responded: { type: 'respond.done', output: RESPONSE },
  respondError: { type: 'respond.error', error: new Error('responder unavailable') },
  timeout: { type: TIMEOUT_EVENT },
  abort: { type: 'ABORT', reason: 'user cancelled' },
  ...APPROVAL_EVENTS,
} as const satisfies Record<string, LoopPathEvent>;

/**
 * Events a host or person that breaks the protocol sends: the round's end while a command
 * waits, decisions on calls no one asked about (call_9), and a decision before any request.
 * Offered only to the safety check (approvalSafetyEvents), never to the path walks.
 */
export const HOSTILE_EVENTS = {
  executedWhileWaiting: EVENTS.executed,
  approveUnknown: { type: 'APPROVE', callId: 'call_9' },
  rejectUnknown: { type: 'REJECT', callId: 'call_9', reason: 'who?' },
  timedOutUnknown: { type: 'approval.timedOut', callId: 'call_9', timeoutMs: 1_000 },
  approveEarly: EVENTS.approve,
} as const satisfies Record<string, LoopPathEvent>;

const EVENT_NAMES = new Map<EventObject, string>(
  Object.entries(EVENTS).map(([name, event]) => [event, name]),
);

export function eventName(event: EventObject): string {
  if (event.type === 'xstate.init') return 'start';
  return EVENT_NAMES.get(event) ?? event.type;
}

/** A path's name: its events, in order, and where it ends, e.g. `planResponse → responded ⇒ done`. */
export function pathName(path: LoopPath): string {
  const events = path.steps.slice(1).map((step) => eventName(step.event));
  return `${events.length ? events.join(' → ') : '(start)'} ⇒ ${stateName(path.state)}`;
}

export function stateName(snapshot: ToolLoopSnapshot): string {
  const { value } = snapshot;
  return typeof value === 'string'
    ? value
    : Object.entries(value)
        .map(([parent, child]) => `${parent}.${String(child)}`)
        .join();
}

/**
 * The events a snapshot can take: the answers to the effect its state requested, the timeout
 * and ABORT. The executor reports each command's record, in order, before it is done, as the
 * real one does; a crash of the executor is offered before that. Under maxToolCalls the
 * planner may also plan two commands (SPEC H3).
 */
export function loopEvents(snapshot: ToolLoopSnapshot): LoopPathEvent[] {
  if (snapshot.status !== 'active') return [];
  const always = [EVENTS.timeout, EVENTS.abort];
  const approvals = walksApprovals(snapshot.context.config) ? approvalEvents(snapshot) : [];
  if (snapshot.matches({ running: 'awaitingApproval' })) {
    // The round's other command may finish meanwhile; the host may break.
    const record = snapshot.context.roundRecords.length === 0 ? [EVENTS.record] : [];
    return [...approvals, ...record, EVENTS.executeError, ...always];
  }
  if (snapshot.matches({ running: 'planning' })) {
    return [
      EVENTS.planExecute,
      ...(snapshot.context.config.maxToolCalls === undefined ? [] : [EVENTS.planExecuteTwo]),
      EVENTS.planResponse,
      EVENTS.planNoCommands,
      EVENTS.planMalformed,
      EVENTS.planError,
      ...always,
    ];
  }
  if (snapshot.matches({ running: 'executing' })) {
    const commands = snapshot.context.plan?.executionCommands.length ?? 0;
    const finished = snapshot.context.roundRecords.length;
    if (finished === 0) return [...approvals, EVENTS.record, EVENTS.executeError, ...always];
    if (finished < commands) return [EVENTS.secondRecord, ...always];
    return [commands === 2 ? EVENTS.executedTwo : EVENTS.executed, ...always];
  }
  if (snapshot.matches({ running: 'responding' })) {
    return [EVENTS.responded, EVENTS.respondError, ...always];
  }
  return always;
}

/**
 * What a walk offers in `executing` (a request, before the round's record, once per run) and
 * in `awaitingApproval` (a second request, and decisions on the waiting calls): the events
 * `statecraft paths` offers too.
 */
function approvalEvents(snapshot: ToolLoopSnapshot): LoopPathEvent[] {
  const phase = snapshot.matches({ running: 'awaitingApproval' })
    ? 'awaiting'
    : snapshot.matches({ running: 'executing' }) && snapshot.context.roundRecords.length === 0
      ? 'tools'
      : 'elsewhere';
  return sharedApprovalEvents(phase, snapshot.context.approvals);
}

/** The walk's events and the hostile ones, for the approval safety check. */
export function approvalSafetyEvents(snapshot: ToolLoopSnapshot): LoopPathEvent[] {
  const events = loopEvents(snapshot);
  if (snapshot.status !== 'active') return events;
  const unknown = [
    HOSTILE_EVENTS.approveUnknown,
    HOSTILE_EVENTS.rejectUnknown,
    HOSTILE_EVENTS.timedOutUnknown,
  ];
  if (snapshot.matches({ running: 'awaitingApproval' })) {
    return [...events, HOSTILE_EVENTS.executedWhileWaiting, ...unknown];
  }
  if (snapshot.matches({ running: 'executing' })) {
    const asked = snapshot.context.approvals.decided.length > 0;
    return [...events, ...unknown, ...(asked ? [] : [HOSTILE_EVENTS.approveEarly])];
  }
  return events;
}

/**
 * What the future of a snapshot depends on. The counters are capped one past their limits:
 * the real machine never gets there, and a broken one (a guard that ignores a limit) then
 * closes a cycle instead of growing the graph forever, so its violation can be reported.
 */
export function serializeLoopState(snapshot: ToolLoopSnapshot): string {
  const { context } = snapshot;
  const { config } = context;
  return JSON.stringify({
    value: snapshot.value,
    roundIndex: Math.min(context.roundIndex, config.maxRounds + 1),
    // Under maxToolCalls (SPEC H3): the commands executed, which it counts, and those of each
    // plan, run or not (a plan of two it refused is not a plan of one).
    ...(config.maxToolCalls !== undefined && {
      executed: context.donePlans.length,
      plans: context.plans.map((p) => p.plan.executionCommands.length),
    }),
    planAttempts: Math.min(context.planAttempts, config.planRetries + 1),
    roundRecords: context.roundRecords.length,
    stopReason: context.stopReason,
    failure: context.failure?.code,
    // Which calls wait, and how each was decided (replay checks the decisions forwarded); a
    // set, so that a broken machine deciding one call again and again closes a cycle.
    approvals: [
      context.approvals.awaiting.map((a) => a.callId),
      [
        ...new Set(
          context.approvals.decided.map(
            (d) => `${d.callId}:${d.approved ? 'approved' : d.timedOut ? 'expired' : 'rejected'}`,
          ),
        ),
      ],
    ],
  });
}

function traversalOptions(
  config: ToolLoopConfig,
  change: Partial<ToolLoopInput> = {},
  events: (snapshot: ToolLoopSnapshot) => LoopPathEvent[] = loopEvents,
) {
  return {
    input: pathInput(config, change),
    events,
    serializeState: serializeLoopState,
  };
}

/** Every simple path from the start, sorted by name so test names are stable. */
export function simplePaths(
  machine: ToolLoopMachine = toolLoopMachine,
  config: ToolLoopConfig = PATH_CONFIG,
  change: Partial<ToolLoopInput> = {},
): LoopPath[] {
  // The traversal's events include the timeout's delayed event, which the machine's event
  // type does not list; the options are typed by the latter.
  const options = traversalOptions(config, change) as unknown as Parameters<
    typeof getSimplePaths<ToolLoopMachine>
  >[1];
  return (getSimplePaths(machine, options) as unknown as LoopPath[]).sort((a, b) =>
    pathName(a).localeCompare(pathName(b)),
  );
}

export type LoopGraph = MachineGraph<ToolLoopSnapshot, LoopPathEvent>;

export function loopGraph(
  machine: ToolLoopMachine = toolLoopMachine,
  config: ToolLoopConfig = PATH_CONFIG,
  events: (snapshot: ToolLoopSnapshot) => LoopPathEvent[] = loopEvents,
): LoopGraph {
  return machineGraph<ToolLoopSnapshot, LoopPathEvent>(
    machine,
    traversalOptions(config, {}, events),
  );
}

/**
 * SPEC D3: `executing` is unreachable once roundIndex reaches maxRounds. No snapshot on the
 * graph (resting, or a microstep on the way) is in `executing` with roundIndex >= maxRounds.
 */
export function executingBoundViolations(graph: LoopGraph, config: ToolLoopConfig): Violation[] {
  return allSnapshots(graph)
    .filter((s) => s.matches({ running: 'executing' }) && s.context.roundIndex >= config.maxRounds)
    .map((s) => ({
      property: 'executing-bound',
      detail: `in executing at round ${s.context.roundIndex} of ${config.maxRounds}: ${serializeLoopState(s)}`,
    }));
}

/**
 * SPEC H3: `executing` never runs commands past maxToolCalls: the commands executed before
 * and the round's own stay within it.
 */
export function toolCallBoundViolations(graph: LoopGraph, config: ToolLoopConfig): Violation[] {
  const max = config.maxToolCalls;
  if (max === undefined) return [];
  return allSnapshots(graph)
    .filter(
      (s) =>
        s.matches({ running: 'executing' }) &&
        s.context.donePlans.length + (s.context.plan?.executionCommands.length ?? 0) > max,
    )
    .map((s) => ({
      property: 'tool-call-bound',
      detail: `executing past maxToolCalls ${max}: ${serializeLoopState(s)}`,
    }));
}

/** A round's planner is asked again at most `planRetries` times after a malformed plan. */
export function planRetryViolations(graph: LoopGraph, config: ToolLoopConfig): Violation[] {
  return allSnapshots(graph)
    .filter((s) => s.context.planAttempts > config.planRetries)
    .map((s) => ({
      property: 'plan-retry-bound',
      detail: `${s.context.planAttempts} malformed plans in round ${s.context.roundIndex}: ${serializeLoopState(s)}`,
    }));
}

const isFinal = (snapshot: ToolLoopSnapshot) => snapshot.status === 'done';
const isInterruption = (event: LoopPathEvent) =>
  event.type === 'ABORT' || event.type === TIMEOUT_EVENT;

export const REACHABILITY_CHECKS: readonly ReachabilityCheck<ToolLoopSnapshot, LoopPathEvent>[] = [
  { property: 'final-reachable', isTarget: isFinal },
  // ABORT and the timeout take every state to `failed`: without them the check says more.
  {
    property: 'final-reachable-without-interruption',
    isTarget: isFinal,
    skipEvent: isInterruption,
  },
  {
    property: 'done-reachable-without-interruption',
    isTarget: (snapshot) => snapshot.matches('done'),
    from: (snapshot) => !isFinal(snapshot),
    skipEvent: isInterruption,
  },
];

/** Every D3 property at once: what a broken machine must make non-empty. */
export function graphViolations(
  machine: ToolLoopMachine = toolLoopMachine,
  config: ToolLoopConfig = PATH_CONFIG,
): Violation[] {
  const graph = loopGraph(machine, config);
  const visited = visitedStateNodes(graph);
  return [
    ...executingBoundViolations(graph, config),
    ...toolCallBoundViolations(graph, config),
    ...planRetryViolations(graph, config),
    ...REACHABILITY_CHECKS.flatMap((check) => reachabilityViolations(graph, check)),
    ...requiredStateNodes(config)
      .filter((node) => !visited.has(node))
      .map((node) => ({
        property: 'state-covered',
        detail: `${node} is never entered`,
      })),
    // Under the walk's events and the hostile ones: the machine must hold against both.
    ...(walksApprovals(config)
      ? approvalViolations(loopGraph(machine, config, approvalSafetyEvents))
      : []),
  ];
}

/** The state nodes a walk under `config` must enter: awaitingApproval only when it walks approvals. */
export function requiredStateNodes(config: ToolLoopConfig): string[] {
  return STATE_NODES.filter(
    (node) => walksApprovals(config) || node !== 'running.awaitingApproval',
  );
}

const forwards = (edge: LoopGraph['edges'][number]) =>
  edge.transitions.some((t) =>
    t.actions.some(
      (action) =>
        typeof action === 'object' &&
        action !== null &&
        (action as { type?: unknown }).type === 'forwardDecision',
    ),
  );

/**
 * SPEC H2 on the graph, for a host that keeps the protocol (it runs a command that needs
 * approval only once the machine forwards an approval, `decide`):
 * - `awaiting-held`: no snapshot, resting or on the way, has a command waiting for a decision
 *   outside `awaitingApproval`, but in `failed` (ABORT, a timeout): so `execute.done`, which
 *   only `executing` takes, never ends a round in which a command waits, and the loop never
 *   plans, responds or succeeds past one;
 * - `decision-forwarded-once`: an edge forwards a decision (forwardDecision) only for a call
 *   that waits for one in its source, and takes it off the waiting list (or fails the run):
 *   no go-ahead for a call never asked about, nor a second one for the same call.
 * What it cannot prove: that the host asks (approval.requested) for every command whose tool
 * needs approval, and runs none before its decision; that is the gate's (approvals-loop.test.ts).
 */
export function approvalViolations(graph: LoopGraph): Violation[] {
  const held = allSnapshots(graph)
    .filter(
      (s) =>
        s.context.approvals.awaiting.length > 0 &&
        !s.matches({ running: 'awaitingApproval' }) &&
        !s.matches('failed'),
    )
    .map((s) => ({
      property: 'awaiting-held',
      detail: `a command waits outside awaitingApproval: ${serializeLoopState(s)}`,
    }));
  const forwarded = graph.edges
    .filter((edge) => forwards(edge))
    .filter((edge) => {
      const callId = (edge.event as { callId?: string }).callId;
      const waited = edge.from.context.approvals.awaiting.some((a) => a.callId === callId);
      const stillWaits = edge.to.context.approvals.awaiting.some((a) => a.callId === callId);
      return !waited || (stillWaits && !edge.to.matches('failed'));
    })
    .map((edge) => ({
      property: 'decision-forwarded-once',
      detail: `${eventName(edge.event)} forwarded from ${serializeLoopState(edge.from)}`,
    }));
  return [...held, ...forwarded];
}

// ---------------------------------------------------------------------------------------------
// Replay: a path against a real actor whose effects host the test answers step by step.

type Waiting = Partial<Record<'plan' | 'execute' | 'respond', unknown>>;

/** The loop's effects host as a script: it keeps each request until the test answers it. */
class EffectsDriver {
  /** The requests waiting for an answer, by effect, with their inputs. */
  readonly pending: Waiting = {};
  /** Requests the loop cancelled (timeout, ABORT) while they were waiting. */
  cancelledCalls = 0;
  /** Whether the host was stopped (the loop ended): what it ran is aborted then. */
  stopped = false;
  /** The decisions the machine forwarded (SPEC H2): each lets the host run, or refuse, a call. */
  readonly decisions: ApprovalDecision[] = [];
  #sendBack: ((event: EventObject) => void) | undefined;

  readonly actors = {
    effects: fromCallback<ToolLoopEffectRequest>(({ sendBack, receive }) => {
      this.#sendBack = sendBack;
      receive((request) => {
        if (request.type === 'cancel') {
          this.cancelledCalls += Object.keys(this.pending).length;
          this.#clear();
          return;
        }
        if (request.type === 'decide') {
          if (this.pending.execute === undefined) {
            throw new Error(`a decision on ${request.decision.callId} outside a round`);
          }
          this.decisions.push(request.decision);
          return;
        }
        if (this.pending[request.type] !== undefined) {
          throw new Error(`a second ${request.type} request before the first was answered`);
        }
        this.pending[request.type] = request.input;
      });
      return () => {
        this.stopped = true;
        this.#clear();
      };
    }),
  };

  #clear() {
    for (const key of Object.keys(this.pending) as (keyof Waiting)[]) delete this.pending[key];
  }

  /** Answers the request `event` answers, as the real host would. */
  answer(event: ToolLoopEvent): void {
    // The host's approval events belong to the round it runs.
    const effect = (
      event.type.startsWith('approval.') ? 'execute' : event.type.split('.')[0]
    ) as keyof Waiting;
    if (this.pending[effect] === undefined || !this.#sendBack) {
      throw new Error(`cannot answer ${event.type}: no ${effect} request is waiting`);
    }
    // A round's records and approval events come before its answer: it still waits for one.
    if (event.type !== 'execute.record' && !event.type.startsWith('approval.')) {
      delete this.pending[effect];
    }
    this.#sendBack(event);
  }

  /** Which requests wait for an answer, with their inputs: what a snapshot's state implies. */
  waiting() {
    return json({
      plan: this.pending.plan,
      execute: this.pending.execute as ExecuteInput | undefined,
      respond: this.pending.respond as RespondInput | undefined,
    });
  }
}

/**
 * Tokens the path's answers reported: what the run must have counted. (Not part of the
 * traversal's serialization, so the snapshot a path ends in may have come by another path.)
 */
function tokensOf(events: readonly EventObject[]): number {
  let total = 0;
  for (const event of events) {
    const output = (event as { output?: { usage?: Usage } }).output;
    total += output?.usage?.totalTokens ?? 0;
  }
  return total;
}

/** The part of a snapshot a path step must agree on. */
function observed(snapshot: ToolLoopSnapshot) {
  const { context } = snapshot;
  return json({
    value: snapshot.value,
    status: snapshot.status,
    roundIndex: context.roundIndex,
    donePlans: context.donePlans,
    planAttempts: context.planAttempts,
    planError: context.planError,
    stopReason: context.stopReason,
    failure: context.failure && { code: context.failure.code, message: context.failure.message },
    approvals: context.approvals,
  });
}

/** The requests the state a snapshot rests in must have made, built from its context. */
function expectedWaiting(snapshot: ToolLoopSnapshot) {
  const { context } = snapshot;
  const planning = snapshot.matches({ running: 'planning' });
  const executing =
    snapshot.matches({ running: 'executing' }) || snapshot.matches({ running: 'awaitingApproval' });
  const responding = snapshot.matches({ running: 'responding' });
  return json({
    plan: planning
      ? {
          userInput: context.userInput,
          extraRequirement: context.extraRequirement,
          availableTools: context.availableTools,
          donePlans: context.donePlans,
          lastRoundResult: context.lastRoundRecords,
          roundIndex: context.roundIndex,
          maxRounds: context.config.maxRounds,
          ...(context.planError !== undefined && { planError: context.planError }),
        }
      : undefined,
    execute: executing
      ? { roundIndex: context.roundIndex, commands: context.plan?.executionCommands }
      : undefined,
    respond: responding
      ? {
          userInput: context.userInput,
          extraRequirement: context.extraRequirement,
          convergence: context.convergence,
        }
      : undefined,
  });
}

/**
 * The decisions the host must have been told of: every one the machine took, and the expiry
 * that failed the run (forwarded, so that the host journals it, but not taken as a decision).
 */
function expectedDecisions(snapshot: ToolLoopSnapshot): ApprovalDecision[] {
  // The expiry that fails the run is recorded too, like every decision.
  return [...snapshot.context.approvals.decided];
}

export interface ReplayResult {
  /** The transitions the real actor took, by `transitionName`. */
  readonly transitions: ReadonlySet<string>;
}

/**
 * Replays `path` on a real actor: the first step starts it; each later step answers the
 * request the event answers (or sends the timeout or ABORT from outside). After every step
 * the actor agrees with the path's snapshot, and exactly the request that state made waits,
 * with the input its context implies.
 */
export async function replayPath(
  path: LoopPath,
  machine: ToolLoopMachine = toolLoopMachine,
  config: ToolLoopConfig = PATH_CONFIG,
  change: Partial<ToolLoopInput> = {},
): Promise<ReplayResult> {
  const driver = new EffectsDriver();
  const transitions = new Set<string>();
  const actor = createActor(machine.provide({ actors: driver.actors }), {
    input: pathInput(config, change),
    inspect: (event) => {
      if (event.type === '@xstate.microstep') {
        for (const t of event._transitions) transitions.add(transitionName(t));
      }
    },
  });
  try {
    for (const [i, step] of path.steps.entries()) {
      const event = step.event as LoopPathEvent | { type: 'xstate.init' };
      const where = `step ${i} (${eventName(event)})`;
      if (event.type === 'xstate.init') actor.start();
      else if (event.type === 'APPROVE' || event.type === 'REJECT') {
        // A person's decision, from outside: forwarded to the host if it counts.
        actor.send(event);
      } else if (event.type === 'ABORT' || event.type === TIMEOUT_EVENT) {
        // The loop cancels what it waited for before it stops its host.
        const waited = Object.keys(driver.pending).length;
        const cancelled = driver.cancelledCalls;
        actor.send(event as never);
        await flush();
        expect(driver.cancelledCalls - cancelled, `${where}: requests cancelled`).toBe(waited);
      } else driver.answer(event);
      await flush();
      expect(observed(actor.getSnapshot()), where).toEqual(observed(step.state));
      const events = path.steps.slice(0, i + 1).map((s) => s.event);
      expect(actor.getSnapshot().context.usage.totalTokens, `${where}: tokens`).toBe(
        tokensOf(events),
      );
      expect(driver.waiting(), `${where}: calls waiting for an answer`).toEqual(
        expectedWaiting(step.state),
      );
      expect(json(driver.decisions), `${where}: decisions forwarded to the host`).toEqual(
        json(expectedDecisions(step.state)),
      );
    }
    const end = actor.getSnapshot();
    expect(end.status, 'after the last step').toBe(path.state.status);
    if (end.status === 'done') {
      const { usage: _spent, ...output } = end.output ?? {};
      const { usage: _other, ...expected } = path.state.output ?? {};
      expect(json(output), 'output').toEqual(json(expected));
      expect(end.output?.usage.totalTokens, 'output usage').toBe(end.context.usage.totalTokens);
      // The loop ended: its host is stopped (what it ran is aborted) and nothing waits.
      expect(driver.stopped, 'the effects host stopped').toBe(true);
      expect(driver.waiting(), 'requests left waiting').toEqual(json({}));
    }
  } finally {
    actor.stop();
  }
  return { transitions };
}
