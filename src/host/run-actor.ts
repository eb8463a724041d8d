import { type AnyActorRef, type OutputFrom, type SnapshotFrom, toPromise } from 'xstate';
import { reasonText } from './run-errors.js';

export interface RunActorOptions<A extends AnyActorRef> {
  /** Aborting sends the machine `ABORT` (with the reason's words): the machine decides what follows. */
  readonly signal?: AbortSignal | undefined;
  readonly onSnapshot?: ((snapshot: SnapshotFrom<A>) => void) | undefined;
  /** Told of the ABORT just before the machine gets it (a durable run journals it). */
  readonly beforeAbort?: ((reason: string | undefined) => void) | undefined;
}

/**
 * Starts `actor` and resolves with its output once it reaches a final state. The caller's
 * signal is forwarded as an `ABORT` event, and every listener is removed however it ends, so
 * a long-lived signal shared by many runs collects nothing.
 */
export async function runActor<A extends AnyActorRef>(
  actor: A,
  options: RunActorOptions<A>,
): Promise<OutputFrom<A>> {
  const { signal, onSnapshot, beforeAbort } = options;
  const onAbort = () => {
    // A run that already ended has nothing to abort (and a durable one nothing to journal).
    if ((actor.getSnapshot() as { status?: string }).status !== 'active') return;
    const reason = reasonText(signal?.reason);
    beforeAbort?.(reason);
    actor.send({ type: 'ABORT', reason });
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  const subscription = onSnapshot
    ? actor.subscribe({ next: onSnapshot, error: () => {} })
    : undefined;
  try {
    const done = toPromise(actor);
    actor.start();
    if (signal?.aborted) onAbort();
    return (await done) as OutputFrom<A>;
  } finally {
    signal?.removeEventListener('abort', onAbort);
    subscription?.unsubscribe();
  }
}
