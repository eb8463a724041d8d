import type { EventObject } from 'xstate';
import {
  type ToolLoopConfig,
  type ToolLoopEvent,
  toolLoopMachine,
} from '../../../machines/tool-loop.js';
import type { PathsSpec } from '../machine-of.js';
import { APPROVAL_EVENTS, approvalEvents } from './approval-events.js';
import {
  PATH_CONFIG,
  PLANS,
  pathInput,
  RECORD,
  RESPONSE,
  SECOND_RECORD,
  TOOL_BUDGET_CONFIG,
} from './tool-loop-configs.js';

// How `statecraft paths` walks the tool-loop machine given the bare machine (or a ToolLoop):
// two rounds, one retry of a malformed plan, a timeout and a final response; then the
// configurations that take the other transitions (no response, planOnly, no tools, off,
// maxToolCalls).
// The machine's one invoked actor, `effects`, never answers here: the walk offers the answers
// to what the active state requested as events (`plan.done`, `execute.record`, …). The
// project's own suite is test/machines/tool-loop.paths.test.ts.

type ToolLoopSnapshot = ReturnType<typeof toolLoopMachine.getInitialSnapshot>;

const EVENTS = {
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
  abort: { type: 'ABORT', reason: 'user cancelled' },
  ...APPROVAL_EVENTS,
} as const satisfies Record<string, ToolLoopEvent>;

/** One round, no retry: approvals multiply the paths. */
const APPROVAL_WALK: ToolLoopConfig = {
  ...PATH_CONFIG,
  maxRounds: 1,
  planRetries: 0,
  approvalTimeout: 'reject',
};

const NAMES = new Map<EventObject, string>(Object.entries(EVENTS).map(([k, v]) => [v, k]));

/**
 * The answers to the effect the active state requested, and ABORT while it plans. The
 * executor reports each command's record, in order, before it is done, as the real one does;
 * under maxToolCalls the planner may plan two commands.
 */
function loopEvents(snapshot: ToolLoopSnapshot): ToolLoopEvent[] {
  if (snapshot.status !== 'active') return [];
  const { context } = snapshot;
  // SPEC H2, in walks whose config names a deadline policy: before the round's first record.
  const approvals =
    context.config.approvalTimeout === undefined
      ? []
      : approvalEvents(
          snapshot.matches({ running: 'awaitingApproval' })
            ? 'awaiting'
            : snapshot.matches({ running: 'executing' }) && context.roundRecords.length === 0
              ? 'tools'
              : 'elsewhere',
          context.approvals,
        );
  if (snapshot.matches({ running: 'awaitingApproval' })) {
    // The round's other command may finish meanwhile; the host may break.
    const record = context.roundRecords.length === 0 ? [EVENTS.record] : [];
    return [...approvals, ...record, EVENTS.executeError];
  }
  if (snapshot.matches({ running: 'planning' })) {
    return [
      EVENTS.planExecute,
      ...(snapshot.context.config.maxToolCalls === undefined ? [] : [EVENTS.planExecuteTwo]),
      EVENTS.planResponse,
      EVENTS.planNoCommands,
      EVENTS.planMalformed,
      EVENTS.planError,
      EVENTS.abort,
    ];
  }
  if (snapshot.matches({ running: 'executing' })) {
    const commands = snapshot.context.plan?.executionCommands.length ?? 0;
    const finished = snapshot.context.roundRecords.length;
    if (finished === 0) return [...approvals, EVENTS.record, EVENTS.executeError];
    if (finished < commands) return [EVENTS.secondRecord];
    return [commands === 2 ? EVENTS.executedTwo : EVENTS.executed];
  }
  if (snapshot.matches({ running: 'responding' })) {
    return [EVENTS.responded, EVENTS.respondError];
  }
  return [];
}

export function toolLoopWalks(machine: typeof toolLoopMachine = toolLoopMachine): PathsSpec[] {
  const walk = (label: string, config: ToolLoopConfig, tools = true): PathsSpec => ({
    machine,
    label,
    input: tools ? pathInput(config) : { ...pathInput(config), availableTools: [] },
    events: loopEvents,
    actors: { effects: 'never' },
    describeEvent: (event) => NAMES.get(event) ?? event.type,
    limits: { maxDepth: 20, maxPaths: 2000 },
  });
  return [
    walk('maxRounds 2, planRetries 1, timeout, respond', PATH_CONFIG),
    walk('no final response', { ...PATH_CONFIG, respond: false }),
    walk('planOnly', { ...PATH_CONFIG, planOnly: true }),
    walk('no tools', PATH_CONFIG, false),
    walk('disabled (enabled: false)', { ...PATH_CONFIG, enabled: false }),
    walk('maxToolCalls 2', TOOL_BUDGET_CONFIG),
    walk('a tool that needs approval, 1 round', APPROVAL_WALK),
    walk('a tool that needs approval, deadlines fail the run', {
      ...APPROVAL_WALK,
      approvalTimeout: 'fail',
    }),
  ];
}
