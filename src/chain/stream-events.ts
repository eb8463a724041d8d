import type { ChainApprovals } from '../../machines/chain.js';
import type { EventQueue } from '../host/event-queue.js';
import type { StreamPart } from '../model/language-model.js';
import { approvalStreamEvents } from '../tool-calls/approval-stream-events.js';
import type { ChainSnapshot, PartListener } from './run-resources.js';
import type { ChainStreamEvent } from './run-types.js';

/**
 * What a chain's stream() yields as the run goes, derived from the difference between one
 * snapshot and the last (tool results, warnings, states, tool calls), and from the model's
 * streamed parts (text deltas).
 */
export function chainStreamEvents<T>(queue: EventQueue<ChainStreamEvent<T>>): {
  readonly onSnapshot: (snapshot: ChainSnapshot) => void;
  readonly listener: PartListener;
} {
  let last:
    | {
        value: string;
        steps: number;
        warned: { iterations: boolean; tokens: boolean };
        approvals: ChainApprovals;
      }
    | undefined;
  const onSnapshot = (snapshot: ChainSnapshot) => {
    const { context } = snapshot;
    const value = String(snapshot.value);
    // What happened in the step that just ended comes before the state it led to.
    for (const step of context.steps.slice(last?.steps ?? 0)) {
      for (const result of step.toolResults) queue.push({ type: 'tool-result', result });
    }
    for (const kind of ['iterations', 'tokens'] as const) {
      const warning = context.config.warnings[kind];
      if (warning && context.warned[kind] && !last?.warned[kind]) {
        queue.push({ type: 'warning', kind, text: warning.prompt });
      }
    }
    const { approvals } = context;
    for (const event of approvalStreamEvents(last?.approvals, approvals)) queue.push(event);
    if (value !== last?.value) {
      queue.push({ type: 'state', state: value });
      if (value === 'doing' && last?.value !== 'awaitingApproval')
        for (const toolCall of context.toolCalls) queue.push({ type: 'tool-call', toolCall });
    }
    last = { value, steps: context.steps.length, warned: context.warned, approvals };
  };
  const listener = (part: StreamPart, iteration: number) => {
    if (part.type === 'text-delta')
      queue.push({ type: 'text-delta', delta: part.delta, iteration });
  };
  return { onSnapshot, listener };
}
