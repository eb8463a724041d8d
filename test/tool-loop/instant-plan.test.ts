// SPEC T5: with a streaming planner, the first complete top-level `nextAction` equal to
// `response` closes the stream and returns at once, without waiting for the body.
// The streams here are hand-written so the test controls every chunk: after the chunk that
// decides, a stream marks itself resumed and then waits forever, so reading on would hang.
import { AbortError, createToolLoop, defineTool, type LanguageModel } from 'statecraft';
import {
  type CallOptions,
  type ModelRequest,
  type ModelResponse,
  type StreamPart,
  usage,
} from 'statecraft/model';
import { normalizePlan } from 'statecraft/tool-loop';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { readPlanStream } from '../../src/tool-loop/instant-plan.js';

const NEVER = new Promise<never>(() => {});

/** How far a scripted stream was read. */
interface StreamState {
  /** Chunks handed out. */
  pulled: number;
  /** Set when the stream is resumed after its deciding chunk: it must never be. */
  resumedAfterDecision: boolean;
  /** Every chunk was read. */
  finished: boolean;
  /** The generator ended, by being read to the end or closed by its reader. */
  closed: boolean;
}

interface Script {
  readonly chunks: readonly string[];
  /** 1-based: after handing out this chunk the stream must not be read further. */
  readonly decidesAt?: number;
  /** A usage part sent after the last chunk. */
  readonly usage?: { inputTokens: number; outputTokens: number };
}

/** A stream of the script's chunks, recording into `state` how far it was read. */
async function* scriptedParts(script: Script, state: StreamState): AsyncGenerator<StreamPart> {
  try {
    for (const delta of script.chunks) {
      state.pulled++;
      yield { type: 'text-delta', delta };
      if (state.pulled === script.decidesAt) {
        state.resumedAfterDecision = true;
        await NEVER;
      }
    }
    if (script.usage) yield { type: 'usage', usage: usage(script.usage) };
    state.finished = true;
  } finally {
    state.closed = true;
  }
}

function newState(): StreamState {
  return { pulled: 0, resumedAfterDecision: false, finished: false, closed: false };
}

/** Rejects, instead of timing the test out, when `promise` hangs. */
async function settled<T>(promise: Promise<T>, ms = 2000): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, hung]);
  } finally {
    clearTimeout(timer);
  }
}

/** Reads a script with readPlanStream; `stop` is a spy. */
async function read(script: Script) {
  const state = newState();
  const stop = vi.fn();
  const plan = await settled(readPlanStream(scriptedParts(script, state), stop));
  return { plan, state, stop };
}

interface ModelCall {
  readonly method: 'generate' | 'stream';
  readonly signal: AbortSignal | undefined;
  readonly state: StreamState;
}

/** A LanguageModel answering each call with the next script, recording every call. */
function stubModel(scripts: readonly Script[]) {
  const calls: ModelCall[] = [];
  const next = (method: ModelCall['method'], options: CallOptions | undefined) => {
    const script = scripts[calls.length];
    if (!script) throw new Error(`unscripted ${method} call #${calls.length + 1}`);
    const state = newState();
    calls.push({ method, signal: options?.signal, state });
    return { script, state };
  };
  const model: LanguageModel = {
    specificationVersion: 'v1',
    provider: 'stub',
    modelId: 'stub-planner',
    async generate(_request: ModelRequest, options?: CallOptions): Promise<ModelResponse> {
      const { script, state } = next('generate', options);
      state.finished = true;
      return {
        content: [{ type: 'text', text: script.chunks.join('') }],
        usage: usage(script.usage ?? {}),
        finishReason: { unified: 'stop', raw: 'stop' },
      };
    },
    async *stream(_request: ModelRequest, options?: CallOptions): AsyncGenerator<StreamPart> {
      const { script, state } = next('stream', options);
      yield* scriptedParts(script, state);
    },
  };
  return { model, calls };
}

/** A tool that counts its calls. */
function lookupTool() {
  const seen: string[] = [];
  const tool = defineTool({
    name: 'lookup',
    description: 'Looks a word up.',
    input: z.object({ word: z.string() }),
    execute: ({ word }) => {
      seen.push(word);
      return `definition of ${word}`;
    },
  });
  return { tool, seen };
}

const EXECUTE_LOOKUP =
  '{"nextAction": "execute", "executionCommands": [{"purpose": "Define", "toolName": "lookup", "toolKwargs": {"word": "apple"}}]}';
const RESPONSE = '{"nextAction": "response", "executionCommands": []}';

describe('readPlanStream: nextAction "response" first', () => {
  it.each([
    {
      name: 'split inside the key and inside the value',
      chunks: ['{"next', 'Action": "resp', 'onse"', ', "executionCommands": []}'],
      decidesAt: 3,
    },
    {
      name: 'the value completing in the middle of a chunk',
      chunks: ['{"nextAc', 'tion":"re', 'sponse", "executionComm', 'ands": []}'],
      decidesAt: 3,
    },
    {
      name: 'one character at a time',
      chunks: [...'{"nextAction":"response"', ',"executionCommands":[]}'],
      decidesAt: 24,
    },
    {
      name: 'the colon and the quote in chunks of their own',
      chunks: ['{ "nextAction"', ' ', ':', ' "', 'response', '"', ' }'],
      decidesAt: 6,
    },
  ])('stops after the chunk that completes the value: $name', async ({ chunks, decidesAt }) => {
    const { plan, state, stop } = await read({ chunks, decidesAt });
    expect(plan.shortCircuited).toBe(true);
    expect(plan.text).toBe(chunks.slice(0, decidesAt).join(''));
    expect(stop).toHaveBeenCalledTimes(1);
    expect(state.pulled).toBe(decidesAt);
    expect(state.resumedAfterDecision).toBe(false);
    expect(state.finished).toBe(false);
    expect(state.closed).toBe(true); // released by its reader, not left suspended
  });

  it('stops before the body of a long plan', async () => {
    const chunks = [
      '{"nextAction": "response", ',
      '"executionCommands": [{"toolName": "lookup", "toolKwargs": {"word": "a"}}',
      ']}',
    ];
    const { plan, state } = await read({ chunks, decidesAt: 1 });
    expect(plan).toMatchObject({ shortCircuited: true, text: chunks[0] });
    expect(state.pulled).toBe(1);
  });

  it.each([
    ['snake_case next_action', ['{"next_', 'action": "response"', '}']],
    ['upper-case RESPONSE', ['{"nextAction": "RESP', 'ONSE"', '}']],
    ['padded and capitalized', ['{"nextAction": " Response ', '"', '}']],
  ])('short-circuits on %s', async (_name, chunks) => {
    const { plan, state, stop } = await read({ chunks, decidesAt: 2 });
    expect(plan.shortCircuited).toBe(true);
    expect(stop).toHaveBeenCalledTimes(1);
    expect(state.resumedAfterDecision).toBe(false);
  });

  it.each([
    ['in a chunk of its own', ['Here is the plan: ', '{"nextAction":', '"response"', '}']],
    ['in the chunk that opens the object', ['Here is the plan: {"nextAction":', '"response"', '}']],
    ['with a code fence', ['Sure.\n```json\n', '{"nextAction": "response"', '}\n```']],
  ])('skips prose before the JSON: %s', async (_name, chunks) => {
    const { plan, state, stop } = await read({ chunks, decidesAt: chunks.length - 1 });
    expect(plan.shortCircuited).toBe(true);
    expect(plan.text).toBe(chunks.slice(0, -1).join(''));
    expect(stop).toHaveBeenCalledTimes(1);
    expect(state.resumedAfterDecision).toBe(false);
  });

  it('keeps the usage reported before the decision', async () => {
    const state = newState();
    async function* parts(): AsyncGenerator<StreamPart> {
      yield { type: 'usage', usage: usage({ inputTokens: 7, outputTokens: 1 }) };
      yield { type: 'text-delta', delta: RESPONSE };
      state.resumedAfterDecision = true;
    }
    const plan = await readPlanStream(parts(), () => {});
    expect(plan.shortCircuited).toBe(true);
    expect(plan.usage).toEqual(usage({ inputTokens: 7, outputTokens: 1 }));
    expect(state.resumedAfterDecision).toBe(false);
  });
});

describe('readPlanStream: everything else is read whole', () => {
  it('reads the whole stream when nextAction "execute" comes first', async () => {
    const chunks = [
      '{"nextAction": "exe',
      'cute", ',
      '"executionCommands": [',
      '{"toolName": "lookup"}]}',
    ];
    const { plan, state, stop } = await read({
      chunks,
      usage: { inputTokens: 3, outputTokens: 9 },
    });
    expect(plan).toEqual({
      text: chunks.join(''),
      usage: usage({ inputTokens: 3, outputTokens: 9 }),
      shortCircuited: false,
    });
    expect(stop).not.toHaveBeenCalled();
    expect(state.finished).toBe(true);
  });

  it('is not fooled by a later "response" once "execute" decided', async () => {
    const chunks = ['{"nextAction": "EXECUTE", ', '"next_action": "response", ', '"x": 1}'];
    const { plan, state, stop } = await read({ chunks });
    expect(plan.shortCircuited).toBe(false);
    expect(stop).not.toHaveBeenCalled();
    expect(state.pulled).toBe(chunks.length);
  });

  it.each([
    [
      'inside toolKwargs',
      [
        '{"executionCommands": [{"toolName": "lookup", "toolKwargs": ',
        '{"nextAction": "response", "word": "w"}',
        '}], "nextAction": "execute"}',
      ],
    ],
    [
      'as a field of a command',
      [
        '{"executionCommands": [{"nextAction": "response", ',
        '"next_action": "response", "toolName": "lookup"}], ',
        '"nextAction": "execute"}',
      ],
    ],
    [
      'inside a string value',
      ['{"note": "{\\"nextAction\\": \\"response\\"}", ', '"nextAction": "execute"}'],
    ],
  ])('ignores a nested "nextAction": "response" %s', async (_name, chunks) => {
    const { plan, state, stop } = await read({ chunks });
    expect(plan.shortCircuited).toBe(false);
    expect(plan.text).toBe(chunks.join(''));
    expect(stop).not.toHaveBeenCalled();
    expect(state.finished).toBe(true);
  });

  it.each([
    ['plain prose', ['I think ', 'we are done.']],
    ['prose with a brace', ['Plan {oops', ' nextAction: response}']],
    ['an unquoted value', ['{"nextAction": ', 'response}']],
    [
      'JSON followed by more text',
      ['{"executionCommands": []}', ' Done.', ' {"nextAction": "response"}'],
    ],
    ['nothing at all', []],
  ])('neither short-circuits nor throws on %s', async (_name, chunks) => {
    const { plan, state, stop } = await read({ chunks });
    expect(plan).toEqual({ text: chunks.join(''), usage: usage(), shortCircuited: false });
    expect(stop).not.toHaveBeenCalled();
    expect(state.finished).toBe(true);
  });

  it('reads whole when nextAction is not a string', async () => {
    const { plan } = await read({ chunks: ['{"nextAction": 1, ', '"executionCommands": []}'] });
    expect(plan.shortCircuited).toBe(false);
  });

  // The early decision must never disagree with normalizePlan on the whole text.
  it('reads whole when the first action is invalid, even if a snake_case "response" follows', async () => {
    const chunks = [
      '{"nextAction": 42, "next_action": "response", ',
      '"executionCommands": [{"toolName": "lookup", "toolKwargs": {}}]}',
    ];
    const { plan, stop } = await read({ chunks });
    expect(plan.shortCircuited).toBe(false);
    expect(stop).not.toHaveBeenCalled();
    expect(normalizePlan(JSON.parse(plan.text)).nextAction).toBe('execute');
  });

  it('reads whole when the answer is an array holding a plan, which is not a plan', async () => {
    const { plan, stop } = await read({ chunks: ['[{"nextAction": "response"}', ']'] });
    expect(plan.shortCircuited).toBe(false);
    expect(stop).not.toHaveBeenCalled();
  });
});

describe('createToolLoop with a streaming model planner (instant, the default)', () => {
  it('returns at once on "response", cancels the provider call and never awaits the body', async () => {
    const { tool, seen } = lookupTool();
    const { model, calls } = stubModel([
      {
        chunks: [
          '{"next',
          'Action": "res',
          'ponse"',
          ', "executionCommands": [{"toolName": "lookup", "toolKwargs": {"word": "x"}}]}',
        ],
        decidesAt: 3,
      },
    ]);
    const loop = createToolLoop({ model, tools: [tool], respond: false });
    const result = await settled(loop.invoke('What is an apple?'));

    expect(result.stopReason).toBe('response');
    expect(result.rounds).toBe(0);
    expect(result.plans).toEqual([
      {
        roundIndex: 0,
        plan: { nextAction: 'response', executionCommands: [] },
        shortCircuited: true,
      },
    ]);
    expect(result.toolLogs).toEqual([]);
    expect(result.answer).toBeUndefined();
    expect(seen).toEqual([]);

    expect(calls.map((call) => call.method)).toEqual(['stream']);
    const [call] = calls;
    expect(call?.signal?.aborted).toBe(true);
    expect(AbortError.isInstance(call?.signal?.reason)).toBe(true);
    expect(call?.state.pulled).toBe(3);
    expect(call?.state.resumedAfterDecision).toBe(false);
    expect(call?.state.closed).toBe(true);
  });

  it('reads the whole plan when "execute" comes first, and parses it from the full text', async () => {
    const { tool, seen } = lookupTool();
    const { model, calls } = stubModel([
      {
        chunks: [
          '{"nextAction": "execute", ',
          '"executionCommands": [{"purpose": "Define", "toolName": "lookup", ',
          '"toolKwargs": {"word": "apple"}, "todoSuggestion": "quote it"}]}',
        ],
        usage: { inputTokens: 10, outputTokens: 20 },
      },
      { chunks: ['{"nextAction": "response"', '}'], decidesAt: 1 },
    ]);
    const loop = createToolLoop({ model, tools: [tool], respond: false });
    const result = await settled(loop.invoke('What is an apple?'));

    expect(result.plans[0]).toEqual({
      roundIndex: 0,
      plan: {
        nextAction: 'execute',
        executionCommands: [
          {
            purpose: 'Define',
            toolName: 'lookup',
            toolKwargs: { word: 'apple' },
            todoSuggestion: 'quote it',
          },
        ],
      },
      shortCircuited: false,
    });
    expect(result.plans[1]?.shortCircuited).toBe(true);
    expect(seen).toEqual(['apple']);
    expect(result.rounds).toBe(1);
    expect(result.stopReason).toBe('response');
    expect(result.actionResults).toEqual({ Define: 'definition of apple' });
    expect(result.usage).toMatchObject({ inputTokens: 10, outputTokens: 20 });

    const [first, second] = calls;
    expect(first?.state.finished).toBe(true);
    expect(first?.signal?.aborted).toBe(false);
    expect(second?.signal?.aborted).toBe(true);
    expect(second?.state.resumedAfterDecision).toBe(false);
  });

  it('does not short-circuit on a nested "nextAction": "response" in toolKwargs', async () => {
    const { tool, seen } = lookupTool();
    const { model, calls } = stubModel([
      {
        chunks: [
          '{"executionCommands": [{"purpose": "Define", "toolName": "lookup", ',
          '"toolKwargs": {"nextAction": "response", "word": "pear"}}], ',
          '"nextAction": "execute"}',
        ],
      },
      { chunks: [RESPONSE] },
    ]);
    const loop = createToolLoop({ model, tools: [tool], respond: false });
    const result = await settled(loop.invoke('What is a pear?'));

    expect(result.plans[0]?.shortCircuited).toBe(false);
    expect(result.plans[0]?.plan.nextAction).toBe('execute');
    expect(result.plans[0]?.plan.executionCommands[0]?.toolKwargs).toEqual({
      nextAction: 'response',
      word: 'pear',
    });
    expect(seen).toEqual(['pear']);
    expect(calls[0]?.state.finished).toBe(true);
    expect(calls[0]?.signal?.aborted).toBe(false);
  });

  it('short-circuits after prose that precedes the JSON', async () => {
    const { tool } = lookupTool();
    const { model, calls } = stubModel([
      {
        chunks: ['Here is the plan: {"nextAction":', '"response"', ', "executionCommands": []}'],
        decidesAt: 2,
      },
    ]);
    const result = await settled(
      createToolLoop({ model, tools: [tool], respond: false }).invoke('hi'),
    );
    expect(result.plans[0]?.shortCircuited).toBe(true);
    expect(result.stopReason).toBe('response');
    expect(calls[0]?.signal?.aborted).toBe(true);
  });
});

describe('createToolLoop with a planner of your own that streams', () => {
  it('short-circuits an async iterable of text chunks and closes it', async () => {
    const { tool, seen } = lookupTool();
    const state = newState();
    const loop = createToolLoop({
      tools: [tool],
      planner: async function* () {
        try {
          yield '{"next_action"';
          yield ': "response"';
          state.resumedAfterDecision = true;
          await NEVER;
          yield ', "executionCommands": [{"toolName": "lookup", "toolKwargs": {"word": "x"}}]}';
        } finally {
          state.closed = true;
        }
      },
    });
    const result = await settled(loop.invoke('hi'));
    expect(result.plans).toEqual([
      {
        roundIndex: 0,
        plan: { nextAction: 'response', executionCommands: [] },
        shortCircuited: true,
      },
    ]);
    expect(result.stopReason).toBe('response');
    expect(seen).toEqual([]);
    expect(state.resumedAfterDecision).toBe(false);
    expect(state.closed).toBe(true);
  });

  it('reads an "execute" plan whole, then executes it', async () => {
    const { tool, seen } = lookupTool();
    let round = 0;
    const loop = createToolLoop({
      tools: [tool],
      planner: async function* () {
        round++;
        if (round > 1) {
          yield RESPONSE;
          return;
        }
        yield '{"nextAction": "execute", "executionCommands": [';
        yield '{"purpose": "Define", "toolName": "lookup", "toolKwargs": {"word": "fig"}}]}';
      },
    });
    const result = await settled(loop.invoke('hi'));
    expect(result.plans.map((p) => p.shortCircuited)).toEqual([false, true]);
    expect(seen).toEqual(['fig']);
    expect(result.actionResults).toEqual({ Define: 'definition of fig' });
  });

  it('parses a planner that returns the plan as one JSON string, without short-circuit', async () => {
    const { tool } = lookupTool();
    const loop = createToolLoop({ tools: [tool], planner: () => RESPONSE });
    const result = await settled(loop.invoke('hi'));
    expect(result.plans).toEqual([
      {
        roundIndex: 0,
        plan: { nextAction: 'response', executionCommands: [] },
        shortCircuited: false,
      },
    ]);
  });
});

describe('createToolLoop with instant: false', () => {
  it('plans with model.generate, never model.stream', async () => {
    const { tool, seen } = lookupTool();
    const { model, calls } = stubModel([{ chunks: [EXECUTE_LOOKUP] }, { chunks: [RESPONSE] }]);
    const loop = createToolLoop({ model, tools: [tool], respond: false, instant: false });
    const result = await settled(loop.invoke('hi'));
    expect(calls.map((call) => call.method)).toEqual(['generate', 'generate']);
    expect(result.plans.map((p) => p.shortCircuited)).toEqual([false, false]);
    expect(result.plans[1]?.plan).toEqual({ nextAction: 'response', executionCommands: [] });
    expect(seen).toEqual(['apple']);
    expect(calls.every((call) => call.signal?.aborted === false)).toBe(true);
  });

  it('uses model.stream when instant is left at its default', async () => {
    const { tool } = lookupTool();
    const { model, calls } = stubModel([{ chunks: [RESPONSE] }]);
    await settled(createToolLoop({ model, tools: [tool], respond: false }).invoke('hi'));
    expect(calls.map((call) => call.method)).toEqual(['stream']);
  });
});
