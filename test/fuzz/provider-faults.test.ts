import { type LanguageModel, ModelError } from 'statecraft';
import { collectStream, type ModelResponse } from 'statecraft/model';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type ReplayResponse,
  type ReplayServer,
  startReplayServer,
} from '../support/replay-server.js';
import { ask, PROVIDERS } from './provider-adapters.js';

// Provider faults, through each adapter's real SDK against a local server (SPEC Q2, Q3): a
// stalled body or stream, an answer missing what its format requires, a proxy's HTML page,
// a body cut short, garbage events. Each settles within a bound, as a typed ModelError whose
// `retryable` says whether another try can help, or, for a missing usage, as a success that
// counts zero tokens. The connection is closed by then: nothing is left open.

const IDLE_MS = 200;
/** Far above IDLE_MS, far below a hang: a fault that settles later than this is a hang. */
const SETTLE_BOUND_MS = 5_000;

const HTML_PAGE =
  '<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>';

type Call = 'generate' | 'stream';
type Outcome =
  | { readonly error: { readonly retryable: boolean; readonly message: RegExp } }
  | { readonly zeroUsage: true };

interface Fault {
  readonly name: string;
  readonly call: Call;
  readonly answer: (provider: (typeof PROVIDERS)[number]) => ReplayResponse;
  readonly outcome: (provider: (typeof PROVIDERS)[number]) => Outcome;
}

const idle: Outcome = { error: { retryable: true, message: new RegExp(`idle for ${IDLE_MS} ms`) } };
/** A non-streamed answer that stalls: idle, or the adapter's own bound on a whole answer. */
const stalled = (p: (typeof PROVIDERS)[number]): Outcome =>
  p.stalledAnswer ? { error: { retryable: true, message: p.stalledAnswer(IDLE_MS) } } : idle;
const notJson: Outcome = { error: { retryable: true, message: /not JSON/ } };

const FAULTS: readonly Fault[] = [
  {
    name: 'stall after headers',
    call: 'generate',
    answer: () => ({ body: '', stallAfter: 0 }),
    outcome: stalled,
  },
  {
    name: 'stall after headers',
    call: 'stream',
    answer: () => ({ sse: [], hang: true }),
    outcome: () => idle,
  },
  {
    name: 'stall mid-body',
    call: 'generate',
    answer: (p) => ({ body: JSON.stringify(p.answerWithoutUsage), stallAfter: 12 }),
    outcome: stalled,
  },
  {
    name: 'stall mid-stream',
    call: 'stream',
    answer: (p) => ({ sse: [p.streamHead], hang: true }),
    outcome: () => idle,
  },
  {
    name: '200 without its content list',
    call: 'generate',
    answer: (p) => ({ json: p.answerWithoutContent }),
    outcome: (p) => ({ error: { retryable: false, message: p.missing } }),
  },
  {
    name: 'HTML page with 200',
    call: 'generate',
    answer: () => ({ body: HTML_PAGE, headers: { 'content-type': 'text/html' } }),
    outcome: () => notJson,
  },
  {
    name: 'HTML page with 200',
    call: 'stream',
    answer: () => ({ body: HTML_PAGE, headers: { 'content-type': 'text/html' } }),
    outcome: () => ({ error: { retryable: true, message: /./ } }),
  },
  {
    name: 'missing usage',
    call: 'generate',
    answer: (p) => ({ json: p.answerWithoutUsage }),
    outcome: () => ({ zeroUsage: true }),
  },
  {
    name: 'missing usage',
    call: 'stream',
    answer: (p) => ({ sse: [p.streamWithoutUsage] }),
    outcome: () => ({ zeroUsage: true }),
  },
  {
    name: 'truncated JSON',
    call: 'generate',
    answer: (p) => ({ body: JSON.stringify(p.answerWithoutUsage).slice(0, 30) }),
    outcome: () => notJson,
  },
  {
    name: 'garbage SSE',
    call: 'stream',
    // Named for the SDKs that read only named events (Anthropic), unnamed for those that
    // read only unnamed ones (Gemini): each meets one it must parse.
    answer: () => ({
      sse: [
        'event: message_start\ndata: {"type": [ not json\n\n',
        'data: {"candidates": [ not json\n\n',
      ],
    }),
    outcome: () => ({ error: { retryable: true, message: /not JSON/ } }),
  },
  {
    name: 'stream ending with nothing',
    call: 'stream',
    answer: () => ({ sse: [] }),
    outcome: () => ({ error: { retryable: true, message: /./ } }),
  },
];

let server: ReplayServer | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await server?.close();
  server = undefined;
});

describe.each(PROVIDERS)('$name under provider faults', (provider) => {
  it.each(FAULTS.map((fault) => [`${fault.name} (${fault.call})`, fault] as const))(
    '%s',
    async (_, fault) => {
      // The OpenAI SDK logs an event it cannot parse before throwing it.
      vi.spyOn(console, 'error').mockImplementation(() => {});
      server = await startReplayServer([fault.answer(provider)]);
      const model = provider.make(server.url, IDLE_MS);
      const settled = await settleWithin(call(model, fault.call), SETTLE_BOUND_MS);
      const expected = fault.outcome(provider);
      if ('zeroUsage' in expected) {
        expect(settled).toMatchObject({
          value: { usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 } },
        });
      } else {
        expect('error' in settled, 'the call must fail').toBe(true);
        const error = (settled as { error: unknown }).error as ModelError;
        expect(ModelError.isInstance(error), String(error)).toBe(true);
        expect(error.message).toMatch(expected.error.message);
        expect(error.retryable).toBe(expected.error.retryable);
      }
      // The call let go of its connection: nothing is left open behind a settled call.
      await until(() => server?.openRequests() === 0, SETTLE_BOUND_MS);
    },
  );
});

function call(model: LanguageModel, kind: Call): Promise<ModelResponse> {
  return kind === 'generate' ? model.generate(ask) : collectStream(model.stream(ask));
}

type Settled = { value: ModelResponse } | { error: unknown } | { hung: true };

/** How `work` settled, or `hung` when it did not within `ms`; the timer is always cleared. */
async function settleWithin(work: Promise<ModelResponse>, ms: number): Promise<Settled> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<Settled>((resolve) => {
    timer = setTimeout(() => resolve({ hung: true }), ms);
  });
  try {
    return await Promise.race([
      work.then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      ),
      hung,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function until(condition: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
