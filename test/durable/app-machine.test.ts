// Issue 15: an app's machine whose chain or tool loop is mid-run, saved with
// getPersistedSnapshot() and restored, never hangs: `chain.machine` fails at once saying how to
// make the run durable, and `chain.durable(store)` resumes the run from its journal.
import {
  type ChainOutput,
  createChain,
  createToolLoop,
  type JournalStore,
  type LanguageModel,
} from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { describe, expect, it } from 'vitest';
import { type AnyActorRef, assign, createActor, setup, toPromise } from 'xstate';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import { type Execution, loggingTool, type Turn, turnModel } from './helpers.js';

/** A model that never answers until aborted: the chain rests in `thinking`. */
const silentModel: LanguageModel = {
  specificationVersion: 'v1',
  provider: 'test',
  modelId: 'silent',
  generate: (_request, options) =>
    new Promise((_, reject) =>
      options?.signal?.addEventListener('abort', () => reject(options.signal?.reason), {
        once: true,
      }),
    ),
  // biome-ignore lint/correctness/useYield: never answers.
  async *stream() {
    throw new Error('not streamed');
  },
};

/** Waits (bounded) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** An app that invokes `src` and keeps its output. */
function appOf(src: unknown, input: unknown) {
  return setup({
    types: { context: {} as { output: unknown } },
    // biome-ignore lint/suspicious/noExplicitAny: any actor logic.
    actors: { agent: src as any },
  }).createMachine({
    id: 'app',
    context: { output: undefined },
    initial: 'working',
    states: {
      working: {
        invoke: {
          id: 'agent',
          src: 'agent',
          input,
          onDone: { target: 'done', actions: assign({ output: ({ event }) => event.output }) },
          onError: { target: 'done', actions: assign({ output: ({ event }) => event.error }) },
        },
      },
      done: { type: 'final' },
    },
  });
}

describe('restoring an app machine mid-run', () => {
  it('a chain invoked as its machine fails at once, saying how to make it durable', async () => {
    const chain = createChain({ model: silentModel });
    const app = appOf(chain.machine, chain.input('hello'));
    const first = createActor(app).start();
    const agent = first.getSnapshot().children.agent as AnyActorRef;
    expect(agent.getSnapshot().value).toBe('thinking');
    const saved = first.getPersistedSnapshot();
    first.stop();

    const restored = createActor(app, { snapshot: saved }).start();
    const snapshot = await toPromise(restored).then(() => restored.getSnapshot());
    const output = snapshot.context.output as {
      status: string;
      failure: { code: string; message: string };
    };
    expect(output.status).toBe('failed');
    expect(output.failure.code).toBe('ABORTED');
    expect(output.failure.message).toMatch(
      /restored from a snapshot in the middle of a run \(state 'thinking'\)/,
    );
    expect(output.failure.message).toMatch(/chain\.durable\(store\)/);
  });

  it('a tool loop invoked as its machine too', async () => {
    const loop = createToolLoop({
      planner: (_context, { signal }) =>
        new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      tools: [loggingTool('charge', [])],
      respond: false,
    });
    const app = appOf(loop.machine, loop.input('pay'));
    const first = createActor(app).start();
    const saved = first.getPersistedSnapshot();
    first.stop();
    const restored = createActor(app, { snapshot: saved }).start();
    await toPromise(restored);
    const output = restored.getSnapshot().context.output as { failure: { message: string } };
    expect(output.failure.message).toMatch(/state 'running\.planning'/);
    expect(output.failure.message).toMatch(/loop\.durable\(store\)/);
  });

  it('chain.durable(store) resumes from its journal: no finished call runs again', async () => {
    const turns: Turn[] = [
      { calls: [{ id: 'c1', name: 'charge', arguments: { value: 'a' } }] },
      { calls: [{ id: 'c2', name: 'charge', arguments: { value: 'b' } }] },
      { text: 'paid twice' },
    ];
    const store = memoryStore();
    // The first process dies right after the first charge's result is on disk.
    const dying = crashableStore(store, (e) => e.type === 'result' && e.callId === 'c1');
    const log: Execution[] = [];
    // The first process: its journal stops at the crash; it is never heard from again.
    const chain = createChain({ model: turnModel(turns), tools: [loggingTool('charge', log)] });
    const app = appOf(chain.durable(dying.store), { runId: 'order-1', input: 'pay' });
    const first = createActor(app).start();
    await until(
      async () =>
        ((await store.read('order-1')) ?? []).some((e) => e.type === 'result' && e.callId === 'c1'),
      'the first charge',
    );
    const saved = first.getPersistedSnapshot();
    expect(log.map((e) => e.callId)).toEqual(['c1']);

    // The second process: a new chain, the same store; restoring re-invokes the durable actor.
    const resumedLog: Execution[] = [];
    const again = createChain({
      model: turnModel(turns),
      tools: [loggingTool('charge', resumedLog)],
    });
    const restored = createActor(appOf(again.durable(store), { runId: 'order-1', input: 'pay' }), {
      snapshot: saved,
    }).start();
    await toPromise(restored);
    // durable() ends as chain.machine does: with the machine's output.
    const result = restored.getSnapshot().context.output as ChainOutput<string>;
    expect(result.status).toBe('succeeded');
    expect(result.status === 'succeeded' && result.text).toBe('paid twice');
    expect(resumedLog.map((e) => [e.callId, e.key])).toEqual([['c2', 'order-1:c2']]);
    expect(((await store.read('order-1')) ?? []).at(-1)).toEqual({
      type: 'end',
      status: 'succeeded',
    });
    first.stop();
  });
});

/**
 * A store whose process "dies" once it has written an entry `last` accepts: later appends never
 * complete and write nothing, so the old run stops at its next intent, as if killed.
 */
function crashableStore(
  inner: JournalStore,
  last: (entry: JournalEntry) => boolean,
): { store: JournalStore; readonly dead: boolean } {
  let dead = false;
  return {
    get dead() {
      return dead;
    },
    store: {
      append: async (runId: string, entry: JournalEntry) => {
        if (dead) return new Promise<void>(() => {});
        if (last(entry)) dead = true;
        return inner.append(runId, entry);
      },
      read: (runId) => inner.read(runId),
      list: () => inner.list(),
      delete: (runId) => inner.delete(runId),
    },
  };
}
