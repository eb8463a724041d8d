// SPEC C10: a remote tool executor is asked first for the tools it lists; the local registry
// is the fallback. connect/disconnect at run time. Every tool failure (exception, unknown
// tool, bad arguments, remote error) becomes a failed ToolResult the model sees; never a crash.
import {
  type Chain,
  createChain,
  defineTool,
  type RemoteToolExecutor,
  type ToolCall,
  type ToolResult,
} from 'statecraft';
import type { ToolSpec } from 'statecraft/model';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { messagesOf, toolMessages } from './helpers.js';

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

const remoteSpecs: ToolSpec[] = [
  {
    name: 'add',
    description: 'Adds two numbers (remote).',
    inputSchema: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } },
  },
  {
    name: 'lookup',
    description: 'Looks a word up (remote only).',
    inputSchema: { type: 'object', properties: { word: { type: 'string' } } },
  },
];

function fakeRemote(
  run: (call: ToolCall) => unknown = (call) => `remote ${call.name}`,
  specs: ToolSpec[] = remoteSpecs,
) {
  const signals: { signal: AbortSignal; abortedAtCall: boolean }[] = [];
  const execute = vi.fn(
    async (call: ToolCall, options: { readonly signal: AbortSignal }): Promise<ToolResult> => {
      signals.push({ signal: options.signal, abortedAtCall: options.signal.aborted });
      return { toolCallId: call.id, name: call.name, output: await run(call), success: true };
    },
  );
  const listTools = vi.fn(() => specs);
  // It shadows local tools of the same names on purpose (issue 13: refused unless asked for).
  const remote: RemoteToolExecutor = {
    name: 'neural-1',
    shadowLocalTools: true,
    listTools,
    execute,
  };
  return { remote, execute, listTools, signals };
}

/** A model that calls the given tools in one step, then answers. */
function oneStep(
  ...calls: { id: string; name: string; arguments?: unknown; argumentsText?: string }[]
) {
  return new ScriptedModel([{ toolCalls: calls }, { text: 'done' }]);
}

describe('remote tool executor (C10)', () => {
  it('is asked first for the tools it lists; the rest fall back to the local registry', async () => {
    const { tool, execute: localExecute } = localAdd();
    const multiply = defineTool({
      name: 'multiply',
      description: 'Multiplies.',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => a * b,
    });
    const { remote, execute } = fakeRemote((call) =>
      call.name === 'add' ? 'remote sum' : 'a definition',
    );
    const model = oneStep(
      { id: 'c1', name: 'add', arguments: { a: 1, b: 2 } },
      { id: 'c2', name: 'lookup', arguments: { word: 'chain' } },
      { id: 'c3', name: 'multiply', arguments: { a: 2, b: 3 } },
      { id: 'c4', name: 'nowhere', arguments: {} },
    );
    const run = await createChain({ model, tools: [tool, multiply], remote }).invoke('go');

    expect(localExecute).not.toHaveBeenCalled();
    expect(execute.mock.calls.map(([call]) => call.name)).toEqual(['add', 'lookup']);
    expect(execute.mock.calls[0]?.[0]).toMatchObject({ id: 'c1', arguments: { a: 1, b: 2 } });
    expect(toolMessages(run.transcript)).toEqual([
      expect.objectContaining({ toolCallId: 'c1', output: 'remote sum', success: true }),
      expect.objectContaining({ toolCallId: 'c2', output: 'a definition', success: true }),
      expect.objectContaining({ toolCallId: 'c3', output: 6, success: true }),
      expect.objectContaining({
        toolCallId: 'c4',
        success: false,
        error: expect.stringContaining("Unknown tool 'nowhere'"),
      }),
    ]);
  });

  it('passes an AbortSignal to the remote', async () => {
    const { remote, signals } = fakeRemote();
    await createChain({
      model: oneStep({ id: 'c1', name: 'lookup', arguments: {} }),
      remote,
    }).invoke('go');
    expect(signals).toHaveLength(1);
    expect(signals[0]?.signal).toBeInstanceOf(AbortSignal);
    expect(signals[0]?.abortedAtCall).toBe(false);
  });

  it('sends the remote tool specs to the model, local ones it does not shadow after them', async () => {
    const { tool } = localAdd();
    const multiply = defineTool({
      name: 'multiply',
      description: 'Multiplies.',
      input: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => a * b,
    });
    const { remote } = fakeRemote();
    const model = new ScriptedModel([{ text: 'hi' }]);
    await createChain({ model, tools: [tool, multiply], remote }).invoke('go');
    expect(model.requests[0]?.tools).toEqual([...remoteSpecs, multiply.spec]);
  });

  it('turns a remote exception into a failed result the model sees; the run goes on', async () => {
    const { remote } = fakeRemote(() => {
      throw new Error('connection reset');
    });
    const model = oneStep({ id: 'c1', name: 'lookup', arguments: { word: 'x' } });
    const run = await createChain({ model, remote }).invoke('go');
    const seen = toolMessages(messagesOf(model.requests[1]));
    expect(seen).toEqual([
      expect.objectContaining({
        toolCallId: 'c1',
        name: 'lookup',
        success: false,
        error: expect.stringContaining('connection reset'),
      }),
    ]);
    expect(seen[0]?.error).toContain('neural-1');
    expect(run.result).toBe('done');
  });

  it('falls back to the local registry when the remote cannot list its tools', async () => {
    const { tool, execute: localExecute } = localAdd();
    const remote: RemoteToolExecutor = {
      name: 'broken',
      listTools: () => {
        throw new Error('listing failed');
      },
      execute: vi.fn(),
    };
    const model = oneStep({ id: 'c1', name: 'add', arguments: { a: 2, b: 2 } });
    const run = await createChain({ model, tools: [tool], remote }).invoke('go');
    expect(localExecute).toHaveBeenCalledTimes(1);
    expect(remote.execute).not.toHaveBeenCalled();
    expect(toolMessages(run.transcript)[0]).toMatchObject({ output: 4, success: true });
    expect(model.requests[0]?.tools).toEqual([tool.spec]);
  });

  it('connect() and disconnect() switch the executor between runs', async () => {
    const { tool, execute: localExecute } = localAdd();
    const { remote, execute } = fakeRemote(() => 'remote sum');
    const scripted = new ScriptedModel((request, callIndex) =>
      callIndex % 2 === 0
        ? { toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }] }
        : { text: String(toolMessages(request.messages.toArray())[0]?.output) },
    );
    const chain: Chain<string> = createChain({ model: scripted, tools: [tool] });

    expect((await chain.invoke('one')).result).toBe('2');
    chain.connect(remote);
    expect((await chain.invoke('two')).result).toBe('remote sum');
    chain.disconnect();
    expect((await chain.invoke('three')).result).toBe('2');

    expect(localExecute).toHaveBeenCalledTimes(2);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(scripted.requests.map((r) => r.tools?.[0]?.description)).toEqual([
      'Adds two numbers (local).',
      'Adds two numbers (local).',
      'Adds two numbers (remote).',
      'Adds two numbers (remote).',
      'Adds two numbers (local).',
      'Adds two numbers (local).',
    ]);
  });

  it('a remote connected during a run is used from the next step on', async () => {
    const { remote, execute } = fakeRemote(() => 'defined');
    let chain: Chain<string> | undefined;
    const connect = defineTool({
      name: 'connect_remote',
      description: 'Connects the remote.',
      input: z.object({}),
      execute: () => {
        chain?.connect(remote);
        return 'connected';
      },
    });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'connect_remote', arguments: {} }] },
      { toolCalls: [{ id: 'c2', name: 'lookup', arguments: { word: 'x' } }] },
      { text: 'done' },
    ]);
    chain = createChain({ model, tools: [connect] });
    const run = await chain.invoke('go');
    expect(model.requests[0]?.tools?.map((t) => t.name)).toEqual(['connect_remote']);
    expect(model.requests[1]?.tools?.map((t) => t.name)).toEqual([
      'add',
      'lookup',
      'connect_remote',
    ]);
    expect(execute).toHaveBeenCalledTimes(1);
    expect(toolMessages(run.transcript)[1]).toMatchObject({ toolCallId: 'c2', output: 'defined' });
  });

  it('a remote result echoing another call id still answers the call it was asked for', async () => {
    const { remote } = fakeRemote();
    remote.execute = async (call) => ({
      toolCallId: 'someone-else',
      name: call.name,
      output: 'x',
      success: true,
    });
    const model = oneStep({ id: 'c1', name: 'lookup', arguments: {} });
    const run = await createChain({ model, remote }).invoke('go');
    expect(toolMessages(run.transcript)).toEqual([
      expect.objectContaining({ toolCallId: 'c1', name: 'lookup', output: 'x', success: true }),
    ]);
  });

  // Regression: a bug this test found at HEAD 29a55e2 (fixed since, in the working tree).
  // A remote whose execute() resolves to something that is not a ToolResult (here
  // `undefined`, e.g. a buggy MCP bridge) crashes the run with a ChainError "Cannot read
  // properties of undefined (reading 'success')" instead of becoming a failed ToolResult the
  // model sees (SPEC C10: "the loop never crashes on a tool error"). Input: remote.execute
  // resolves undefined for call 'c1'. Expected: run succeeds, the tool message for 'c1' has
  // success: false. Actual at HEAD: ChainError, run failed.
  // Cause at HEAD: src/tool-calls/run-tools.ts #dispatch returns `await remote.execute(...)` unchecked, and
  // execute() then reads `result.success` (the `settled` map) on it, which throws.
  it('a remote that answers with no ToolResult becomes a failed result, not a crash', async () => {
    const { remote } = fakeRemote();
    remote.execute = async () => undefined as unknown as ToolResult;
    const model = oneStep({ id: 'c1', name: 'lookup', arguments: {} });
    const run = await createChain({ model, remote }).invoke('go');
    expect(toolMessages(run.transcript)).toEqual([
      expect.objectContaining({ toolCallId: 'c1', success: false }),
    ]);
  });

  it('connect() rejects something that is not a remote executor', () => {
    const chain = createChain({ model: new ScriptedModel([]) });
    expect(() => chain.connect({ name: 'x' } as unknown as RemoteToolExecutor)).toThrow(TypeError);
  });
});

describe('tool failures are data (C10)', () => {
  const flaky = defineTool({
    name: 'flaky',
    description: 'Always throws.',
    input: z.object({}),
    execute: (): string => {
      throw new Error('disk on fire');
    },
  });
  const strict = defineTool({
    name: 'strict',
    description: 'Wants a positive count.',
    input: z.object({ count: z.number().int().positive() }),
    execute: ({ count }) => count,
  });

  it('exceptions, unknown tools, schema failures and unparseable arguments all reach the model', async () => {
    const model = new ScriptedModel([
      {
        toolCalls: [
          { id: 'e1', name: 'flaky', arguments: {} },
          { id: 'e2', name: 'teleport', arguments: { to: 'mars' } },
          { id: 'e3', name: 'strict', arguments: { count: -2 } },
          { id: 'e4', name: 'strict', argumentsText: '{"count": ' },
          { id: 'ok', name: 'strict', arguments: { count: 3 } },
        ],
      },
      { text: 'recovered' },
    ]);
    const run = await createChain({ model, tools: [flaky, strict] }).invoke('go');

    expect(run.result).toBe('recovered');
    const seen = toolMessages(messagesOf(model.requests[1]));
    expect(seen.map((r) => [r.toolCallId, r.success])).toEqual([
      ['e1', false],
      ['e2', false],
      ['e3', false],
      ['e4', false],
      ['ok', true],
    ]);
    expect(seen[0]?.error).toContain('disk on fire');
    expect(seen[1]?.error).toContain("Unknown tool 'teleport'");
    expect(seen[1]?.error).toContain('flaky');
    expect(seen[2]?.error).toContain('Invalid arguments');
    expect(seen[2]?.error).toContain('count');
    expect(seen[3]?.error).toMatch(/not valid JSON/);
    expect(seen[4]?.output).toBe(3);
    expect(run.steps[0]?.toolResults.filter((r) => !r.success)).toHaveLength(4);
  });

  it('an async tool that rejects with a non-Error value still becomes a failed result', async () => {
    const rejecting = defineTool({
      name: 'rejecting',
      description: 'Rejects with a string.',
      input: z.object({}),
      execute: async (): Promise<string> => Promise.reject('plain string reason'),
    });
    const model = oneStep({ id: 'r1', name: 'rejecting', arguments: {} });
    const run = await createChain({ model, tools: [rejecting] }).invoke('go');
    expect(toolMessages(run.transcript)[0]).toMatchObject({
      success: false,
      error: expect.stringContaining('plain string reason'),
    });
  });
});
