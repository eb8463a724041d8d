import {
  AbortError,
  assistantMessage,
  ConfigError,
  defineTool,
  ModelError,
  ProtocolError,
  Transcript,
  userMessage,
} from 'statecraft';
import {
  collectStream,
  type ModelRequest,
  responseText,
  responseToolCalls,
  type StreamPart,
} from 'statecraft/model';
import { ScriptExhaustedError, ScriptedModel, type ScriptedTurn } from 'statecraft/testing';
import { LocalToolRegistry } from 'statecraft/tools';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { thrownBy } from './support/errors.js';

function request(text = 'Hello'): ModelRequest {
  return { messages: Transcript.from([userMessage(text)]) };
}

async function* replay(parts: readonly StreamPart[]): AsyncGenerator<StreamPart> {
  for (const part of parts) yield part;
}

async function partsOf(stream: AsyncIterable<StreamPart>): Promise<StreamPart[]> {
  const parts: StreamPart[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

/** Runs `fn` and returns what it rejects with; fails the test when it resolves. */
async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

const configErrorOf = (fn: () => unknown) => thrownBy(ConfigError, fn);

afterEach(() => {
  vi.useRealTimers();
});

describe('ScriptedModel: a list of responses', () => {
  it('implements LanguageModel v1 as the scripted provider', () => {
    const model = new ScriptedModel([]);
    expect(model.specificationVersion).toBe('v1');
    expect(model.provider).toBe('scripted');
    expect(model.modelId).toBe('scripted-model');
    expect(new ScriptedModel([], { modelId: 'fake-gpt' }).modelId).toBe('fake-gpt');
  });

  it('returns the responses in order, with their text and tool calls', async () => {
    const model = new ScriptedModel([
      { text: 'First answer' },
      { toolCalls: [{ id: 'call_1', name: 'search', arguments: { query: 'cats' } }] },
      {
        text: 'Reading both',
        toolCalls: [
          { id: 'call_2', name: 'read', arguments: { path: '/a' } },
          { id: 'call_3', name: 'read', arguments: { path: '/b' } },
        ],
      },
    ]);

    const first = await model.generate(request());
    expect(first.content).toEqual([{ type: 'text', text: 'First answer' }]);

    const second = await model.generate(request());
    expect(second.content).toStrictEqual([
      {
        type: 'tool-call',
        toolCall: { id: 'call_1', name: 'search', arguments: { query: 'cats' } },
      },
    ]);

    const third = await model.generate(request());
    expect(responseText(third)).toBe('Reading both');
    expect(third.content[0]).toEqual({ type: 'text', text: 'Reading both' });
    expect(responseToolCalls(third)).toEqual([
      { id: 'call_2', name: 'read', arguments: { path: '/a' } },
      { id: 'call_3', name: 'read', arguments: { path: '/b' } },
    ]);
  });

  it('generates an id for a tool call scripted without one', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ name: 'ping' }, { name: 'ping' }] }]);
    const calls = responseToolCalls(await model.generate(request()));
    expect(calls).toHaveLength(2);
    expect(calls[0]?.id).toMatch(/^call_./);
    expect(calls[1]?.id).toMatch(/^call_./);
    expect(calls[0]?.id).not.toBe(calls[1]?.id);
    // No arguments scripted: the call carries an empty object.
    expect(calls[0]?.arguments).toEqual({});
  });

  it('answers {} with empty content', async () => {
    const response = await new ScriptedModel([{}]).generate(request());
    expect(response.content).toEqual([]);
    expect(response.finishReason.unified).toBe('stop');
  });

  it('records every request', async () => {
    const model = new ScriptedModel([{ text: 'a' }, { text: 'b' }]);
    expect(model.callCount).toBe(0);
    expect(model.lastRequest).toBeUndefined();
    const r1 = request('one');
    const r2 = request('two');
    await model.generate(r1);
    expect(model.callCount).toBe(1);
    expect(model.lastRequest).toBe(r1);
    await model.generate(r2);
    expect(model.callCount).toBe(2);
    expect(model.lastRequest).toBe(r2);
    expect(model.requests).toHaveLength(2);
    expect(model.requests[0]).toBe(r1);
    expect(model.requests[1]).toBe(r2);
  });

  it('assertComplete passes once every response was used', async () => {
    const model = new ScriptedModel([{ text: 'a' }, { text: 'b' }]);
    await model.generate(request());
    await model.generate(request());
    expect(() => model.assertComplete()).not.toThrow();
  });

  it('assertComplete throws naming the first unused response', async () => {
    const model = new ScriptedModel([{ text: 'a' }, { text: 'b' }, { text: 'c' }], {
      modelId: 'planner',
    });
    expect(() => model.assertComplete()).toThrow(/response #1 was never requested/);
    await model.generate(request());
    expect(() => model.assertComplete()).toThrow(
      "ScriptedModel 'planner' expected 3 call(s) but received 1; response #2 was never requested",
    );
  });

  it('rejects a call beyond the script with a non-retryable ScriptExhaustedError', async () => {
    const model = new ScriptedModel([{ text: 'only answer' }]);
    await model.generate(request());
    const error = await rejectionOf(model.generate(request('Are you there?')));
    expect(ScriptExhaustedError.isInstance(error)).toBe(true);
    expect(ModelError.isInstance(error)).toBe(true);
    expect(ConfigError.isInstance(error)).toBe(false);
    if (!ScriptExhaustedError.isInstance(error)) throw error;
    expect(error.code).toBe('SCRIPT_EXHAUSTED');
    expect(error.retryable).toBe(false);
    expect(error.message).toContain('received call #2 but was scripted for 1');
    expect(error.message).toContain('user message');
    expect(error.message).toContain('Are you there?');
    // The failed call is recorded too, so assertComplete reports the extra call.
    expect(model.callCount).toBe(2);
    expect(() => model.assertComplete()).toThrow(/expected 1 call\(s\) but received 2/);
  });

  it('describes an extra call whose request ends with a tool result', async () => {
    const model = new ScriptedModel([]);
    const error = await rejectionOf(
      model.generate({
        messages: Transcript.from([
          userMessage('Hi'),
          assistantMessage('', [{ id: 'call_1', name: 'ping', arguments: {} }]),
          { role: 'tool', toolCallId: 'call_1', name: 'ping', output: 'pong', success: true },
        ]),
      }),
    );
    expect(ScriptExhaustedError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('ended with a tool message');
  });
});

describe('ScriptedModel: a function script', () => {
  it('receives each request and the call index', async () => {
    const script = vi.fn(
      (req: ModelRequest, callIndex: number): ScriptedTurn => ({
        text: `#${callIndex}: ${(req.messages.last as { content: string }).content}`,
      }),
    );
    const model = new ScriptedModel(script);
    const r1 = request('ping');
    const r2 = request('pong');
    expect(responseText(await model.generate(r1))).toBe('#0: ping');
    expect(responseText(await model.generate(r2))).toBe('#1: pong');
    expect(script).toHaveBeenNthCalledWith(1, r1, 0);
    expect(script).toHaveBeenNthCalledWith(2, r2, 1);
    expect(model.requests).toEqual([r1, r2]);
  });

  it('may be async, and may be a step of a list', async () => {
    const model = new ScriptedModel([
      { text: 'fixed' },
      async (_req, callIndex) => ({ text: `computed at ${callIndex}` }),
    ]);
    expect(responseText(await model.generate(request()))).toBe('fixed');
    expect(responseText(await model.generate(request()))).toBe('computed at 1');
    model.assertComplete();
  });

  it('checks expectedCalls in assertComplete', async () => {
    const model = new ScriptedModel(() => ({ text: 'again' }), { expectedCalls: 2 });
    await model.generate(request());
    expect(() => model.assertComplete()).toThrow(/expected 2 call\(s\) but received 1/);
    await model.generate(request());
    expect(() => model.assertComplete()).not.toThrow();
    await model.generate(request());
    expect(() => model.assertComplete()).toThrow(/expected 2 call\(s\) but received 3/);
  });

  it('checks the responses it returns', async () => {
    const model = new ScriptedModel(() => ({ text: 'abc', chunks: ['a', 'b'] }));
    const error = await rejectionOf(model.generate(request()));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('call #1');
  });
});

describe('ScriptedModel: usage and finish reason', () => {
  it('returns the scripted usage with totalTokens derived', async () => {
    const model = new ScriptedModel([
      { text: 'a', usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 100 } },
      { text: 'b', usage: { inputTokens: 1, outputTokens: 2, totalTokens: 10 } },
    ]);
    expect((await model.generate(request())).usage).toEqual({
      inputTokens: 120,
      outputTokens: 30,
      totalTokens: 150,
      cachedInputTokens: 100,
    });
    expect((await model.generate(request())).usage.totalTokens).toBe(10);
  });

  it('estimates usage when none is scripted', async () => {
    const model = new ScriptedModel(() => ({ text: 'An answer of some length.' }));
    const short = (await model.generate(request('Hi'))).usage;
    expect(short.inputTokens).toBeGreaterThan(0);
    expect(short.outputTokens).toBeGreaterThan(0);
    expect(short.totalTokens).toBe(short.inputTokens + short.outputTokens);
    const long = (await model.generate(request('Hi '.repeat(400)))).usage;
    expect(long.inputTokens).toBeGreaterThan(short.inputTokens);
    expect(long.outputTokens).toBe(short.outputTokens);
  });

  it("finishes with 'tool-calls' when there are tool calls, else 'stop'", async () => {
    const model = new ScriptedModel([{ text: 'done' }, { toolCalls: [{ name: 'search' }] }]);
    expect((await model.generate(request())).finishReason).toEqual({
      unified: 'stop',
      raw: 'stop',
    });
    expect((await model.generate(request())).finishReason).toEqual({
      unified: 'tool-calls',
      raw: 'tool-calls',
    });
  });

  it('uses an explicit finish reason, as a string or as an object', async () => {
    const model = new ScriptedModel([
      { text: 'cut off', finishReason: 'length' },
      { toolCalls: [{ name: 'search' }], finishReason: 'stop' },
      { text: 'x', finishReason: { unified: 'other', raw: 'max_turns_reached' } },
    ]);
    expect((await model.generate(request())).finishReason).toEqual({
      unified: 'length',
      raw: 'length',
    });
    expect((await model.generate(request())).finishReason.unified).toBe('stop');
    expect((await model.generate(request())).finishReason).toEqual({
      unified: 'other',
      raw: 'max_turns_reached',
    });
  });
});

describe('ScriptedModel: latency', () => {
  it('answers only after latencyMs', async () => {
    vi.useFakeTimers();
    const model = new ScriptedModel([{ text: 'slow', latencyMs: 1000 }]);
    let settled = false;
    const pending = model.generate(request()).then((response) => {
      settled = true;
      return response;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(settled).toBe(true);
    expect(responseText(await pending)).toBe('slow');
  });

  it('waits chunkDelayMs between streamed parts', async () => {
    vi.useFakeTimers();
    const model = new ScriptedModel([{ chunks: ['a', 'b'], chunkDelayMs: 100 }]);
    const iterator = model.stream(request())[Symbol.asyncIterator]();
    expect(await iterator.next()).toEqual({
      done: false,
      value: { type: 'text-delta', delta: 'a' },
    });
    let second: IteratorResult<StreamPart> | undefined;
    const pending = iterator.next().then((result) => {
      second = result;
    });
    await vi.advanceTimersByTimeAsync(99);
    expect(second).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    await pending;
    expect(second?.value).toEqual({ type: 'text-delta', delta: 'b' });
  });
});

describe('ScriptedModel: streaming', () => {
  const args = { query: 'cats and dogs', limit: 3 };
  const turn: ScriptedTurn = {
    chunks: ['Let me ', 'search', '.'],
    toolCalls: [
      { id: 'call_a', name: 'search', arguments: args },
      { id: 'call_b', name: 'read', arguments: { path: '/notes.md' } },
    ],
    usage: { inputTokens: 7, outputTokens: 5 },
  };

  it('streams chunks as text deltas, tool calls as deltas then a complete call, then usage and finish', async () => {
    const parts = await partsOf(new ScriptedModel([turn]).stream(request()));

    // Text deltas come first, in order.
    const textDeltas = parts.flatMap((p) => (p.type === 'text-delta' ? [p.delta] : []));
    expect(textDeltas).toEqual(['Let me ', 'search', '.']);
    expect(parts.slice(0, 3).every((p) => p.type === 'text-delta')).toBe(true);

    // Each tool call: its deltas, then the complete call.
    const scripted = turn.toolCalls ?? [];
    let previousEnd = 2;
    for (const [index, expected] of scripted.entries()) {
      const deltaPositions = parts.flatMap((p, i) =>
        p.type === 'tool-call-delta' && p.index === index ? [i] : [],
      );
      const callPosition = parts.findIndex(
        (p) => p.type === 'tool-call' && p.toolCall.id === expected.id,
      );
      expect(deltaPositions.length).toBeGreaterThan(0);
      expect(deltaPositions[0]).toBeGreaterThan(previousEnd);
      expect(callPosition).toBeGreaterThan(Math.max(...deltaPositions));
      previousEnd = callPosition;

      const deltas = deltaPositions.map((i) => parts[i]);
      const joined = deltas.map((p) => (p?.type === 'tool-call-delta' ? p.argumentsDelta : ''));
      expect(joined.join('')).toBe(JSON.stringify(expected.arguments));
      expect(deltas[0]).toMatchObject({ id: expected.id, name: expected.name });
      expect(parts[callPosition]).toEqual({
        type: 'tool-call',
        toolCall: { id: expected.id, name: expected.name, arguments: expected.arguments },
      });
    }

    // Then usage, then finish, last and once each.
    expect(parts.filter((p) => p.type === 'usage')).toHaveLength(1);
    expect(parts.filter((p) => p.type === 'finish')).toHaveLength(1);
    expect(parts.at(-2)).toEqual({
      type: 'usage',
      usage: { inputTokens: 7, outputTokens: 5, totalTokens: 12 },
    });
    expect(parts.at(-1)).toEqual({
      type: 'finish',
      finishReason: { unified: 'tool-calls', raw: 'tool-calls' },
    });
    expect(previousEnd).toBe(parts.length - 3);
  });

  it('streams text scripted without chunks as one delta', async () => {
    const parts = await partsOf(new ScriptedModel([{ text: 'Hello there' }]).stream(request()));
    expect(parts.map((p) => p.type)).toEqual(['text-delta', 'usage', 'finish']);
    expect(parts[0]).toEqual({ type: 'text-delta', delta: 'Hello there' });
  });

  it('answers generate() with what collectStream makes of stream()', async () => {
    const model = new ScriptedModel(() => ({ ...turn, usage: undefined }));
    const generated = await model.generate(request());
    const collected = await collectStream(model.stream(request()));
    expect(collected).toEqual(generated);
    expect(responseText(generated)).toBe('Let me search.');
    expect(responseToolCalls(generated).map((c) => c.id)).toEqual(['call_a', 'call_b']);
  });

  it('keeps malformed argumentsText raw, with argumentsError, for the tool runner to report', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'call_m', name: 'search', argumentsText: '{"query":' }] },
    ]);
    const parts = await partsOf(model.stream(request()));
    const deltaText = parts
      .map((p) => (p.type === 'tool-call-delta' ? p.argumentsDelta : ''))
      .join('');
    expect(deltaText).toBe('{"query":');

    const [toolCall] = responseToolCalls(await collectStream(replay(parts)));
    expect(toolCall?.arguments).toBe('{"query":');
    expect(typeof toolCall?.argumentsError).toBe('string');

    const execute = vi.fn(() => 'ran');
    const registry = new LocalToolRegistry([
      defineTool({
        name: 'search',
        description: 'Searches',
        input: z.object({ query: z.string() }),
        execute,
      }),
    ]);
    if (!toolCall) throw new Error('expected a tool call');
    const result = await registry.run(toolCall);
    expect(execute).not.toHaveBeenCalled();
    expect(result.success).toBe(false);
    expect(result.error).toContain('not valid JSON');
  });
});

describe('ScriptedModel: scripted errors', () => {
  it('throws the scripted error and still records the request', async () => {
    const rateLimited = new ModelError('rate limited', { retryable: true, status: 429 });
    const model = new ScriptedModel([{ error: rateLimited }, { text: 'recovered' }]);
    const r1 = request('first try');
    await expect(model.generate(r1)).rejects.toBe(rateLimited);
    expect(model.callCount).toBe(1);
    expect(model.lastRequest).toBe(r1);
    // The error used up its step: the retry gets the next response.
    expect(responseText(await model.generate(request('retry')))).toBe('recovered');
    model.assertComplete();
  });

  it('throws the scripted error from the stream before any part', async () => {
    const failure = new ModelError('overloaded', { retryable: true, status: 529 });
    const model = new ScriptedModel([{ text: 'never sent', error: failure }]);
    const seen: StreamPart[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const part of model.stream(request())) seen.push(part);
      })(),
    );
    expect(error).toBe(failure);
    expect(seen).toEqual([]);
  });

  it('throws the scripted error only after the latency', async () => {
    vi.useFakeTimers();
    const model = new ScriptedModel([{ error: new ModelError('late'), latencyMs: 500 }]);
    let rejected = false;
    const pending = model.generate(request()).catch((error: unknown) => {
      rejected = true;
      return error;
    });
    await vi.advanceTimersByTimeAsync(499);
    expect(rejected).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(rejected).toBe(true);
    expect((await pending) as Error).toMatchObject({ message: 'late' });
  });
});

describe('ScriptedModel: abort', () => {
  it('rejects with AbortError for a signal aborted before the call', async () => {
    const controller = new AbortController();
    controller.abort();
    const model = new ScriptedModel([{ text: 'never' }]);
    const error = await rejectionOf(model.generate(request(), { signal: controller.signal }));
    expect(AbortError.isInstance(error)).toBe(true);
    expect((error as AbortError).reason).toBe('cancelled');
    expect((error as AbortError).cause).toBe(controller.signal.reason);
    // The aborted call consumed no scripted response: the next call still gets it.
    expect(model.callCount).toBe(0);
    await expect(model.generate(request())).resolves.toMatchObject({
      content: [{ type: 'text', text: 'never' }],
    });
    model.assertComplete();
  });

  it('rejects with AbortError when aborted during the latency, and clears its timer', async () => {
    vi.useFakeTimers();
    const controller = new AbortController();
    const model = new ScriptedModel([{ text: 'too late', latencyMs: 10_000 }]);
    const pending = rejectionOf(model.generate(request(), { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(100);
    expect(vi.getTimerCount()).toBe(1);
    controller.abort();
    const error = await pending;
    expect(AbortError.isInstance(error)).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('rejects with AbortError when aborted between streamed parts', async () => {
    const controller = new AbortController();
    const model = new ScriptedModel([{ chunks: ['a', 'b', 'c'] }]);
    const seen: string[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const part of model.stream(request(), { signal: controller.signal })) {
          if (part.type === 'text-delta') seen.push(part.delta);
          controller.abort();
        }
      })(),
    );
    expect(AbortError.isInstance(error)).toBe(true);
    expect(seen).toEqual(['a']);
  });
});

describe('ScriptedModel: invalid scripts', () => {
  it.each([
    ['a string', 'hello'],
    ['a single response object', { text: 'hi' }],
    ['null', null],
  ])('rejects %s as the script', (_label, script) => {
    const error = configErrorOf(() => new ScriptedModel(script as never));
    expect(error.option).toBe('script');
  });

  it.each([
    ['null', null, 'script[1] must be an object'],
    ['a string', 'hi', 'script[1] must be an object'],
    ['non-string text', { text: 42 }, 'script[1].text must be a string'],
    [
      'chunks that do not join to text',
      { text: 'Hello', chunks: ['Hel', 'p'] },
      'script[1].chunks must join to script[1].text',
    ],
    ['a tool call without a name', { toolCalls: [{ arguments: {} }] }, 'toolCalls[0]'],
  ])('rejects a step that is %s, naming it', (_label, step, message) => {
    const error = configErrorOf(() => new ScriptedModel([{ text: 'fine' }, step as never]));
    expect(error.option).toBe('script');
    expect(error.message).toContain(message);
  });

  it('rejects expectedCalls with an array script, which already says how many calls', () => {
    const error = configErrorOf(() => new ScriptedModel([{}], { expectedCalls: 1 }));
    expect(error.option).toBe('expectedCalls');
  });

  it.each([
    ['toolCalls not an array', { toolCalls: 'add' }],
    ['negative latency', { latencyMs: -5 }],
    ['unknown finish reason', { finishReason: 'done' }],
    ['chunks not strings', { chunks: [1, 2] }],
  ])('rejects a script step with %s', (_name, step) => {
    expect(configErrorOf(() => new ScriptedModel([step as never])).option).toBe('script');
  });

  it.each([-1, 1.5, Number.NaN])('rejects expectedCalls = %s', (expectedCalls) => {
    const error = configErrorOf(() => new ScriptedModel(() => ({}), { expectedCalls }));
    expect(error.option).toBe('expectedCalls');
  });
});

describe('collectStream', () => {
  it('throws ProtocolError when the stream ends without a finish part', async () => {
    const error = await rejectionOf(
      collectStream(
        replay([
          { type: 'text-delta', delta: 'cut ' },
          { type: 'text-delta', delta: 'short' },
          { type: 'usage', usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } },
        ]),
      ),
    );
    expect(ProtocolError.isInstance(error)).toBe(true);
    expect((error as Error).message).toMatch(/finish/);
  });

  it('merges adjacent text deltas around tool calls and defaults usage to zero', async () => {
    const toolCall = { id: 'call_1', name: 'search', arguments: {} };
    const response = await collectStream(
      replay([
        { type: 'text-delta', delta: 'a' },
        { type: 'text-delta', delta: 'b' },
        { type: 'tool-call-delta', index: 0, id: 'call_1', name: 'search', argumentsDelta: '{}' },
        { type: 'tool-call', toolCall },
        { type: 'text-delta', delta: 'c' },
        { type: 'finish', finishReason: { unified: 'stop', raw: 'end_turn' } },
      ]),
    );
    expect(response).toEqual({
      content: [
        { type: 'text', text: 'ab' },
        { type: 'tool-call', toolCall },
        { type: 'text', text: 'c' },
      ],
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0 },
      finishReason: { unified: 'stop', raw: 'end_turn' },
    });
  });
});
