import type {
  PlanOutcome,
  ResponseOutcome,
  ToolLoopConfig,
  ToolLoopInput,
} from '../../../machines/tool-loop.js';
import type { ToolExecutionRecord } from '../../plan/records.js';
import type { Usage } from '../../usage.js';

// The tool loop's configuration, input and the answers of its planner, executor and
// responder: one copy for `statecraft paths` (tool-loop-walk.ts) and the project's own path
// suite (test/machines/tool-loop-graph.ts). It lives here, not under test/, because src/
// never imports from test/.

/** Two rounds, one retry of a malformed plan, a timeout (never reached by the clock), a response. */
export const PATH_CONFIG: ToolLoopConfig = {
  maxRounds: 2,
  timeout: 60_000,
  planRetries: 1,
  respond: true,
};

/** SPEC H3's walk: two commands per run; a plan of two then passes it after one has run. */
export const TOOL_BUDGET_CONFIG: ToolLoopConfig = { ...PATH_CONFIG, maxToolCalls: 2 };

export function pathInput(
  config: ToolLoopConfig = PATH_CONFIG,
  change: Partial<ToolLoopInput> = {},
): ToolLoopInput {
  return {
    ...change,
    config,
    userInput: 'What is the capital of France?',
    availableTools: change.availableTools ?? [
      { name: 'lookup', description: 'Looks a fact up', inputSchema: { type: 'object' } },
    ],
  };
}

export function usageOf(totalTokens: number): Usage {
  return { inputTokens: totalTokens - 5, outputTokens: 5, totalTokens };
}

const COMMAND = {
  purpose: 'Find the capital',
  toolName: 'lookup',
  toolKwargs: { q: 'France' },
  todoSuggestion: 'Answer with it',
};

const SECOND_COMMAND = {
  purpose: 'Find the largest city',
  toolName: 'lookup',
  toolKwargs: { q: 'largest city of France' },
  todoSuggestion: 'Compare',
};

/** What the executor reports for the plan's one command. */
export const RECORD: ToolExecutionRecord = {
  purpose: COMMAND.purpose,
  toolName: COMMAND.toolName,
  kwargs: COMMAND.toolKwargs,
  todoSuggestion: COMMAND.todoSuggestion,
  next: COMMAND.todoSuggestion,
  success: true,
  result: 'Paris',
  error: null,
};

/** What the executor reports for the second command of a plan of two. */
export const SECOND_RECORD: ToolExecutionRecord = {
  purpose: SECOND_COMMAND.purpose,
  toolName: SECOND_COMMAND.toolName,
  kwargs: SECOND_COMMAND.toolKwargs,
  todoSuggestion: SECOND_COMMAND.todoSuggestion,
  next: SECOND_COMMAND.todoSuggestion,
  success: true,
  result: 'Paris',
  error: null,
};

/** The planner's answers: a command to run, a direct response, a plan with no tool, a malformed one. */
export const PLANS = {
  execute: {
    raw: { nextAction: 'execute', executionCommands: [COMMAND] },
    usage: usageOf(30),
    shortCircuited: false,
  },
  /** Two commands, offered only under maxToolCalls (SPEC H3). */
  executeTwo: {
    raw: { nextAction: 'execute', executionCommands: [COMMAND, SECOND_COMMAND] },
    usage: usageOf(35),
    shortCircuited: false,
  },
  response: { raw: { nextAction: 'response' }, usage: usageOf(10), shortCircuited: true },
  noCommands: {
    raw: { nextAction: 'execute', executionCommands: [{ purpose: 'no tool named' }] },
    usage: usageOf(20),
    shortCircuited: false,
  },
  malformed: {
    raw: undefined,
    error: 'Your answer held no JSON object.',
    usage: usageOf(15),
    shortCircuited: false,
  },
} as const satisfies Record<string, PlanOutcome>;

/** The responder's answer. */
export const RESPONSE: ResponseOutcome = {
  text: 'Paris [Find the capital].',
  result: 'Paris',
  usage: usageOf(40),
};
