import pLimit from 'p-limit';
import type { LocalToolRegistry } from '../../adapters/tools/local-registry.js';
import type { ToolCall } from '../messages.js';
import type { ToolCommand } from '../tool-loop/plan.js';
import { recordOf, type ToolExecutionRecord } from '../tool-loop/records.js';

export interface ExecuteCommandsOptions {
  readonly registry: LocalToolRegistry;
  /** At most this many commands run at once; undefined: all of them. */
  readonly concurrency: number | undefined;
  /** Reaches every running tool; aborted tools answer with failed records at once. */
  readonly signal: AbortSignal;
  /** Called as each command finishes, in finishing order. */
  readonly onRecord?: (index: number, record: ToolExecutionRecord) => void;
  /** Prefix of the call ids, unique per round. */
  readonly idPrefix: string;
}

/**
 * The tool loop's executor (SPEC T6): a round's commands run concurrently under an optional
 * p-limit cap; the records come back in command order whatever order the tools finish in.
 * Never throws: unknown tools, invalid arguments, tool exceptions and aborts are records with
 * `success: false` (the registry's rules, shared with the chain).
 */
export async function executeCommands(
  commands: readonly ToolCommand[],
  options: ExecuteCommandsOptions,
): Promise<ToolExecutionRecord[]> {
  const { registry, signal, onRecord } = options;
  const limit = options.concurrency === undefined ? undefined : pLimit(options.concurrency);
  const runOne = async (command: ToolCommand, index: number) => {
    const call: ToolCall = {
      id: `${options.idPrefix}_${index}`,
      name: command.toolName,
      arguments: command.toolKwargs,
    };
    const record = recordOf(command, await registry.run(call, { signal }));
    onRecord?.(index, record);
    return record;
  };
  return Promise.all(
    commands.map((command, index) =>
      limit ? limit(() => runOne(command, index)) : runOne(command, index),
    ),
  );
}
