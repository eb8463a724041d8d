// Issue 13, tool-side hardening of the chain (SPEC C10, C11): tool output JSON cannot carry
// (BigInt, cycles) is made safe text once where it is made, and streaming tools whose
// iterators misbehave (a throwing finally, a synchronous return(), a next() that throws or
// returns a non-object) give failed results the model sees, never a failed run.
import {
  ConfigError,
  createChain,
  defineTool,
  type LanguageModel,
  type RemoteToolExecutor,
  type ToolCall,
} from 'statecraft';
import { callKey } from 'statecraft/machines';
import { type ModelRequest, type ModelResponse, ZERO_USAGE } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { STOP_STREAM_TOOL } from 'statecraft/tools';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { drain, messagesOf, partialOf, rejectionOf, systemNotes, toolMessages } from './helpers.js';

/** An object that holds itself: JSON.stringify throws on it. */
function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: 'loop', big: 12345678901234567890n };
  value.self = value;
  return value;
}

function valueTool(name: string, value: () => unknown, options: { returnDirect?: boolean } = {}) {
  return defineTool({
    name,
    description: `Returns a ${name}.`,
    input: z.object({}),
    execute: value,
    ...options,
  });
}

/** A model that calls `name` once, then answers with the text of the tool result it saw. */
function callThenEcho(name: string) {
  return new ScriptedModel((request, index) =>
    index === 0
      ? { toolCalls: [{ id: 'c1', name, arguments: {} }] }
      : { text: `saw ${String(toolMessages(request.messages.toArray())[0]?.success)}` },
  );
}

describe('tool output JSON cannot carry is made safe (issue 13, C10)', () => {
  it('a BigInt result reaches the model as its decimal string; the run succeeds', async () => {
    const model = callThenEcho('big');
    const run = await createChain({
      model,
      tools: [valueTool('big', () => ({ id: 2n ** 70n }))],
    }).invoke('go');
    expect(run.result).toBe('saw true');
    expect(toolMessages(run.transcript)[0]?.output).toEqual({ id: '1180591620717411303424' });
    expect(() => JSON.stringify(run.transcript)).not.toThrow();
    expect(() => JSON.stringify(run.details())).not.toThrow();
  });

  it('a circular result becomes JSON with "[Circular]" where it looped back', async () => {
    const model = callThenEcho('loop');
    const run = await createChain({ model, tools: [valueTool('loop', circular)] }).invoke('go');
    expect(run.result).toBe('saw true');
    expect(toolMessages(messagesOf(model.requests[1]))[0]?.output).toEqual({
      name: 'loop',
      big: '12345678901234567890',
      self: '[Circular]',
    });
    expect(() => JSON.stringify(run.intermediateSteps)).not.toThrow();
  });

  it('a toJSON that throws is described, not thrown', async () => {
    const model = callThenEcho('odd');
    const odd = {
      ok: 1,
      bad: {
        toJSON() {
          throw new Error('no JSON for you');
        },
      },
    };
    const run = await createChain({ model, tools: [valueTool('odd', () => odd)] }).invoke('go');
    expect(run.result).toBe('saw true');
    expect(toolMessages(run.transcript)[0]?.output).toEqual({
      ok: 1,
      bad: '[toJSON failed: no JSON for you]',
    });
  });

  it('plain JSON output is passed on as the same object, not a copy', async () => {
    const plain = { list: [1, 'two', { three: true }], none: null };
    const model = callThenEcho('plain');
    const run = await createChain({ model, tools: [valueTool('plain', () => plain)] }).invoke('go');
    expect(toolMessages(run.transcript)[0]?.output).toBe(plain);
  });

  it('a returnDirect tool with a BigInt or circular output ends the run with safe output', async () => {
    const model = new ScriptedModel([{ toolCalls: [{ id: 'c1', name: 'loop', arguments: {} }] }]);
    const run = await createChain({
      model,
      tools: [valueTool('loop', circular, { returnDirect: true })],
    }).invoke('go');
    expect(run.status).toBe('succeeded');
    expect(JSON.parse(run.text)).toEqual({
      name: 'loop',
      big: '12345678901234567890',
      self: '[Circular]',
    });
  });

  it('stream chunks JSON cannot carry are made safe as they are read (first batch and notes)', async () => {
    const stream = defineTool({
      name: 'numbers',
      description: 'Streams numbers.',
      input: z.object({}),
      execute: async function* () {
        yield 1n;
        yield circular();
        yield { n: 3n };
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'numbers', arguments: {} }] },
      { toolCalls: [{ id: 'c2', name: 'multiply_noop', arguments: {} }] },
      { text: 'done' },
    ]);
    const noop = valueTool('multiply_noop', () => 'ok');
    const run = await createChain({ model, tools: [stream, noop], streamBatchSize: 2 }).invoke(
      'go',
    );
    expect(run.result).toBe('done');
    expect(toolMessages(run.transcript)[0]?.output).toMatchObject({
      chunks: ['1', { name: 'loop', big: '12345678901234567890', self: '[Circular]' }],
    });
    expect(systemNotes(messagesOf(model.requests[2])).join('\n')).toContain('{"n":"3"}');
  });

  it('a remote executor output JSON cannot carry is made safe too', async () => {
    const remote: RemoteToolExecutor = {
      name: 'neural-1',
      listTools: () => [
        { name: 'lookup', description: 'Looks up.', inputSchema: { type: 'object' } },
      ],
      execute: async (call) => ({
        toolCallId: call.id,
        name: call.name,
        output: circular(),
        success: true,
      }),
    };
    const model = callThenEcho('lookup');
    const run = await createChain({ model, remote }).invoke('go');
    expect(run.result).toBe('saw true');
    expect(toolMessages(run.transcript)[0]?.output).toMatchObject({ self: '[Circular]' });
  });

  it('duplicate-call keys do not throw on BigInt or circular arguments from a custom model', async () => {
    const args: Record<string, unknown> = { n: 1n };
    args.self = args;
    const requests: ModelRequest[] = [];
    const answers: ModelResponse[] = [
      {
        content: [{ type: 'tool-call', toolCall: { id: 'c1', name: 'echo', arguments: args } }],
        usage: ZERO_USAGE,
        finishReason: { unified: 'tool-calls', raw: undefined },
      },
      {
        content: [{ type: 'tool-call', toolCall: { id: 'c2', name: 'echo', arguments: args } }],
        usage: ZERO_USAGE,
        finishReason: { unified: 'tool-calls', raw: undefined },
      },
      {
        content: [{ type: 'text', text: 'done' }],
        usage: ZERO_USAGE,
        finishReason: { unified: 'stop', raw: undefined },
      },
    ];
    const model: LanguageModel = {
      specificationVersion: 'v1',
      provider: 'custom',
      modelId: 'bigint-args',
      generate: async (request) => {
        requests.push(request);
        const answer = answers.shift();
        if (!answer) throw new Error('no more answers');
        return answer;
      },
      stream: () => {
        throw new Error('not streamed');
      },
    } as LanguageModel;
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes.',
      input: z.object({}).passthrough(),
      execute: () => 'echoed',
      duplicateCallWarn: true,
    });
    const run = await createChain({ model, tools: [echo] }).invoke('go');
    expect(run.result).toBe('done');
    const results = toolMessages(run.transcript);
    expect(results[0]).toMatchObject({ output: 'echoed', success: true });
    // The repeat is recognised as the same call: blocked once with a warning.
    expect(results[1]).toMatchObject({
      success: false,
      error: expect.stringContaining('Not executed'),
    });
  });
});

describe('callKey (C8) on arguments JSON cannot carry', () => {
  it('keys BigInts apart from strings, cycles without throwing, and ignores key order', () => {
    const args: Record<string, unknown> = { b: 1n, a: [2n] };
    args.self = args;
    expect(() => callKey({ name: 't', arguments: args })).not.toThrow();
    expect(callKey({ name: 't', arguments: { n: 1n } })).not.toBe(
      callKey({ name: 't', arguments: { n: '1' } }),
    );
    expect(callKey({ name: 't', arguments: { a: 1n, b: 2 } })).toBe(
      callKey({ name: 't', arguments: { b: 2, a: 1n } }),
    );
    expect(callKey({ name: 't', arguments: args })).toContain('[Circular]');
  });
});

/** A streaming tool built from a hand-written iterator, for iterators generators cannot make. */
function iteratorTool(name: string, iterator: () => AsyncIterator<unknown>) {
  return defineTool({
    name,
    description: `Streams from a hand-written iterator (${name}).`,
    input: z.object({}),
    execute: () => ({ [Symbol.asyncIterator]: iterator }),
  });
}

/** A model that opens `name`'s stream, stops it, then answers. */
function openThenStop(name: string) {
  return new ScriptedModel([
    { toolCalls: [{ id: 'c1', name, arguments: {} }] },
    {
      toolCalls: [{ id: 'c2', name: STOP_STREAM_TOOL, arguments: { streamId: 'stream_c1' } }],
    },
    { text: 'done' },
  ]);
}

function endlessNext(): Promise<IteratorResult<unknown>> {
  return Promise.resolve({ done: false, value: 'tick' });
}

describe('streaming tools that misbehave give failed results, never a failed run (issue 13, C11)', () => {
  it('stop_stream on a generator whose finally throws is a failed result the model sees', async () => {
    const tool = defineTool({
      name: 'tail',
      description: 'Follows a log.',
      input: z.object({}),
      execute: async function* () {
        try {
          for (;;) yield 'line';
        } finally {
          // biome-ignore lint/correctness/noUnsafeFinally: the misbehaving tool under test.
          throw new Error('cleanup exploded');
        }
      },
    });
    const model = openThenStop('tail');
    const run = await createChain({ model, tools: [tool] }).invoke('go');
    expect(run.result).toBe('done');
    expect(toolMessages(run.transcript)[1]).toMatchObject({
      toolCallId: 'c2',
      success: false,
      error: expect.stringContaining('cleanup exploded'),
    });
  });

  it('stop_stream on an iterator whose return() is synchronous closes it', async () => {
    let closed = false;
    const tool = iteratorTool('sync_return', () => ({
      next: endlessNext,
      return: (() => {
        closed = true;
        return { done: true, value: undefined };
      }) as unknown as () => Promise<IteratorResult<unknown>>,
    }));
    const model = openThenStop('sync_return');
    const run = await createChain({ model, tools: [tool] }).invoke('go');
    expect(run.result).toBe('done');
    expect(closed).toBe(true);
    expect(toolMessages(run.transcript)[1]).toMatchObject({ toolCallId: 'c2', success: true });
  });

  it('stop_stream on a stream whose read is pending and whose return() is synchronous closes it', async () => {
    // With toolTimeoutMs the first batch ends at its deadline and the read carries over: the
    // stop then closes the stream without waiting on that read.
    let closed = false;
    let reads = 0;
    const tool = iteratorTool('stuck', () => ({
      next: () =>
        reads++ === 0 ? Promise.resolve({ done: false, value: 'first' }) : new Promise(() => {}),
      return: (() => {
        closed = true;
        return { done: true, value: undefined };
      }) as unknown as () => Promise<IteratorResult<unknown>>,
    }));
    const model = openThenStop('stuck');
    const run = await createChain({ model, tools: [tool], toolTimeoutMs: 30 }).invoke('go');
    expect(run.result).toBe('done');
    expect(closed).toBe(true);
    expect(toolMessages(run.transcript)[0]?.output).toMatchObject({ chunks: ['first'] });
    expect(toolMessages(run.transcript)[1]).toMatchObject({ toolCallId: 'c2', success: true });
  });

  it('a returnDirect stream cut off mid-read with a synchronous return() is a failed result', async () => {
    let closed = false;
    const tool = defineTool({
      name: 'direct',
      description: 'Streams the answer.',
      input: z.object({}),
      returnDirect: true,
      execute: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => new Promise(() => {}),
          return: () => {
            closed = true;
            return { done: true };
          },
        }),
      }),
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'direct', arguments: {} }] },
      { text: 'recovered' },
    ]);
    const run = await createChain({ model, tools: [tool], toolTimeoutMs: 30 }).invoke('go');
    expect(run.result).toBe('recovered');
    expect(closed).toBe(true);
    expect(toolMessages(run.transcript)[0]).toMatchObject({
      success: false,
      error: expect.stringContaining('timed out'),
    });
  });

  it('stop_stream on an iterator whose return() throws synchronously is a failed result', async () => {
    const tool = iteratorTool('throwing_return', () => ({
      next: endlessNext,
      return: () => {
        throw new Error('return refused');
      },
    }));
    const run = await createChain({ model: openThenStop('throwing_return'), tools: [tool] }).invoke(
      'go',
    );
    expect(run.result).toBe('done');
    expect(toolMessages(run.transcript)[1]).toMatchObject({
      success: false,
      error: expect.stringContaining('return refused'),
    });
  });

  it('closing streams at the end of a run never throws, whatever return() does', async () => {
    const syncReturn = iteratorTool('sync_return', () => ({
      next: endlessNext,
      return: (() => ({ done: true })) as unknown as () => Promise<IteratorResult<unknown>>,
    }));
    const throwingReturn = iteratorTool('throwing_return', () => ({
      next: endlessNext,
      return: () => {
        throw new Error('return refused');
      },
    }));
    const rejectingReturn = iteratorTool('rejecting_return', () => ({
      next: endlessNext,
      return: () => Promise.reject(new Error('return rejected')),
    }));
    const model = new ScriptedModel([
      {
        toolCalls: [
          { id: 'c1', name: 'sync_return', arguments: {} },
          { id: 'c2', name: 'throwing_return', arguments: {} },
          { id: 'c3', name: 'rejecting_return', arguments: {} },
        ],
      },
      { text: 'done' },
    ]);
    const run = await createChain({
      model,
      tools: [syncReturn, throwingReturn, rejectingReturn],
    }).invoke('go');
    expect(run.result).toBe('done');
  });

  it('a next() that throws synchronously ends the stream with an error chunk', async () => {
    const tool = iteratorTool('sync_throw', () => ({
      next: () => {
        throw new Error('next exploded');
      },
    }));
    const model = callThenEcho('sync_throw');
    const run = await createChain({ model, tools: [tool] }).invoke('go');
    expect(run.result).toBe('saw true');
    expect(toolMessages(run.transcript)[0]?.output).toMatchObject({
      done: true,
      chunks: [expect.stringContaining('next exploded')],
    });
  });

  it('a next() that returns a non-object ends the stream with an error chunk', async () => {
    const tool = iteratorTool('not_a_result', () => ({
      next: (() => Promise.resolve(42)) as unknown as () => Promise<IteratorResult<unknown>>,
    }));
    const model = callThenEcho('not_a_result');
    const run = await createChain({ model, tools: [tool] }).invoke('go');
    expect(run.result).toBe('saw true');
    expect(toolMessages(run.transcript)[0]?.output).toMatchObject({
      done: true,
      chunks: [expect.stringContaining('not an iterator result')],
    });
  });

  it('a returnDirect stream whose next() throws synchronously is a failed result', async () => {
    const tool = defineTool({
      name: 'direct',
      description: 'Streams the answer.',
      input: z.object({}),
      returnDirect: true,
      execute: () => ({
        [Symbol.asyncIterator]: () => ({
          next: () => {
            throw new Error('next exploded');
          },
        }),
      }),
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'direct', arguments: {} }] },
      { text: 'recovered' },
    ]);
    const run = await createChain({ model, tools: [tool] }).invoke('go');
    expect(run.result).toBe('recovered');
    expect(toolMessages(run.transcript)[0]).toMatchObject({
      success: false,
      error: expect.stringContaining('next exploded'),
    });
  });

  it('a returnDirect stream with BigInt items ends the run with them as decimal strings', async () => {
    const tool = defineTool({
      name: 'direct',
      description: 'Streams the answer.',
      input: z.object({}),
      returnDirect: true,
      execute: async function* () {
        yield 7n;
        yield { n: 8n };
      },
    });
    const model = new ScriptedModel([{ toolCalls: [{ id: 'c1', name: 'direct', arguments: {} }] }]);
    const run = await createChain({ model, tools: [tool] }).invoke('go');
    expect(JSON.parse(run.text)).toEqual(['7', { n: '8' }]);
  });
});

function localAdd() {
  const execute = vi.fn(({ a, b }: { a: number; b: number }) => a + b);
  const tool = defineTool({
    name: 'add',
    description: 'Adds two numbers (local).',
    input: z.object({ a: z.number(), b: z.number() }),
    execute,
  });
  return { tool, execute };
}

/** A remote listing `add` and `lookup`; `answer` decides what execute() resolves with. */
function remoteWith(
  answer: (call: ToolCall) => unknown,
  options: { shadowLocalTools?: boolean; names?: readonly string[] } = {},
) {
  const names = options.names ?? ['add', 'lookup'];
  const execute = vi.fn(async (call: ToolCall) => answer(call));
  const remote = {
    name: 'neural-1',
    ...(options.shadowLocalTools !== undefined && { shadowLocalTools: options.shadowLocalTools }),
    listTools: () =>
      names.map((name) => ({
        name,
        description: `${name} (remote)`,
        inputSchema: { type: 'object' as const },
      })),
    execute,
  } as RemoteToolExecutor;
  return { remote, execute };
}

const remoteResult = (output: unknown) => (call: ToolCall) => ({
  toolCallId: call.id,
  name: call.name,
  output,
  success: true,
});

describe('remote tools named like local ones (issue 13, C10)', () => {
  it('a collision is refused by default: the run ends with a ConfigError naming both', async () => {
    const { tool, execute: localExecute } = localAdd();
    const { remote, execute } = remoteWith(remoteResult('remote sum'));
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'done' },
    ]);
    const error = await rejectionOf(
      ConfigError,
      createChain({ model, tools: [tool], remote }).invoke('go'),
    );
    expect(error.code).toBe('TOOL_COLLISION');
    expect(error.option).toBe('remote');
    expect(error.message).toContain("'neural-1'");
    expect(error.message).toContain("'add'");
    expect(error.message).toContain('shadowLocalTools');
    // Refused before the model was offered either tool, so nothing ran.
    expect(model.requests).toHaveLength(0);
    expect(execute).not.toHaveBeenCalled();
    expect(localExecute).not.toHaveBeenCalled();
    expect(partialOf(error).transcript.map((m) => m.role)).toEqual(['user']);
    // The machine's own record says configuration, not the provider (guard isConfigurationError).
    const { output } = partialOf(error);
    expect(output.status === 'failed' && output.failure.code).toBe('CONFIG_ERROR');
  });

  it('a collision ends a stream with a CONFIG_ERROR final event, then the ToolCollisionError', async () => {
    const { tool } = localAdd();
    const { remote } = remoteWith(remoteResult('remote sum'));
    const model = new ScriptedModel([{ text: 'unused' }]);
    const { events, error } = await drain(
      createChain({ model, tools: [tool], remote }).stream('go'),
    );
    expect((error as ConfigError).code).toBe('TOOL_COLLISION');
    const final = events.at(-1);
    if (final?.type !== 'final') throw new Error('no final event');
    expect(final.output.status === 'failed' && final.output.failure.code).toBe('CONFIG_ERROR');
  });

  it('a remote tool named like a local returnDirect tool is refused too', async () => {
    const answer = defineTool({
      name: 'answer',
      description: 'Answers directly.',
      input: z.object({}),
      execute: () => 'local answer',
      returnDirect: true,
    });
    const { remote } = remoteWith(remoteResult('server text'), { names: ['answer'] });
    const model = new ScriptedModel([{ toolCalls: [{ id: 'c1', name: 'answer', arguments: {} }] }]);
    const error = await rejectionOf(
      ConfigError,
      createChain({ model, tools: [answer], remote }).invoke('go'),
    );
    expect(error.code).toBe('TOOL_COLLISION');
    expect(error.message).toContain("'answer'");
  });

  it('a collision found after connect() mid-run also ends the run with the ConfigError', async () => {
    const { tool } = localAdd();
    const { remote } = remoteWith(remoteResult('remote sum'));
    let connect: () => void = () => {};
    const hook = defineTool({
      name: 'connect_remote',
      description: 'Connects the remote.',
      input: z.object({}),
      execute: () => {
        connect();
        return 'connected';
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'connect_remote', arguments: {} }] },
      { text: 'done' },
    ]);
    const chain = createChain({ model, tools: [tool, hook] });
    connect = () => chain.connect(remote);
    const error = await rejectionOf(ConfigError, chain.invoke('go'));
    expect(error.code).toBe('TOOL_COLLISION');
    expect(model.requests).toHaveLength(1);
  });

  it('shadowLocalTools: true lets the remote run the calls of the name it shares', async () => {
    const { tool, execute: localExecute } = localAdd();
    const { remote, execute } = remoteWith(remoteResult('remote sum'), { shadowLocalTools: true });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [tool], remote }).invoke('go');
    expect(execute).toHaveBeenCalledOnce();
    expect(localExecute).not.toHaveBeenCalled();
    expect(model.requests[0]?.tools?.map((t) => t.description)).toEqual([
      'add (remote)',
      'lookup (remote)',
    ]);
    expect(toolMessages(run.transcript)[0]).toMatchObject({ output: 'remote sum', success: true });
  });
});

describe('a remote that gives no return falls back to the local registry (issue 13, C10)', () => {
  it.each([
    ['undefined', undefined],
    ['null', null],
    ['an object that is not a ToolResult', { answer: 3 }],
  ])('runs the local tool of that name when the remote resolves with %s', async (_, value) => {
    const { tool, execute: localExecute } = localAdd();
    const { remote, execute } = remoteWith(() => value, { shadowLocalTools: true });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [tool], remote }).invoke('go');
    expect(execute).toHaveBeenCalledOnce();
    expect(localExecute).toHaveBeenCalledOnce();
    expect(toolMessages(run.transcript)[0]).toMatchObject({ output: 3, success: true });
    // details() says who answered: the local registry.
    expect(run.details().toolCalls[0]?.executor).toBe('local');
  });

  it('keeps the failed result when no local tool has the name', async () => {
    const { tool } = localAdd();
    const { remote } = remoteWith(() => undefined, { shadowLocalTools: true });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: {} }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [tool], remote }).invoke('go');
    expect(toolMessages(run.transcript)[0]).toMatchObject({
      success: false,
      error: "Tool 'lookup' on neural-1 returned no result.",
    });
    expect(run.details().toolCalls[0]?.executor).toBe('neural-1');
  });

  it('a failed ToolResult from the remote is an answer, not "no return": no fallback', async () => {
    const { tool, execute: localExecute } = localAdd();
    const { remote } = remoteWith(
      (call) => ({
        toolCallId: call.id,
        name: call.name,
        output: null,
        success: false,
        error: 'busy',
      }),
      { shadowLocalTools: true },
    );
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }] },
      { text: 'done' },
    ]);
    const run = await createChain({ model, tools: [tool], remote }).invoke('go');
    expect(localExecute).not.toHaveBeenCalled();
    expect(toolMessages(run.transcript)[0]).toMatchObject({ success: false, error: 'busy' });
  });
});
