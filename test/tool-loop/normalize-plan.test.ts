// SPEC T4: whatever a planner answers is normalized into
// { nextAction: 'execute' | 'response', executionCommands: [{ purpose, toolName, toolKwargs, todoSuggestion }] }.
// Every row is one rule: an input and the exact plan it must become.

import type { Plan } from 'statecraft';
import { normalizePlan, type ToolCommand } from 'statecraft/tool-loop';
import { describe, expect, it } from 'vitest';

/** A normalized command, with the fields a row does not care about at their defaults. */
function command(toolName: string, fields: Partial<ToolCommand> = {}): ToolCommand {
  return { purpose: `Use ${toolName}`, toolName, toolKwargs: {}, todoSuggestion: '', ...fields };
}

const execute = (...commands: ToolCommand[]): Plan => ({
  nextAction: 'execute',
  executionCommands: commands,
});
const RESPOND: Plan = { nextAction: 'response', executionCommands: [] };
const EXECUTE_NOTHING: Plan = { nextAction: 'execute', executionCommands: [] };

const search = { purpose: 'Search the docs', toolName: 'search', toolKwargs: { q: 'x' } };
const SEARCH = command('search', { purpose: 'Search the docs', toolKwargs: { q: 'x' } });
const fetchPage = { purpose: 'Fetch', toolName: 'fetch', toolKwargs: { url: 'u' } };
const FETCH = command('fetch', { purpose: 'Fetch', toolKwargs: { url: 'u' } });

type Row = readonly [name: string, input: unknown, expected: Plan];

function table(rows: readonly Row[]) {
  it.each(rows)('%s', (_name, input, expected) => {
    expect(normalizePlan(input)).toEqual(expected);
  });
}

describe('normalizePlan: a well-formed plan', () => {
  table([
    [
      'keeps every field of an executionCommands plan',
      {
        nextAction: 'execute',
        executionCommands: [{ ...search, todoSuggestion: 'summarize it' }],
      },
      execute({ ...SEARCH, todoSuggestion: 'summarize it' }),
    ],
    [
      'keeps the commands in order',
      { nextAction: 'execute', executionCommands: [search, fetchPage] },
      execute(SEARCH, FETCH),
    ],
    ['a response plan', { nextAction: 'response', executionCommands: [] }, RESPOND],
  ]);
});

describe('normalizePlan: which key holds the commands', () => {
  table([
    [
      'toolCommands becomes executionCommands',
      { nextAction: 'execute', toolCommands: [search] },
      execute(SEARCH),
    ],
    [
      'snake_case execution_commands',
      { nextAction: 'execute', execution_commands: [search] },
      execute(SEARCH),
    ],
    [
      'snake_case tool_commands',
      { nextAction: 'execute', tool_commands: [search] },
      execute(SEARCH),
    ],
    [
      'the first list-valued key wins: executionCommands over toolCommands',
      { nextAction: 'execute', toolCommands: [fetchPage], executionCommands: [search] },
      execute(SEARCH),
    ],
    [
      'the first list-valued key wins even when empty (executionCommands: [] beats toolCommands)',
      { nextAction: 'execute', executionCommands: [], toolCommands: [search] },
      EXECUTE_NOTHING,
    ],
    [
      'execution_commands: [] beats tool_commands',
      { nextAction: 'execute', execution_commands: [], tool_commands: [search] },
      EXECUTE_NOTHING,
    ],
    [
      'a non-list executionCommands is skipped in favour of a list toolCommands',
      { nextAction: 'execute', executionCommands: search, toolCommands: [fetchPage] },
      execute(FETCH),
    ],
    [
      'a null executionCommands is skipped in favour of a list tool_commands',
      { nextAction: 'execute', executionCommands: null, tool_commands: [fetchPage] },
      execute(FETCH),
    ],
    [
      'a single toolCommand object becomes a list of one',
      { nextAction: 'execute', toolCommand: search },
      execute(SEARCH),
    ],
    [
      'a single snake_case tool_command object becomes a list of one',
      { nextAction: 'execute', tool_command: search },
      execute(SEARCH),
    ],
    [
      'an empty list yields no command: the single toolCommand beside it is used',
      { nextAction: 'execute', toolCommands: [], toolCommand: search },
      execute(SEARCH),
    ],
    [
      'a list whose every command is dropped: the single tool_command is used',
      {
        nextAction: 'execute',
        executionCommands: [{ purpose: 'nameless' }, 42, { toolName: '  ' }],
        tool_command: search,
      },
      execute(SEARCH),
    ],
    [
      'the single toolCommand fallback also infers nextAction: execute',
      { executionCommands: [], toolCommand: search },
      execute(SEARCH),
    ],
    [
      'a list with a valid command wins over a single toolCommand',
      { nextAction: 'execute', toolCommands: [fetchPage], toolCommand: search },
      execute(FETCH),
    ],
    [
      'an empty list and an invalid single toolCommand: nothing to execute',
      { nextAction: 'execute', toolCommands: [], toolCommand: { toolName: ' ' } },
      EXECUTE_NOTHING,
    ],
    [
      'a toolCommand that is not an object is no command',
      { nextAction: 'execute', toolCommand: 'search' },
      EXECUTE_NOTHING,
    ],
    ['no command key at all: nothing to execute', { nextAction: 'execute' }, EXECUTE_NOTHING],
  ]);
});

describe('normalizePlan: each command', () => {
  table([
    [
      'a command without a tool name is dropped',
      { nextAction: 'execute', executionCommands: [{ purpose: 'p', toolKwargs: {} }, search] },
      execute(SEARCH),
    ],
    [
      "a command whose tool name is '' is dropped",
      { nextAction: 'execute', executionCommands: [{ ...fetchPage, toolName: '' }, search] },
      execute(SEARCH),
    ],
    [
      'a command whose tool name is blank is dropped',
      { nextAction: 'execute', executionCommands: [search, { ...fetchPage, toolName: '   ' }] },
      execute(SEARCH),
    ],
    [
      'a command whose tool name is not a string is dropped',
      { nextAction: 'execute', executionCommands: [{ ...fetchPage, toolName: 42 }, search] },
      execute(SEARCH),
    ],
    [
      'an item that is not an object is dropped',
      { nextAction: 'execute', executionCommands: ['search', null, 7, [search], search] },
      execute(SEARCH),
    ],
    [
      'the tool name is trimmed',
      { nextAction: 'execute', executionCommands: [{ ...search, toolName: '  search\n' }] },
      execute(SEARCH),
    ],
    [
      'snake_case tool_name and tool_kwargs',
      {
        nextAction: 'execute',
        executionCommands: [
          { purpose: 'Search the docs', tool_name: 'search', tool_kwargs: { q: 'x' } },
        ],
      },
      execute(SEARCH),
    ],
    [
      'a missing purpose becomes Use <toolName>',
      { nextAction: 'execute', executionCommands: [{ toolName: 'search' }] },
      execute(command('search', { purpose: 'Use search' })),
    ],
    [
      'a blank purpose becomes Use <trimmed toolName>',
      { nextAction: 'execute', executionCommands: [{ toolName: ' search ', purpose: '  ' }] },
      execute(command('search', { purpose: 'Use search' })),
    ],
    [
      'a purpose that is not a string becomes Use <toolName>',
      { nextAction: 'execute', executionCommands: [{ toolName: 'search', purpose: 3 }] },
      execute(command('search', { purpose: 'Use search' })),
    ],
    [
      'the purpose is trimmed',
      { nextAction: 'execute', executionCommands: [{ ...search, purpose: '  Search the docs ' }] },
      execute(SEARCH),
    ],
    [
      'string kwargs become {}',
      { nextAction: 'execute', executionCommands: [{ toolName: 'search', toolKwargs: '{"q":1}' }] },
      execute(command('search')),
    ],
    [
      'array kwargs become {}',
      { nextAction: 'execute', executionCommands: [{ toolName: 'search', toolKwargs: ['q'] }] },
      execute(command('search')),
    ],
    [
      'null kwargs become {}',
      { nextAction: 'execute', executionCommands: [{ toolName: 'search', toolKwargs: null }] },
      execute(command('search')),
    ],
    [
      'number kwargs become {}',
      { nextAction: 'execute', executionCommands: [{ toolName: 'search', toolKwargs: 5 }] },
      execute(command('search')),
    ],
    [
      'missing kwargs become {}',
      { nextAction: 'execute', executionCommands: [{ toolName: 'search' }] },
      execute(command('search')),
    ],
    [
      'snake_case todo_suggestion',
      {
        nextAction: 'execute',
        executionCommands: [{ toolName: 'search', todo_suggestion: 'read' }],
      },
      execute(command('search', { todoSuggestion: 'read' })),
    ],
    [
      'todoSuggestion falls back to next',
      { nextAction: 'execute', executionCommands: [{ toolName: 'search', next: 'then read' }] },
      execute(command('search', { todoSuggestion: 'then read' })),
    ],
    [
      'todoSuggestion wins over next',
      {
        nextAction: 'execute',
        executionCommands: [{ toolName: 'search', todoSuggestion: 'a', next: 'b' }],
      },
      execute(command('search', { todoSuggestion: 'a' })),
    ],
    [
      "a todoSuggestion that is not a string is ''",
      { nextAction: 'execute', executionCommands: [{ toolName: 'search', todoSuggestion: 7 }] },
      execute(command('search')),
    ],
    [
      "an empty todoSuggestion ('') falls back to next",
      {
        nextAction: 'execute',
        executionCommands: [{ toolName: 'search', todoSuggestion: '', next: 'then read' }],
      },
      execute(command('search', { todoSuggestion: 'then read' })),
    ],
    [
      'a whitespace todoSuggestion falls back to next',
      {
        nextAction: 'execute',
        executionCommands: [{ toolName: 'search', todo_suggestion: ' \n ', next: 'then read' }],
      },
      execute(command('search', { todoSuggestion: 'then read' })),
    ],
    [
      'a todoSuggestion that is not a string falls back to next',
      {
        nextAction: 'execute',
        executionCommands: [{ toolName: 'search', todoSuggestion: 7, next: 'then read' }],
      },
      execute(command('search', { todoSuggestion: 'then read' })),
    ],
    [
      "a next that is not a string is ''",
      { nextAction: 'execute', executionCommands: [{ toolName: 'search', next: { a: 1 } }] },
      execute(command('search')),
    ],
  ]);
});

describe("normalizePlan: the decision's todo is every command's fallback", () => {
  table([
    [
      "the decision's todoSuggestion fills every command without one",
      {
        nextAction: 'execute',
        todoSuggestion: 'compare them',
        executionCommands: [search, { ...fetchPage, todoSuggestion: 'quote it' }],
      },
      execute(
        { ...SEARCH, todoSuggestion: 'compare them' },
        { ...FETCH, todoSuggestion: 'quote it' },
      ),
    ],
    [
      "snake_case todo_suggestion at the decision's level",
      { nextAction: 'execute', todo_suggestion: 'compare them', executionCommands: [search] },
      execute({ ...SEARCH, todoSuggestion: 'compare them' }),
    ],
    [
      "without a decision todoSuggestion, the decision's next",
      { nextAction: 'execute', next: 'answer', executionCommands: [search] },
      execute({ ...SEARCH, todoSuggestion: 'answer' }),
    ],
    [
      "the decision's todoSuggestion wins over the decision's next",
      { nextAction: 'execute', todoSuggestion: 'a', next: 'b', executionCommands: [search] },
      execute({ ...SEARCH, todoSuggestion: 'a' }),
    ],
    [
      "a blank decision todoSuggestion falls back to the decision's next",
      { nextAction: 'execute', todoSuggestion: '  ', next: 'b', executionCommands: [search] },
      execute({ ...SEARCH, todoSuggestion: 'b' }),
    ],
    [
      "a command's own next wins over the decision's todoSuggestion",
      {
        nextAction: 'execute',
        todoSuggestion: 'decision',
        executionCommands: [{ ...search, todoSuggestion: '', next: 'own' }],
      },
      execute({ ...SEARCH, todoSuggestion: 'own' }),
    ],
    [
      'fills the single toolCommand too',
      { nextAction: 'execute', todoSuggestion: 'compare', toolCommand: search },
      execute({ ...SEARCH, todoSuggestion: 'compare' }),
    ],
  ]);
});

describe('normalizePlan: nextAction', () => {
  table([
    [
      'is trimmed and lower-cased',
      { nextAction: '  EXECUTE ', executionCommands: [search] },
      execute(SEARCH),
    ],
    [
      "'Response' lower-cased clears the commands",
      { nextAction: 'Response', executionCommands: [search] },
      RESPOND,
    ],
    [
      'snake_case next_action',
      { next_action: 'execute', executionCommands: [search] },
      execute(SEARCH),
    ],
    [
      'snake_case next_action: response',
      { next_action: 'response', executionCommands: [search] },
      RESPOND,
    ],
    ['missing, with commands: execute', { executionCommands: [search] }, execute(SEARCH)],
    ['missing, without commands: response', { executionCommands: [] }, RESPOND],
    [
      "invalid ('maybe'), with commands: execute",
      { nextAction: 'maybe', executionCommands: [search] },
      execute(SEARCH),
    ],
    ["invalid ('maybe'), without commands: response", { nextAction: 'maybe' }, RESPOND],
    [
      'not a string (42), with commands: execute',
      { nextAction: 42, executionCommands: [search] },
      execute(SEARCH),
    ],
    [
      'not a string (42), without commands: response',
      { nextAction: 42, executionCommands: [] },
      RESPOND,
    ],
    [
      'inferred from the commands that remain after dropping nameless ones',
      { executionCommands: [{ purpose: 'no tool' }] },
      RESPOND,
    ],
    [
      "an explicit 'execute' is kept even without commands",
      { nextAction: 'execute', executionCommands: [] },
      EXECUTE_NOTHING,
    ],
  ]);
});

describe('normalizePlan: clearing the commands', () => {
  table([
    [
      'useTool: false clears the commands and makes the action response',
      { nextAction: 'execute', useTool: false, executionCommands: [search] },
      RESPOND,
    ],
    [
      'snake_case use_tool: false clears the commands and makes the action response',
      { nextAction: 'execute', use_tool: false, executionCommands: [search] },
      RESPOND,
    ],
    [
      'useTool: false with an action that would be inferred as execute: response',
      { useTool: false, executionCommands: [search] },
      RESPOND,
    ],
    [
      'useTool: false with an explicit execute and no commands: response',
      { nextAction: 'execute', useTool: false },
      RESPOND,
    ],
    [
      'useTool: true keeps the commands',
      { nextAction: 'execute', useTool: true, executionCommands: [search] },
      execute(SEARCH),
    ],
    [
      "only the boolean false clears: useTool: 'false' keeps them",
      { nextAction: 'execute', useTool: 'false', executionCommands: [search] },
      execute(SEARCH),
    ],
    [
      "nextAction 'response' clears the commands",
      { nextAction: 'response', executionCommands: [search, fetchPage] },
      RESPOND,
    ],
    [
      "nextAction 'response' clears a single toolCommand",
      { nextAction: 'response', toolCommand: search },
      RESPOND,
    ],
  ]);
});

describe('normalizePlan: an answer that is not an object', () => {
  table([
    ['null', null, RESPOND],
    ['undefined', undefined, RESPOND],
    ['a string', 'text', RESPOND],
    [
      'a JSON string is not parsed',
      '{"nextAction":"execute","toolCommand":{"toolName":"a"}}',
      RESPOND,
    ],
    ['an array', [], RESPOND],
    ['an array of commands', [search], RESPOND],
    ['a number', 3, RESPOND],
    ['an empty object', {}, RESPOND],
  ]);
});
