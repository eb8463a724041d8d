// Attachments under fuzz (seeded, FUZZ_SEED): random sources through attachment() (bytes,
// base64, data: URLs, other URLs, junk) make a valid frozen attachment or an InputError; random
// malformed attachments in a run's input are an InputError, never a crash; and a durable run
// whose input and tool results carry random attachments, crashed at any point of its journal
// and resumed, ends as its uncrashed run did with each payload journaled once.
import fc from 'fast-check';
import {
  type Attachment,
  attachment,
  createChain,
  defineTool,
  InputError,
  memoryStore,
  StatecraftError,
  toolOutput,
} from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { bytesOfBase64 } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { attachmentProblem } from '../../src/attachments.js';
import { decode, encode } from '../../src/durable/codec.js';
import { settingsFromEnv } from './properties.js';

const { seed } = settingsFromEnv();
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

async function check<T>(
  arb: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void> | void,
  runs = RUNS,
) {
  const details = await fc.check(
    fc.asyncProperty(arb, async (value) => {
      await predicate(value);
    }),
    { seed, numRuns: runs },
  );
  if (details.failed) throw new Error(fc.defaultReportMessage(details));
}

const mediaTypes = fc.constantFrom(
  'image/png',
  'image/jpeg',
  'application/pdf',
  'text/csv',
  'audio/wav',
  'bogus',
  '',
  'IMAGE/PNG',
);
const bytes = fc.oneof(
  fc.uint8Array({ maxLength: 64 }),
  fc.uint8Array({ maxLength: 32 }).map((tail) => new Uint8Array([0x89, 0x50, 0x4e, 0x47, ...tail])),
  fc.uint8Array({ maxLength: 32 }).map((tail) => new Uint8Array([0x25, 0x50, 0x44, 0x46, ...tail])),
);
const base64 = bytes.map((b) => Buffer.from(b).toString('base64'));
const sources: fc.Arbitrary<unknown> = fc.oneof(
  fc.record({
    data: bytes,
    mediaType: fc.option(mediaTypes, { nil: undefined }),
    name: fc.option(fc.string(), { nil: undefined }),
  }),
  fc.record({
    data: bytes.map((b) => b.buffer as ArrayBuffer),
    mediaType: fc.option(mediaTypes, { nil: undefined }),
  }),
  fc.record({
    data: fc.oneof(base64, fc.string()),
    mediaType: fc.option(mediaTypes, { nil: undefined }),
  }),
  fc.record({
    url: fc.oneof(
      fc.tuple(mediaTypes, base64).map(([type, data]) => `data:${type};base64,${data}`),
      fc.tuple(fc.string(), fc.string()).map(([type, data]) => `data:${type},${data}`),
      fc.webUrl({ withQueryParameters: true, withFragments: true }),
      fc.constantFrom(
        'https://example.com/a.png',
        'http://example.com/x.PDF',
        'ftp://example.com/a.png',
        'file:///etc/passwd',
        'javascript:alert(1)',
      ),
      fc.string(),
    ),
    mediaType: fc.option(mediaTypes, { nil: undefined }),
  }),
  fc.anything(),
);

describe('fuzz: attachment() with random sources', () => {
  it('makes a valid, frozen attachment or throws an InputError', async () => {
    await check(
      sources,
      (source) => {
        let made: Attachment;
        try {
          made = attachment(source as never);
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(InputError);
          return;
        }
        expect(attachmentProblem(made)).toBeUndefined();
        expect(Object.isFrozen(made)).toBe(true);
        const data = (source as { data?: unknown }).data;
        if (data instanceof Uint8Array) expect(bytesOfBase64(made.data as string)).toEqual(data);
      },
      RUNS * 4,
    );
  });
});

/** A value that may or may not be an attachment: what a run's JSON input can hold. */
const maybeAttachment: fc.Arbitrary<unknown> = fc.oneof(
  base64.map((data) => ({ mediaType: 'image/png', data })),
  fc.record(
    {
      mediaType: fc.oneof(mediaTypes, fc.anything()),
      data: fc.oneof(base64, fc.anything()),
      url: fc.option(fc.oneof(fc.webUrl(), fc.anything()), { nil: undefined }),
      name: fc.option(fc.anything(), { nil: undefined }),
    },
    { requiredKeys: [] },
  ),
  fc.anything(),
);

describe('fuzz: attachments in a run input', () => {
  it('a malformed one is an InputError before any model call; good ones reach the model', async () => {
    await check(
      fc.record({
        attachments: fc.oneof(fc.array(maybeAttachment, { maxLength: 4 }), fc.anything()),
        role: fc.constantFrom('user' as const, 'tool' as const),
      }),
      async ({ attachments, role }) => {
        const model = new ScriptedModel(() => ({ text: 'ok' }));
        const message =
          role === 'user'
            ? { role, content: 'look', attachments }
            : { role, toolCallId: 'c0', name: 't', output: 1, success: true, attachments };
        const messages =
          role === 'tool'
            ? [
                {
                  role: 'assistant',
                  content: '',
                  toolCalls: [{ id: 'c0', name: 't', arguments: {} }],
                },
                message,
              ]
            : [message];
        const valid =
          Array.isArray(attachments) &&
          attachments.every((a) => attachmentProblem(a) === undefined);
        const outcome = await createChain({ model })
          .invoke({ messages } as never)
          .then(
            (result) => ({ result }),
            (error: unknown) => ({ error }),
          );
        if ('error' in outcome) {
          expect(outcome.error, String(outcome.error)).toBeInstanceOf(StatecraftError);
          if (!valid) {
            expect(outcome.error).toBeInstanceOf(InputError);
            expect(model.callCount).toBe(0);
          }
          return;
        }
        expect(attachments === undefined || valid, 'a malformed attachment was accepted').toBe(
          true,
        );
        expect(outcome.result.text).toBe('ok');
      },
    );
  });
});

/** The pool the durable property draws from: two images, a PDF (inline) and a URL. */
const POOL: readonly Attachment[] = [
  attachment({
    data: new Uint8Array([
      0x89,
      0x50,
      0x4e,
      0x47,
      ...Array.from({ length: 300 }, (_, i) => i % 251),
    ]),
    name: 'one.png',
  }),
  attachment({
    data: new Uint8Array([
      0xff,
      0xd8,
      0xff,
      ...Array.from({ length: 200 }, (_, i) => (i * 7) % 256),
    ]),
    name: 'two.jpg',
  }),
  attachment({ data: 'JVBERi0xLjQKJcfsj6IKMSAwIG9iago=', name: 'doc.pdf' }),
  attachment({ url: 'https://example.com/remote.png' }),
];
const INLINE = POOL.flatMap((a) => (a.data === undefined ? [] : [a.data]));
const pick = fc
  .array(fc.nat({ max: POOL.length - 1 }), { maxLength: 4 })
  .map((ids) => ids.map((i) => POOL[i] as Attachment));

interface DurableCase {
  readonly input: readonly Attachment[];
  /** Per model step: the attachments each tool call of that step returns. */
  readonly steps: readonly (readonly (readonly Attachment[])[])[];
  /** 0–1000: how far into the journal the crash falls. */
  readonly crash: number;
}

const durableCase: fc.Arbitrary<DurableCase> = fc.record({
  input: pick,
  steps: fc.array(fc.array(pick, { minLength: 1, maxLength: 3 }), { maxLength: 3 }),
  crash: fc.integer({ min: 0, max: 1000 }),
});

/** A chain whose model answers by the request alone, as a real one would on resume. */
function durableChain(c: DurableCase) {
  const returns = new Map<string, readonly Attachment[]>(
    c.steps.flatMap((calls, step) => calls.map((list, i) => [`s${step}c${i}`, list] as const)),
  );
  const model = new ScriptedModel((request) => {
    const messages = request.messages.toArray();
    const step = messages.filter((m) => m.role === 'assistant').length;
    const calls = c.steps[step];
    if (calls)
      return {
        toolCalls: calls.map((_, i) => ({ id: `s${step}c${i}`, name: 'shot', arguments: {} })),
      };
    const seen = messages.flatMap((m) =>
      m.role === 'user' || m.role === 'tool' ? (m.attachments ?? []) : [],
    );
    return { text: `saw ${seen.map((a) => a.name ?? a.url).join(',')}` };
  });
  const shot = defineTool({
    name: 'shot',
    description: 'Returns attachments',
    input: z.object({}),
    execute: async (_args, { toolCallId }) =>
      toolOutput({ id: toolCallId }, returns.get(toolCallId) ?? []),
  });
  return createChain({ model, tools: [shot] });
}

const timesIn = (entries: readonly JournalEntry[], payload: string) =>
  JSON.stringify(entries).split(payload).length - 1;

describe('fuzz, crash mode: durable runs with attachments', () => {
  it('crashed anywhere in the journal and resumed: the same answer and transcript, each payload journaled once', async () => {
    await check(
      durableCase,
      async (c) => {
        const runId = 'fuzz-attachments';
        const input = {
          messages: [{ role: 'user' as const, content: 'look', attachments: c.input }],
        };
        const store = memoryStore();
        const first = await durableChain(c).invoke(input, { runId, store });
        const entries = (await store.read(runId)) ?? [];
        for (const payload of INLINE) expect(timesIn(entries, payload)).toBeLessThanOrEqual(1);

        const keep = Math.min(entries.length, 1 + Math.floor((c.crash / 1000) * entries.length));
        const crashed = memoryStore();
        for (const entry of entries.slice(0, keep)) await crashed.append(runId, entry);
        const resumed = await durableChain(c).resume(runId, { store: crashed });
        expect(resumed.text).toBe(first.text);
        expect(JSON.parse(JSON.stringify(resumed.transcript))).toEqual(
          JSON.parse(JSON.stringify(first.transcript)),
        );
        const after = (await crashed.read(runId)) ?? [];
        for (const payload of INLINE) expect(timesIn(after, payload)).toBeLessThanOrEqual(1);
      },
      Math.max(20, Math.floor(RUNS / 3)),
    );
  }, 120_000);

  it('the codec round-trips random values holding attachments through references', async () => {
    const holder = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.jsonValue({ maxDepth: 1 }),
        fc.constantFrom(...POOL),
        fc.array(tie('value'), { maxLength: 3 }),
        fc.dictionary(fc.string(), tie('value'), { maxKeys: 3 }),
      ),
    })).value;
    await check(
      holder,
      (value) => {
        const kept = new Map<string, string>();
        const json = encode(value, {
          attachmentRef: (data) => {
            const ref = `r${[...kept.values()].indexOf(data) >= 0 ? [...kept.values()].indexOf(data) : kept.size}`;
            kept.set(ref, data);
            return ref;
          },
        });
        const text = JSON.stringify(json);
        for (const payload of INLINE) expect(text.includes(payload)).toBe(false);
        expect(decode(JSON.parse(text), { attachmentData: (ref) => kept.get(ref) })).toEqual(value);
      },
      RUNS * 2,
    );
  });
});
