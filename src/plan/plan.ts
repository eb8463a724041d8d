import { isRecord } from '../is-record.js';

/** One tool call a planner asks for (SPEC T4). */
export interface ToolCommand {
  /** Why the call is made; it keys the call's result in `actionResults` (SPEC T8). */
  readonly purpose: string;
  readonly toolName: string;
  readonly toolKwargs: Readonly<Record<string, unknown>>;
  /** What the planner means to do with the result; echoed back to it as `next`. */
  readonly todoSuggestion: string;
}

export type NextAction = 'execute' | 'response';

/** A planner's decision for one round, normalized. */
export interface Plan {
  readonly nextAction: NextAction;
  readonly executionCommands: readonly ToolCommand[];
}

type RawRecord = Readonly<Record<string, unknown>>;

// Planners answer in camelCase or in the seed's snake_case; both spellings are read.
const COMMAND_LISTS = [
  'executionCommands',
  'execution_commands',
  'toolCommands',
  'tool_commands',
] as const;
const SINGLE_COMMAND = ['toolCommand', 'tool_command'] as const;

const RESPOND: Plan = { nextAction: 'response', executionCommands: [] };

/**
 * Normalizes whatever a planner returned into a Plan, exactly as SPEC T4 says:
 * - the first list-valued key of `executionCommands`, `toolCommands` wins, even when empty;
 *   when it yields no valid command (empty, or every item dropped), or there is none, a
 *   single `toolCommand` object becomes a list of one;
 * - commands without a non-blank tool name are dropped; a blank purpose becomes
 *   `Use <toolName>`; kwargs that are not an object become `{}`;
 * - a command's todo is its own `todoSuggestion`, else its own `next`, else the decision's
 *   `todoSuggestion`, else the decision's `next` (blank counts as missing at every step);
 * - `nextAction` is trimmed and lower-cased; when missing or neither `execute` nor
 *   `response`, it is `execute` if commands remain, else `response`;
 * - `useTool: false`, or any action but `execute`, clears the commands and makes the action
 *   `response`, so the recorded plan says what the loop does with it.
 * Pure and total: a value that is not an object is a plan to respond.
 */
export function normalizePlan(raw: unknown): Plan {
  if (!isRecord(raw)) return RESPOND;
  // The seed's decision-level todo: what to do with every result that names no todo itself.
  const fallbackTodo = firstText(pick(raw, 'todoSuggestion', 'todo_suggestion'), raw.next);
  const normalize = (items: readonly unknown[]) =>
    items.flatMap((item) => {
      const command = normalizeCommand(item, fallbackTodo);
      return command ? [command] : [];
    });
  let commands = normalize(listedCommands(raw));
  // A list that yields nothing does not hide a valid single command beside it.
  if (commands.length === 0) commands = normalize(singleCommand(raw));
  const nextAction = actionOf(pick(raw, 'nextAction', 'next_action'), commands.length > 0);
  if (pick(raw, 'useTool', 'use_tool') === false || nextAction !== 'execute') return RESPOND;
  return { nextAction, executionCommands: commands };
}

function listedCommands(raw: RawRecord): readonly unknown[] {
  for (const key of COMMAND_LISTS) {
    const value = raw[key];
    if (Array.isArray(value)) return value;
  }
  return [];
}

function singleCommand(raw: RawRecord): readonly unknown[] {
  for (const key of SINGLE_COMMAND) {
    const value = raw[key];
    if (isRecord(value)) return [value];
  }
  return [];
}

function normalizeCommand(item: unknown, fallbackTodo: string): ToolCommand | undefined {
  if (!isRecord(item)) return undefined;
  const toolName = text(pick(item, 'toolName', 'tool_name'));
  if (toolName === '') return undefined;
  const purpose = text(item.purpose);
  const kwargs = pick(item, 'toolKwargs', 'tool_kwargs');
  const todo = firstText(pick(item, 'todoSuggestion', 'todo_suggestion'), item.next);
  return {
    purpose: purpose === '' ? `Use ${toolName}` : purpose,
    toolName,
    toolKwargs: isRecord(kwargs) ? kwargs : {},
    todoSuggestion: todo === '' ? fallbackTodo : todo,
  };
}

function actionOf(value: unknown, hasCommands: boolean): NextAction {
  const action = text(value).toLowerCase();
  if (action === 'execute' || action === 'response') return action;
  return hasCommands ? 'execute' : 'response';
}

/** The camelCase key's value, or the snake_case one when the camelCase key is missing or null. */
function pick(record: RawRecord, camel: string, snake: string): unknown {
  return record[camel] ?? record[snake];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** The first value that is a non-blank string, as written (a todo keeps its own spacing); else ''. */
function firstText(...values: readonly unknown[]): string {
  for (const value of values) if (text(value) !== '') return value as string;
  return '';
}
