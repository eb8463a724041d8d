import type { ToolLoopApprovals } from '../../machines/tool-loop.js';
import type { EventQueue } from '../host/event-queue.js';
import { approvalStreamEvents } from '../tool-calls/approval-stream-events.js';
import type { DeltaListener, ToolLoopSnapshot } from './run-resources.js';
import type { ToolLoopStreamEvent } from './run-types.js';

/**
 * What a loop's stream() yields as the run goes, derived from the difference between one
 * snapshot and the last (plans, records, approvals, rounds, states), and from the final
 * response's text deltas.
 */
export function toolLoopStreamEvents(queue: EventQueue<ToolLoopStreamEvent>): {
  readonly onSnapshot: (snapshot: ToolLoopSnapshot) => void;
  readonly listener: DeltaListener;
} {
  let last:
    | {
        state: string;
        plans: number;
        records: number;
        round: number;
        approvals: ToolLoopApprovals;
      }
    | undefined;
  const onSnapshot = (snapshot: ToolLoopSnapshot) => {
    const { context } = snapshot;
    const state = stateName(snapshot.value);
    for (const planned of context.plans.slice(last?.plans ?? 0)) {
      queue.push({ type: 'commands-planned', ...planned });
    }
    // A round's records reset when it ends; its finished records were streamed as they came.
    const seen = last && last.round === context.roundIndex ? last.records : 0;
    for (const { index, record } of context.roundRecords.slice(seen)) {
      queue.push({ type: 'record', roundIndex: context.roundIndex, index, record });
    }
    const { approvals } = context;
    for (const event of approvalStreamEvents(last?.approvals, approvals)) queue.push(event);
    if (state !== last?.state) {
      if (state === 'running.planning' && context.planAttempts === 0) {
        queue.push({ type: 'round-started', roundIndex: context.roundIndex });
      }
      queue.push({ type: 'state', state });
    }
    last = {
      state,
      plans: context.plans.length,
      records: context.roundRecords.length,
      round: context.roundIndex,
      approvals,
    };
  };
  const listener = (delta: string) => queue.push({ type: 'text-delta', delta });
  return { onSnapshot, listener };
}

function stateName(value: unknown): string {
  if (typeof value === 'string') return value;
  const [parent, child] = Object.entries(value as Record<string, unknown>)[0] ?? [];
  return child === undefined ? String(parent) : `${parent}.${stateName(child)}`;
}
