// The rules every JournalStore follows (see src/durable/stores/journal-store.ts), as one suite
// that each store's test file runs against its own store.
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type EndEntry,
  JOURNAL_FORMAT_VERSION,
  type JournalEntry,
  type StartEntry,
} from '../../../src/durable/journal-entry.js';
import { JournalError, type JournalErrorReason } from '../../../src/durable/journal-error.js';
import type { JournalStore } from '../../../src/durable/stores/journal-store.js';

export function startEntry(runId: string, overrides: Partial<StartEntry> = {}): StartEntry {
  return {
    type: 'start',
    version: JOURNAL_FORMAT_VERSION,
    runId,
    kind: 'chain',
    startedAt: 1_000,
    input: { question: 'why?' },
    ...overrides,
  };
}

export function endEntry(status: EndEntry['status']): EndEntry {
  return { type: 'end', status };
}

/** Awaits `promise`, expecting a JournalError with `reason`; returns it for more checks. */
export async function journalErrorOf(
  promise: Promise<unknown>,
  reason: JournalErrorReason,
): Promise<JournalError> {
  const error = await promise.then(
    () => expect.fail(`expected a JournalError (${reason}), but it succeeded`),
    (caught: unknown) => caught,
  );
  expect(JournalError.isInstance(error), String(error)).toBe(true);
  const journalError = error as JournalError;
  expect(journalError.code).toBe('JOURNAL_ERROR');
  expect(journalError.reason, journalError.message).toBe(reason);
  return journalError;
}

const BAD_RUN_IDS = [
  '',
  '.',
  '..',
  '../escape',
  'a/b',
  'a\\b',
  'a:b',
  ' a',
  '-a',
  'é',
  'x'.repeat(129),
];

export function describeJournalStoreContract(
  name: string,
  createStore: () => JournalStore | Promise<JournalStore>,
): void {
  describe(`${name} (JournalStore contract)`, () => {
    let store: JournalStore;
    beforeEach(async () => {
      store = await createStore();
    });

    it('reads back appended entries in order', async () => {
      const entries: JournalEntry[] = [
        startEntry('run-1'),
        { type: 'intent', call: 'model', n: 1 },
        { type: 'answer', text: 'hello' },
        endEntry('succeeded'),
      ];
      for (const entry of entries) await store.append('run-1', entry);
      expect(await store.read('run-1')).toEqual(entries);
    });

    it('reads undefined for a run it does not have', async () => {
      expect(await store.read('never-started')).toBeUndefined();
    });

    it('keeps copies: changing an appended entry or a read result leaves the journal as it was', async () => {
      const input = { items: ['a'] };
      const start = startEntry('run-1', { input });
      await store.append('run-1', start);
      input.items.push('changed after append');
      const firstRead = await store.read('run-1');
      const readInput = firstRead?.[0]?.input as { items: string[] } | undefined;
      readInput?.items.push('changed after read');
      expect(readInput?.items).toEqual(['a', 'changed after read']);
      expect((await store.read('run-1'))?.[0]?.input).toEqual({ items: ['a'] });
    });

    it('keeps entries as JSON keeps them: undefined fields dropped, dates as strings', async () => {
      await store.append('run-1', startEntry('run-1'));
      await store.append('run-1', { type: 'note', gone: undefined, at: new Date(0) });
      expect((await store.read('run-1'))?.[1]).toEqual({
        type: 'note',
        at: '1970-01-01T00:00:00.000Z',
      });
    });

    it('keeps the order of appends that were not awaited', async () => {
      await store.append('run-1', startEntry('run-1'));
      const seqs = Array.from({ length: 50 }, (_, i) => i + 1);
      await Promise.all(seqs.map((seq) => store.append('run-1', { type: 'step', seq })));
      const read = await store.read('run-1');
      expect(read?.slice(1).map((entry) => entry.seq)).toEqual(seqs);
    });

    it('lists runs with kind, status and start time, oldest first', async () => {
      expect(await store.list()).toEqual([]);
      await store.append('b-failed', startEntry('b-failed', { kind: 'tool-loop', startedAt: 30 }));
      await store.append('b-failed', endEntry('failed'));
      await store.append('c-running', startEntry('c-running', { startedAt: 10 }));
      await store.append('c-running', { type: 'intent' });
      await store.append('a-done', startEntry('a-done', { startedAt: 30 }));
      await store.append('a-done', endEntry('succeeded'));
      expect(await store.list()).toEqual([
        { runId: 'c-running', kind: 'chain', status: 'running', startedAt: 10 },
        { runId: 'a-done', kind: 'chain', status: 'succeeded', startedAt: 30 },
        { runId: 'b-failed', kind: 'tool-loop', status: 'failed', startedAt: 30 },
      ]);
    });

    it('deletes a run, after which its id can start again; deleting an unknown run does nothing', async () => {
      await store.append('run-1', startEntry('run-1'));
      await store.append('run-2', startEntry('run-2'));
      await store.delete('run-1');
      await store.delete('never-started');
      expect(await store.read('run-1')).toBeUndefined();
      expect((await store.list()).map((run) => run.runId)).toEqual(['run-2']);
      await store.append('run-1', startEntry('run-1', { startedAt: 5 }));
      expect(await store.read('run-1')).toEqual([startEntry('run-1', { startedAt: 5 })]);
    });

    it.each(BAD_RUN_IDS)('refuses the run id %j in append, read and delete', async (runId) => {
      const error = await journalErrorOf(store.append(runId, startEntry(runId)), 'invalid-run-id');
      expect(error.message).toContain('a run id is 1 to 128 ASCII letters');
      await journalErrorOf(store.read(runId), 'invalid-run-id');
      await journalErrorOf(store.delete(runId), 'invalid-run-id');
    });

    it('accepts run ids of letters, digits, "-", "_" and "." up to 128 characters', async () => {
      for (const runId of ['Run_1-a.b', '0', 'x'.repeat(128)]) {
        await store.append(runId, startEntry(runId));
        expect(await store.read(runId)).toHaveLength(1);
      }
    });

    it('refuses a first entry other than "start" (unknown-run), and leaves no run behind', async () => {
      await journalErrorOf(store.append('run-1', { type: 'intent' }), 'unknown-run');
      expect(await store.read('run-1')).toBeUndefined();
      expect(await store.list()).toEqual([]);
    });

    it('refuses to start a run twice (run-exists)', async () => {
      await store.append('run-1', startEntry('run-1'));
      const error = await journalErrorOf(store.append('run-1', startEntry('run-1')), 'run-exists');
      expect(error.runId).toBe('run-1');
      expect(await store.read('run-1')).toHaveLength(1);
    });

    it('refuses a start entry for another run, of another version, or missing fields', async () => {
      const bad: JournalEntry[] = [
        startEntry('other-run'),
        startEntry('run-1', { version: JOURNAL_FORMAT_VERSION + 1 }),
        { ...startEntry('run-1'), kind: 'workflow' },
        { type: 'start', runId: 'run-1' },
      ];
      for (const entry of bad) await journalErrorOf(store.append('run-1', entry), 'invalid-entry');
      expect(await store.read('run-1')).toBeUndefined();
    });

    it('refuses entries that are not JSON objects with a string type', async () => {
      await store.append('run-1', startEntry('run-1'));
      const circular: Record<string, unknown> = { type: 'loop' };
      circular.self = circular;
      const bad = [{ type: 'big', n: 1n }, circular, { type: 7 }, ['start'], null];
      for (const entry of bad) {
        await journalErrorOf(
          store.append('run-1', entry as unknown as JournalEntry),
          'invalid-entry',
        );
      }
      expect(await store.read('run-1')).toHaveLength(1);
    });
  });
}
