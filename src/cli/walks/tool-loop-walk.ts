import type { EventObject } from 'xstate';
import {
  type ToolLoopConfig,
  type ToolLoopEvent,
  toolLoopMachine,
} from '../../../machines/tool-loop.js';
import type { PathsSpec } from '../machine-of.js';
import { PATH_CONFIG, PLANS, pathInput, RECORD, RESPONSE } from './tool-loop-configs.js';

// How `statecraft paths` walks the tool-loop machine given the bare machine (or a ToolLoop):
// two rounds, one retry of a malformed plan, a timeout and a final response; then the
// configurations that take the other transitions (no response, planOnly, no tools, off).
// The planner and the responder are invoked actors, answered through `actors`; the executor
// reports by events. The project's own suite is test/machines/tool-loop.paths.test.ts.

type ToolLoopSnapshot = ReturnType<typeof toolLoopMachine.getInitialSnapshot>;

const EVENTS = {
  record: { type: 'execute.record', index: 0, record: RECORD },
  executed: { type: 'execute.done', records: [RECORD] },
  executeError: { type: 'execute.error', error: new Error('executor crashed') },
  abort: { type: 'ABORT', reason: 'user cancelled' },
} as const satisfies Record<string, ToolLoopEvent>;

const NAMES = new Map<EventObject, string>(Object.entries(EVENTS).map(([k, v]) => [v, k]));

/** The executor reports its one command's record before it is done, as the real one does. */
function loopEvents(snapshot: ToolLoopSnapshot): ToolLoopEvent[] {
  if (snapshot.status !== 'active') return [];
  if (snapshot.matches({ running: 'executing' })) {
    return snapshot.context.roundRecords.length === 0
      ? [EVENTS.record, EVENTS.executeError]
      : [EVENTS.executed];
  }
  return snapshot.matches({ running: 'planning' }) ? [EVENTS.abort] : [];
}

export function toolLoopWalks(machine: typeof toolLoopMachine = toolLoopMachine): PathsSpec[] {
  const walk = (label: string, config: ToolLoopConfig, tools = true): PathsSpec => ({
    machine,
    label,
    input: tools ? pathInput(config) : { ...pathInput(config), availableTools: [] },
    events: loopEvents,
    actors: {
      plan: { outputs: Object.values(PLANS), errors: [new Error('planner unavailable')] },
      execute: 'never',
      respond: { outputs: [RESPONSE], errors: [new Error('responder unavailable')] },
    },
    describeEvent: (event) => NAMES.get(event) ?? event.type,
    limits: { maxDepth: 20, maxPaths: 2000 },
  });
  return [
    walk('maxRounds 2, planRetries 1, timeout, respond', PATH_CONFIG),
    walk('no final response', { ...PATH_CONFIG, respond: false }),
    walk('planOnly', { ...PATH_CONFIG, planOnly: true }),
    walk('no tools', PATH_CONFIG, false),
    walk('disabled (enabled: false)', { ...PATH_CONFIG, enabled: false }),
  ];
}
