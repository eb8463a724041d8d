import type { Attachment } from '../attachments.js';
import type { ToolExecutionRecord } from './records.js';

/** What the loop hands to its final answer once tools have run (SPEC T8). */
export interface Convergence {
  /** Each record's result keyed by its purpose; failures as `{ error, result }`. */
  readonly actionResults: Readonly<Record<string, unknown>>;
  /** Tells the answering model to use, and quote, the action results. */
  readonly extraInstruction: string;
  /** Every record of every round, unchanged. */
  readonly toolLogs: readonly ToolExecutionRecord[];
  /**
   * The images and files the tools returned, under the same keys as `actionResults`: the
   * answering model is sent them with the results. Absent when no tool returned any.
   */
  readonly attachments?: readonly {
    readonly key: string;
    readonly attachments: readonly Attachment[];
  }[];
}

export const QUOTE_SOURCES_INSTRUCTION =
  'Answer from the action results above. When a statement relies on one, cite its key in ' +
  'square brackets, e.g. [Search the docs], and quote the words you rely on. If an action ' +
  'failed or the results do not answer the request, say so rather than guess.';

/**
 * The records as `actionResults`: keyed by purpose, `tool_call_<n>` (n counting records from
 * 1) when the purpose is blank, and ` (2)`, ` (3)`… after a key already taken, so no result
 * hides another.
 */
export function toActionResults(
  records: readonly ToolExecutionRecord[],
): Readonly<Record<string, unknown>> {
  // A Map, then own properties: a purpose such as `__proto__` is a key like any other.
  const results = new Map<string, unknown>();
  actionResultKeys(records).forEach((key, index) => {
    const record = records[index] as ToolExecutionRecord;
    results.set(
      key,
      record.success ? record.result : { error: record.error, result: record.result },
    );
  });
  return Object.fromEntries(results);
}

/** Each record's key in `actionResults`, in record order. */
function actionResultKeys(records: readonly ToolExecutionRecord[]): string[] {
  const taken = new Set<string>();
  return records.map((record, index) => {
    const base = record.purpose.trim() || `tool_call_${index + 1}`;
    let key = base;
    for (let n = 2; taken.has(key); n++) key = `${base} (${n})`;
    taken.add(key);
    return key;
  });
}

/** The convergence of a finished loop, or undefined when nothing ran: nothing is injected then. */
export function converge(records: readonly ToolExecutionRecord[]): Convergence | undefined {
  if (records.length === 0) return undefined;
  const keys = actionResultKeys(records);
  const attachments = records.flatMap((record, index) =>
    record.attachments?.length
      ? [{ key: keys[index] as string, attachments: record.attachments }]
      : [],
  );
  return {
    actionResults: toActionResults(records),
    extraInstruction: QUOTE_SOURCES_INSTRUCTION,
    toolLogs: records,
    ...(attachments.length > 0 && { attachments }),
  };
}
