import type { ToolCall } from '../messages.js';
import { OBSERVED_AS, REPORTS_ITSELF } from '../observe/observe-agent-run.js';
import { type InheritsObservers, RUN_OBSERVERS } from '../observe/registry.js';
import type {
  ToolLoopResult,
  ToolLoopRunInput,
  ToolLoopStreamEvent,
} from '../tool-loop/run-types.js';
import type { ToolLoop } from '../tool-loop/tool-loop.js';
import { observedSession } from './trace-run.js';
import type { RunContext, RunnableDefinition } from './types.js';

/**
 * A tool loop's run as a Runnable (SPEC R1): what `fromToolLoop(loop)` and a tool loop as a
 * step do. Its planned commands stream as tool calls and its execution records as their
 * results, with ids made of the round and the command's place.
 */
export function toolLoopRun(
  loop: ToolLoop,
  name = loop.name,
): RunnableDefinition<string | ToolLoopRunInput, ToolLoopResult> {
  return {
    name,
    kind: 'tool-loop',
    // Observers see the loop's own run, as this Runnable run (SPEC X4): one run, not two.
    [REPORTS_ITSELF]: true,
    run: async (input, context) => {
      const { signal, inspect, observers } = context.config;
      const options = {
        ...(signal && { signal }),
        ...(inspect && { inspect }),
        ...(observers && { observers }),
        [OBSERVED_AS]: { ...context.run, ...observedSession(context.config) },
        [RUN_OBSERVERS]: (context.config as InheritsObservers)[RUN_OBSERVERS],
      };
      if (!context.streaming) return loop.invoke(input, options);
      let result: ToolLoopResult | undefined;
      for await (const event of loop.stream(input, options)) {
        if (event.type === 'final') result = event.result;
        else emitLoopEvent(event, context);
      }
      if (!result) throw new Error(`${name}: the tool loop's stream ended without its result`);
      return result;
    },
  };
}

function commandId(roundIndex: number, index: number): string {
  return `round${roundIndex}_${index}`;
}

function emitLoopEvent(
  event: Exclude<ToolLoopStreamEvent, { type: 'final' }>,
  context: RunContext,
): void {
  switch (event.type) {
    case 'state':
      context.emit({ type: 'state', state: event.state });
      return;
    case 'text-delta':
      context.emit({ type: 'text-delta', delta: event.delta });
      return;
    case 'commands-planned':
      event.plan.executionCommands.forEach((command, index) => {
        const toolCall: ToolCall = {
          id: commandId(event.roundIndex, index),
          name: command.toolName,
          arguments: command.toolKwargs,
        };
        context.emit({ type: 'tool-call', toolCall });
      });
      return;
    case 'record': {
      const { record } = event;
      context.emit({
        type: 'tool-result',
        result: {
          toolCallId: commandId(event.roundIndex, event.index),
          name: record.toolName,
          output: record.result,
          success: record.success,
          ...(record.error !== null && { error: record.error }),
        },
      });
      return;
    }
    case 'round-started':
      return;
  }
}
