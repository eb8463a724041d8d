import type { Attachment } from '../attachments.js';
import { jsonSafeOutput } from '../json-safe.js';
import type { ToolResult } from '../messages.js';
import type { ToolCommand } from './plan.js';

/** What one executed command produced (SPEC T6): the seed's ToolExecutionRecord. */
export interface ToolExecutionRecord {
  readonly purpose: string;
  readonly toolName: string;
  readonly kwargs: Readonly<Record<string, unknown>>;
  readonly todoSuggestion: string;
  /** The seed's compatibility alias of `todoSuggestion`. */
  readonly next: string;
  readonly success: boolean;
  /** The tool's output; null when it failed. */
  readonly result: unknown;
  /** Why the call failed; null when it succeeded. */
  readonly error: string | null;
  /**
   * Images and files the tool returned with its output (`toolOutput`): the final response
   * is sent them; a planner reads only what they are (plannerMessages). Absent when none.
   */
  readonly attachments?: readonly Attachment[];
}

/**
 * A record is what the next planner call and the response read as JSON (SPEC T3, T8), so it
 * must be JSON-safe: the result already is (the registry makes tool output safe where it is
 * made), and the kwargs are made so here, since a planner function may return any value.
 */
export function recordOf(command: ToolCommand, result: ToolResult): ToolExecutionRecord {
  return {
    purpose: command.purpose,
    toolName: command.toolName,
    kwargs: jsonSafeOutput(command.toolKwargs) as ToolExecutionRecord['kwargs'],
    todoSuggestion: command.todoSuggestion,
    next: command.todoSuggestion,
    success: result.success,
    result: result.success ? result.output : null,
    error: result.success ? null : (result.error ?? `Tool '${command.toolName}' failed`),
    ...(result.attachments?.length && { attachments: result.attachments }),
  };
}
