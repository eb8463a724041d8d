import type { EventObject } from 'xstate';
import {
  type PlanOutcome,
  type ResponseOutcome,
  type ToolLoopConfig,
  type ToolLoopEvent,
  type ToolLoopInput,
  toolLoopMachine,
} from '../../../machines/tool-loop.js';
import type { ToolExecutionRecord } from '../../tool-loop/records.js';
import type { PathsSpec } from '../machine-of.js';

// How `statecraft paths` walks the tool-loop machine given the bare machine (or a ToolLoop):
// two rounds, one retry of a malformed plan, a timeout and a final response. The planner and
// the responder are invoked actors, answered through `actors`; the executor reports by
// events. The project's own suite is test/machines/tool-loop.paths.test.ts.

type ToolLoopSnapshot = ReturnType<typeof toolLoopMachine.getInitialSnapshot>;

const usage = (totalTokens: number) => ({
  inputTokens: totalTokens - 5,
  outputTokens: 5,
  totalTokens,
});
const COMMAND = {
  purpose: 'Find the capital',
  toolName: 'lookup',
  toolKwargs: { q: 'France' },
  todoSuggestion: 'Answer with it',
};
const RECORD: ToolExecutionRecord = {
  purpose: COMMAND.purpose,
  toolName: COMMAND.toolName,
  kwargs: COMMAND.toolKwargs,
  todoSuggestion: COMMAND.todoSuggestion,
  next: COMMAND.todoSuggestion,
  success: true,
  result: 'Paris',
  error: null,
};

const PLANS: readonly PlanOutcome[] = [
  {
    raw: { nextAction: 'execute', executionCommands: [COMMAND] },
    usage: usage(30),
    shortCircuited: false,
  },
  { raw: { nextAction: 'response' }, usage: usage(10), shortCircuited: true },
  {
    raw: { nextAction: 'execute', executionCommands: [{ purpose: 'no tool named' }] },
    usage: usage(20),
    shortCircuited: false,
  },
  {
    raw: undefined,
    error: 'Your answer held no JSON object.',
    usage: usage(15),
    shortCircuited: false,
  },
];
const RESPONSE: ResponseOutcome = {
  text: 'Paris [Find the capital].',
  result: 'Paris',
  usage: usage(40),
};

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

const CONFIG: ToolLoopConfig = { maxRounds: 2, timeout: 60_000, planRetries: 1, respond: true };

const input = (config: ToolLoopConfig): ToolLoopInput => ({
  config,
  userInput: 'What is the capital of France?',
  availableTools: [
    { name: 'lookup', description: 'Looks a fact up', inputSchema: { type: 'object' } },
  ],
});

export function toolLoopWalks(machine: typeof toolLoopMachine = toolLoopMachine): PathsSpec[] {
  const walk = (label: string, config: ToolLoopConfig, tools = true): PathsSpec => ({
    machine,
    label,
    input: tools ? input(config) : { ...input(config), availableTools: [] },
    events: loopEvents,
    actors: {
      plan: { outputs: PLANS, errors: [new Error('planner unavailable')] },
      execute: 'never',
      respond: { outputs: [RESPONSE], errors: [new Error('responder unavailable')] },
    },
    describeEvent: (event) => NAMES.get(event) ?? event.type,
    limits: { maxDepth: 20, maxPaths: 2000 },
  });
  return [
    walk('maxRounds 2, planRetries 1, timeout, respond', CONFIG),
    walk('no final response', { ...CONFIG, respond: false }),
    walk('planOnly', { ...CONFIG, planOnly: true }),
    walk('no tools', CONFIG, false),
  ];
}
