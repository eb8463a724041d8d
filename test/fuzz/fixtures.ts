import {
  type AnyTool,
  type Attachment,
  attachment,
  defineTool,
  type LanguageModel,
  ModelError,
  toolOutput,
} from 'statecraft';
import {
  LANGUAGE_MODEL_VERSION,
  type ModelRequest,
  type StreamPart,
  toolResultText,
} from 'statecraft/model';
import type { ScriptedModel, ScriptedTurn } from 'statecraft/testing';
import { z } from 'zod';
import type { CallData, ToolData, TurnData, UsageKind } from './scenario.js';

// Turns scenario data into the live things a run uses: tools that record what they leave
// open, and a model that records whether it misbehaved (so a ModelError is expected).

export const VALIDATE_BOOM = 'fuzz: validateResult threw';

export function sleep(ms: number): Promise<void> {
  return ms <= 0 ? Promise.resolve() : new Promise((resolve) => setTimeout(resolve, ms));
}

/** Settles only when `signal` aborts: a tool or planner that waits as long as it is let. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** Everything a run's tools opened: each must end, be closed, or see its signal aborted. */
export class OpenThings {
  readonly #open = new Map<number, { what: string; signal: AbortSignal }>();
  #next = 0;

  opened(what: string, signal: AbortSignal): () => void {
    const id = this.#next++;
    this.#open.set(id, { what, signal });
    return () => {
      this.#open.delete(id);
    };
  }

  /** What is still open with its signal not aborted. */
  leaks(): string[] {
    return [...this.#open.values()].filter((t) => !t.signal.aborted).map((t) => t.what);
  }
}

/** Whether the model (or planner, or responder) itself failed during the run. */
export interface ModelState {
  failed: boolean;
  /** Calls of the model, the planner and the responder this process made. */
  calls: number;
}

const FUZZ_PNG = attachment({
  data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4, 5, 6, 7, 8]),
  name: 'fuzz.png',
});
const FUZZ_PDF = attachment({ data: 'JVBERi0xLjQKJcfsj6IK', name: 'fuzz.pdf' });
const FUZZ_URL = attachment({ url: 'https://example.com/fuzz.jpg' });

/**
 * What an `attachments` tool returns with its value, by `items` modulo their count: one image,
 * the same image twice (one payload in a journal), an image, a PDF and a URL.
 */
export const ATTACHMENT_SETS: readonly (readonly Attachment[])[] = [
  [FUZZ_PNG],
  [FUZZ_PNG, FUZZ_PNG],
  [FUZZ_PNG, FUZZ_PDF, FUZZ_URL],
];

function returnedValue(data: ToolData): unknown {
  switch (data.behaviour) {
    case 'attachments':
      return toolOutput(data.value, ATTACHMENT_SETS[data.items % ATTACHMENT_SETS.length] ?? []);
    case 'bigint':
      return 10n;
    case 'nestedBigint':
      return { total: 10n, list: [1n, { deep: 2n }] };
    case 'circular': {
      const node: Record<string, unknown> = { name: 'node' };
      node.self = node;
      return { list: [node] };
    }
    case 'undefined':
      return undefined;
    case 'function':
      return () => 1;
    case 'symbol':
      return Symbol('fuzz');
    case 'nan':
      return { n: Number.NaN, inf: Number.POSITIVE_INFINITY };
    case 'date':
      return new Date(0);
    case 'map':
      return new Map([['a', 1]]);
    case 'error':
      return new Error('returned, not thrown');
    default:
      return data.value;
  }
}

/** Wraps an async iterator so closing it (end, error or return()) is recorded. */
function tracked(source: AsyncIterable<unknown>, close: () => void): AsyncIterable<unknown> {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      return {
        async next() {
          try {
            const r = await it.next();
            if (r.done) close();
            return r;
          } catch (error) {
            close();
            throw error;
          }
        },
        async return(value?: unknown) {
          close();
          return it.return ? it.return(value) : { done: true as const, value };
        },
      };
    },
  };
}

/** A hand-written iterator whose return() is synchronous (returns a plain object, or throws). */
function syncReturnIterator(data: ToolData, close: () => void, throws: boolean) {
  let i = 0;
  return {
    [Symbol.asyncIterator]() {
      return {
        next: async () => {
          await sleep(data.delayMs);
          if (i >= data.items) {
            close();
            return { done: true as const, value: undefined };
          }
          return { done: false as const, value: { item: i++ } };
        },
        return: (() => {
          close();
          if (throws) throw new Error('fuzz: return() threw synchronously');
          return { done: true as const, value: undefined };
        }) as unknown as () => Promise<IteratorResult<unknown>>,
      };
    },
  };
}

async function* items(data: ToolData, signal: AbortSignal): AsyncGenerator<unknown> {
  const b = data.behaviour;
  const count = b === 'genThrows' || b === 'genHang' ? 1 : Math.max(data.items, 1);
  try {
    for (let i = 0; i < count; i++) {
      await sleep(data.delayMs);
      yield b === 'genBigint' ? { i, big: BigInt(i) } : { i, value: data.value };
    }
    if (b === 'genThrows') throw new Error('fuzz: the stream broke');
    if (b === 'genHang') await untilAborted(signal);
  } finally {
    // biome-ignore lint/correctness/noUnsafeFinally: the point: a generator whose finally throws.
    if (b === 'genFinallyThrows') throw new Error('fuzz: finally threw');
  }
}

async function execute(data: ToolData, name: string, signal: AbortSignal, open: OpenThings) {
  const b = data.behaviour;
  if (b === 'syncReturnIter' || b === 'syncReturnThrows') {
    return syncReturnIterator(
      data,
      open.opened(`${name} iterator (${b})`, signal),
      b === 'syncReturnThrows',
    );
  }
  if (b.startsWith('gen')) {
    return tracked(items(data, signal), open.opened(`${name} generator (${b})`, signal));
  }
  const close = open.opened(`${name} call (${b})`, signal);
  try {
    if (b === 'hang') return await untilAborted(signal);
    await sleep(data.delayMs);
    if (b === 'throw') throw new Error('fuzz: the tool failed');
    if (b === 'throwNonError') throw { weird: true };
    return returnedValue(data);
  } finally {
    close();
  }
}

export function toolName(target: number, count: number): string {
  return count === 0 ? 'no_tools_defined' : `t${target % count}`;
}

/** One execution of a fuzz tool, as a side-effect log sees it (crash mode checks these). */
export interface Execution {
  readonly tool: string;
  readonly callId: string;
  readonly key: string | undefined;
}

/** The scenario's tools; each execution is logged in `log` when one is given. */
export function buildTools(
  tools: readonly ToolData[],
  open: OpenThings,
  log?: Execution[],
): AnyTool[] {
  return tools.map((data, index) =>
    defineTool({
      name: `t${index}`,
      description: `Fuzz tool ${index}: ${data.behaviour}.`,
      input: z.object({ n: z.number().optional() }),
      duplicateCallWarn: data.duplicateCallWarn,
      returnDirect: data.returnDirect,
      execute: (_args, { signal, toolCallId, idempotencyKey }) => {
        log?.push({ tool: `t${index}`, callId: toolCallId, key: idempotencyKey });
        return execute(data, `t${index}`, signal, open);
      },
    }),
  );
}

const USAGE: Record<UsageKind, ScriptedTurn['usage']> = {
  default: undefined,
  none: undefined,
  zero: { inputTokens: 0, outputTokens: 0 },
  big: { inputTokens: 100_000, outputTokens: 50_000 },
  inconsistent: { inputTokens: 3, outputTokens: 4, totalTokens: 100 },
  outputOnly: { outputTokens: 7 },
  malformed: undefined,
};

/** The last stream id the model was told of, for a stop_stream call that closes it. */
function lastStreamId(request: ModelRequest): string | undefined {
  let id: string | undefined;
  for (const message of request.messages) {
    if (message.role !== 'tool') continue;
    for (const m of toolResultText(message).matchAll(/stream_[\w-]+/g)) id = m[0];
  }
  return id;
}

function callOf(call: CallData, i: number, callIndex: number, tools: number, req: ModelRequest) {
  const id = call.withId ? { id: `c${callIndex}_${i}` } : {};
  if (call.target === 'stop') {
    return {
      ...id,
      name: 'stop_stream',
      arguments: { streamId: lastStreamId(req) ?? 'stream_none' },
    };
  }
  const name = call.target === 'unknown' ? 'no_such_tool' : toolName(call.target, tools);
  switch (call.args) {
    case 'valid':
      return { ...id, name, arguments: { n: call.n } };
    case 'invalid':
      return { ...id, name, arguments: { n: 'not a number' } };
    case 'malformed':
      return { ...id, name, argumentsText: '{"n": ' };
    case 'none':
      return { ...id, name };
  }
}

export const VALID_JSON = '{"answer": 1}';

/** One scripted response from turn data. */
export function scriptedTurn(
  turn: TurnData,
  request: ModelRequest,
  callIndex: number,
  tools: number,
): ScriptedTurn {
  const base = {
    latencyMs: turn.latencyMs,
    chunkDelayMs: turn.chunkDelayMs,
    ...(USAGE[turn.usage] && { usage: USAGE[turn.usage] }),
  };
  const text = (t: string): ScriptedTurn =>
    t.length > 1 && t.length < 1000
      ? { ...base, text: t, chunks: [t.slice(0, t.length >> 1), t.slice(t.length >> 1)] }
      : { ...base, text: t };
  const a = turn.answer;
  switch (a.kind) {
    case 'text':
      return text(a.text);
    case 'json': {
      const json = a.valid ? VALID_JSON : '{"answer": "one"}';
      return text(a.prose ? `Here it is: ${json} Thanks.` : json);
    }
    case 'empty':
      return base;
    case 'calls':
      return { ...base, toolCalls: a.calls.map((c, i) => callOf(c, i, callIndex, tools, request)) };
    case 'fence':
      return text(
        a.lang ? `\`\`\`${'a'.repeat(a.size)}` : `\`\`\`json\n{"answer": ${'1'.repeat(a.size)}`,
      );
    case 'throw':
      return {
        ...base,
        error: a.typed
          ? new ModelError('fuzz: the provider is down', { retryable: true, status: 503 })
          : new Error('fuzz: socket hang up'),
      };
    case 'hang':
      return { ...base, latencyMs: 10_000 };
  }
}

/** Marks the model as failed when this turn makes it fail (throws, or answers malformed). */
export function noteTurn(turn: TurnData, state: ModelState): void {
  state.calls++;
  if (turn.answer.kind === 'throw' || isFaultyResponse(turn.usage)) state.failed = true;
}

/** Usage kinds fuzzModel turns into a faulty response: no usage, or a malformed one. */
export function isFaultyResponse(usage: UsageKind): boolean {
  return usage === 'none' || usage === 'malformed';
}

/**
 * A LanguageModel over a ScriptedModel that can also answer without usage or with a response
 * of the wrong shape (which the scripted model never does): `faultOf(callIndex)` says which.
 * Malformed: `content` is null when generated; a tool call without a name when streamed.
 */
export function fuzzModel(
  scripted: ScriptedModel,
  faultOf: (callIndex: number) => UsageKind,
): LanguageModel {
  return {
    specificationVersion: LANGUAGE_MODEL_VERSION,
    provider: 'fuzz',
    modelId: 'fuzz-model',
    async generate(request, options) {
      const response = await scripted.generate(request, options);
      const fault = faultOf(scripted.callCount - 1);
      if (fault === 'none') return { ...response, usage: undefined } as unknown as typeof response;
      if (fault === 'malformed')
        return { ...response, content: null } as unknown as typeof response;
      return response;
    },
    async *stream(request, options): AsyncGenerator<StreamPart> {
      for await (const part of scripted.stream(request, options)) {
        const fault = faultOf(scripted.callCount - 1);
        if (part.type === 'usage' && fault === 'none') continue;
        if (part.type === 'finish' && fault === 'malformed') {
          yield { type: 'tool-call', toolCall: { id: 'bad', name: '', arguments: {} } };
        }
        yield part;
      }
    },
  };
}
