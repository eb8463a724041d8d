// A durable run whose tool returns an attachment, when the store refuses or fails the write
// that carries the attachment's bytes: the run stops with that store's error, and nothing on
// disk refers to bytes the journal lacks, so the run resumes (the tool runs again).
import {
  attachment,
  createChain,
  defineTool,
  JournalError,
  type LanguageModel,
  type Message,
  memoryStore,
  toolOutput,
} from 'statecraft';
import type { JournalEntry, JournalStore } from 'statecraft/durable';
import { attachmentSize } from 'statecraft/model';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { turnModel } from './helpers.js';

/** A PNG of `size` bytes: the signature, then zeros. */
function png(size: number): Uint8Array {
  const bytes = new Uint8Array(size);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

/** A tool that returns a screenshot of `sizes[n]` bytes the n-th time it runs. */
function screenshotTool(sizes: readonly number[]) {
  let runs = 0;
  const tool = defineTool({
    name: 'screenshot',
    description: 'Takes a screenshot',
    input: z.object({}),
    execute: () => {
      const size = sizes[Math.min(runs, sizes.length - 1)] as number;
      runs++;
      return toolOutput('taken', [attachment({ data: png(size) })]);
    },
  });
  return { tool, runs: () => runs };
}

const model = (): LanguageModel =>
  turnModel([{ calls: [{ id: 's1', name: 'screenshot', arguments: {} }] }, { text: 'seen' }]);

const INPUT = { messages: [{ role: 'user' as const, content: 'take a screenshot' }] };

describe('a store fault on the write that carries an attachment', () => {
  it('an oversize attachment is refused and the run resumes once it fits (the tool runs again)', async () => {
    const store = memoryStore({ maxEntryBytes: 200_000 });
    const first = screenshotTool([300_000]);
    const failed = await createChain({ model: model(), tools: [first.tool] })
      .invoke(INPUT, { runId: 'oversize', store })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failed).toBeInstanceOf(JournalError);
    expect(failed).toMatchObject({ reason: 'too-large' });
    expect(resultsIn((await store.read('oversize')) ?? [])).toEqual([]);

    const second = screenshotTool([1000]);
    const resumed = await createChain({ model: model(), tools: [second.tool] }).resume('oversize', {
      store,
    });
    expect(resumed.status).toBe('succeeded');
    expect(resumed.text).toBe('seen');
    expect(second.runs()).toBe(1);
    expect(toolAttachments(resumed.transcript)).toEqual([{ mediaType: 'image/png', bytes: 1000 }]);
  });

  it('a store that fails the payload write once: the run stops with that error, then resumes', async () => {
    const inner = memoryStore();
    let failures = 0;
    const store: JournalStore = {
      ...inner,
      read: (runId) => inner.read(runId),
      list: () => inner.list(),
      append(runId, entry) {
        if (failures === 0 && JSON.stringify(entry).length > 100_000) {
          failures++;
          return Promise.reject(new Error('ENOSPC: no space left on device'));
        }
        return inner.append(runId, entry);
      },
    };
    const first = screenshotTool([150_000]);
    const failed = await createChain({ model: model(), tools: [first.tool] })
      .invoke(INPUT, { runId: 'faulty', store })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(failures).toBe(1);
    expect(String(failed)).toContain('ENOSPC');
    expect(resultsIn((await inner.read('faulty')) ?? [])).toEqual([]);

    const second = screenshotTool([150_000]);
    const resumed = await createChain({ model: model(), tools: [second.tool] }).resume('faulty', {
      store,
    });
    expect(resumed.status).toBe('succeeded');
    expect(second.runs()).toBe(1);
    expect(toolAttachments(resumed.transcript)).toEqual([
      { mediaType: 'image/png', bytes: 150_000 },
    ]);
  });
});

/** The attachments of the transcript's tool results, by media type and size. */
const toolAttachments = (transcript: readonly Message[]) =>
  transcript.flatMap((message) =>
    message.role === 'tool'
      ? (message.attachments ?? []).map((a) => ({
          mediaType: a.mediaType,
          bytes: attachmentSize(a),
        }))
      : [],
  );

const resultsIn = (entries: readonly JournalEntry[]) =>
  entries.filter((entry) => entry.type === 'result');

describe('how the journal issues appends', () => {
  /** A memoryStore whose appends take a moment, counting how many are under way at once. */
  function countingStore(orderedAppends: boolean) {
    const inner = memoryStore();
    let inFlight = 0;
    let most = 0;
    const store: JournalStore = {
      ...inner,
      read: (runId) => inner.read(runId),
      list: () => inner.list(),
      delete: (runId) => inner.delete(runId),
      ...(orderedAppends && { orderedAppends: true }),
      async append(runId, entry) {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 5));
        try {
          await inner.append(runId, entry);
        } finally {
          inFlight--;
        }
      },
    };
    return { store, most: () => most };
  }

  it('one at a time for a store that runs appends after a failed one, at once for one that does not', async () => {
    for (const ordered of [false, true]) {
      const { store, most } = countingStore(ordered);
      const { tool } = screenshotTool([1000]);
      const result = await createChain({ model: model(), tools: [tool] }).invoke(INPUT, {
        runId: `issued-${ordered}`,
        store,
      });
      expect(result.status).toBe('succeeded');
      // The attachment's bytes and the result that refers to them are appended together.
      if (ordered) expect(most()).toBeGreaterThan(1);
      else expect(most()).toBe(1);
    }
  });
});
