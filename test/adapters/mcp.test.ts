// SPEC X5 / C10: an MCP server as the chain's remote tool executor, tested against a real MCP
// server written with the same SDK (test/fixtures/mcp/server.ts), over stdio and over
// Streamable HTTP on 127.0.0.1.
import { resolve } from 'node:path';
import { AbortError, createChain, defineTool, type Message } from 'statecraft';
import { type McpExecutorOptions, McpToolExecutor } from 'statecraft/mcp';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { TERMINATE_SESSION_WAIT_MS } from '../../adapters/tools/mcp/transport.js';
import {
  type FixtureHttpServer,
  PIXEL_PNG,
  startHttpServer,
  TINY_PDF,
  UNSAFE_TOOL_NAMES,
} from '../fixtures/mcp/server.js';

const root = resolve('.');
const SERVER = resolve(root, 'test/fixtures/mcp/server.ts');
// The names the model sees: MCP names the providers reject come out renamed (see below).
const LONG_SAFE = UNSAFE_TOOL_NAMES.long.slice(0, 64);
const FIXTURE_TOOLS = [
  'add',
  'shout',
  'fail',
  'ping',
  'picture',
  'slow',
  'status',
  'files_read_2',
  LONG_SAFE,
  'files_read',
  'unlock',
];

const executors: McpToolExecutor[] = [];
const httpServers: FixtureHttpServer[] = [];

afterEach(async () => {
  await Promise.allSettled(executors.splice(0).map((e) => e.close()));
  await Promise.allSettled(httpServers.splice(0).map((s) => s.close()));
});

const connectors = {
  stdio: async (options: McpExecutorOptions = {}) =>
    track(
      await McpToolExecutor.connect({
        ...options,
        transport: {
          type: 'stdio',
          command: process.execPath,
          args: ['--import', 'tsx', SERVER],
          cwd: root,
        },
      }),
    ),
  http: async (options: McpExecutorOptions = {}) => {
    const server = await startHttpServer();
    httpServers.push(server);
    return track(
      await McpToolExecutor.connect({ ...options, transport: { type: 'http', url: server.url } }),
    );
  },
};

function track(executor: McpToolExecutor): McpToolExecutor {
  executors.push(executor);
  return executor;
}

const NEVER = new AbortController().signal;
const call = (name: string, args: unknown = {}, id = `call_${name}`) => ({
  id,
  name,
  arguments: args,
});

function toolMessages(transcript: readonly Message[]) {
  return transcript.filter((m): m is Extract<Message, { role: 'tool' }> => m.role === 'tool');
}

async function cancelledCount(executor: McpToolExecutor): Promise<number> {
  const result = await executor.execute(call('status'), { signal: NEVER });
  return (result.output as { cancelled: number }).cancelled;
}

// Every stdio test starts a server process (node + tsx + the SDK): about a second when the
// machine is idle, several when it is busy. The waits below allow for that.
const SPAWNING = { timeout: 20_000 };
const WAIT = { timeout: 5_000 };

describe.each(Object.keys(connectors) as (keyof typeof connectors)[])(
  'MCP over %s',
  SPAWNING,
  (kind) => {
    const connect = connectors[kind];

    it('lists the server tools as ToolSpecs: names, descriptions, JSON Schemas', async () => {
      const executor = await connect();
      expect(executor.name).toBe('mcp:statecraft-fixture');
      const specs = await executor.listTools();
      expect(specs.map((t) => t.name)).toEqual(FIXTURE_TOOLS);
      const add = specs.find((t) => t.name === 'add');
      expect(add?.description).toBe('Adds two numbers.');
      expect(add?.inputSchema).toMatchObject({
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      });
      expect(specs.find((t) => t.name === 'fail')?.inputSchema).toMatchObject({ type: 'object' });
      // ping has no description on the server: the model still gets a sentence naming it.
      expect(specs.find((t) => t.name === 'ping')?.description).toBe(
        "Tool 'ping' of the MCP server 'statecraft-fixture'.",
      );
    });

    it('offers tools whose MCP names providers reject under safe names, and runs them by their own', async () => {
      const executor = await connect();
      const names = (await executor.listTools()).map((t) => t.name);
      // What OpenAI and Anthropic accept; one other name fails the whole model request.
      for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
      expect(new Set(names).size).toBe(names.length);
      // 'files.read' would become 'files_read', which the server also lists: that one keeps
      // its name and the renamed tool takes a suffix.
      expect(names).toEqual(expect.arrayContaining(['files_read', 'files_read_2', LONG_SAFE]));
      expect(names).not.toContain(UNSAFE_TOOL_NAMES.dotted);
      expect(names).not.toContain(UNSAFE_TOOL_NAMES.long);

      const run = (name: string) => executor.execute(call(name), { signal: NEVER });
      expect(await run('files_read_2')).toEqual({
        toolCallId: 'call_files_read_2',
        name: 'files_read_2',
        output: UNSAFE_TOOL_NAMES.dotted,
        success: true,
      });
      expect(await run(LONG_SAFE)).toMatchObject({ output: UNSAFE_TOOL_NAMES.long, success: true });
      expect(await run('files_read')).toMatchObject({
        output: UNSAFE_TOOL_NAMES.clashing,
        success: true,
      });
      // The server's own name still works for a caller that has it.
      expect(await run(UNSAFE_TOOL_NAMES.dotted)).toMatchObject({
        output: UNSAFE_TOOL_NAMES.dotted,
        success: true,
      });
    });

    it('executes calls: structured and text results succeed, isError results fail', async () => {
      const executor = await connect();
      const run = (name: string, args?: unknown) =>
        executor.execute(call(name, args), { signal: NEVER });

      expect(await run('add', { a: 2, b: 3 })).toEqual({
        toolCallId: 'call_add',
        name: 'add',
        output: { sum: 5 },
        success: true,
      });
      expect(await run('shout', { text: 'hello' })).toMatchObject({
        output: 'HELLO',
        success: true,
      });
      expect(await run('fail')).toEqual({
        toolCallId: 'call_fail',
        name: 'fail',
        output: null,
        success: false,
        error: 'The disk is full.',
      });
      // Images and binary resources come back as attachments (they reach the model with the
      // result); the text says where each stood, and other content is described, not dropped.
      const picture = await run('picture');
      expect(picture.output).toBe(
        [
          'Here is the chart.',
          '[image image/png, 68 bytes, attached]',
          '[resource link report: file:///tmp/report.csv]',
          '[resource memo://note (text/plain)]',
          'A note.',
          '[resource file:///tmp/chart.pdf (application/pdf), 9 bytes, attached]',
        ].join('\n'),
      );
      expect(picture.attachments).toEqual([
        { mediaType: 'image/png', data: PIXEL_PNG },
        { mediaType: 'application/pdf', data: TINY_PDF, name: 'chart.pdf' },
      ]);
      // The server validates arguments against its schema and answers with isError.
      const invalid = await run('add', { a: 'two' });
      expect(invalid.success).toBe(false);
      expect(invalid.error).toMatch(/Invalid arguments for tool add/);
    });

    it('refuses arguments that are not a JSON object without asking the server', async () => {
      const executor = await connect();
      const unparsed = await executor.execute(
        { id: 'c1', name: 'add', arguments: '{"a": 1', argumentsError: 'Unexpected end of JSON' },
        { signal: NEVER },
      );
      expect(unparsed).toMatchObject({
        success: false,
        error: expect.stringContaining('not valid JSON'),
      });
      const array = await executor.execute(call('add', [1, 2]), { signal: NEVER });
      expect(array).toMatchObject({
        success: false,
        error: expect.stringContaining('JSON object'),
      });
    });

    it('runs in a chain: MCP tools remotely, the rest from the local registry (C10)', async () => {
      // The server's `add` replaces the local one only because shadowLocalTools says so.
      const executor = await connect({ shadowLocalTools: true });
      const localAdd = vi.fn(({ a, b }: { a: number; b: number }) => a + b);
      const multiply = vi.fn(({ a, b }: { a: number; b: number }) => a * b);
      const tools = [
        defineTool({
          name: 'add',
          description: 'Adds (local; the MCP server shadows it).',
          input: z.object({ a: z.number(), b: z.number() }),
          execute: localAdd,
        }),
        defineTool({
          name: 'multiply',
          description: 'Multiplies two numbers.',
          input: z.object({ a: z.number(), b: z.number() }),
          execute: multiply,
        }),
      ];
      const model = new ScriptedModel([
        {
          toolCalls: [
            { id: 'c1', name: 'add', arguments: { a: 20, b: 22 } },
            { id: 'c2', name: 'multiply', arguments: { a: 6, b: 7 } },
            { id: 'c3', name: 'fail', arguments: {} },
          ],
        },
        { text: 'The answer is 42.' },
      ]);
      const run = await createChain({ model, tools, remote: executor }).invoke('What is 20 + 22?');

      expect(run.result).toBe('The answer is 42.');
      expect(model.requests[0]?.tools?.map((t) => t.name)).toEqual([...FIXTURE_TOOLS, 'multiply']);
      expect(model.requests[0]?.tools?.[0]?.description).toBe('Adds two numbers.');
      expect(localAdd).not.toHaveBeenCalled();
      expect(multiply).toHaveBeenCalledOnce();
      expect(toolMessages(run.transcript)).toEqual([
        expect.objectContaining({ toolCallId: 'c1', output: { sum: 42 }, success: true }),
        expect.objectContaining({ toolCallId: 'c2', output: 42, success: true }),
        expect.objectContaining({ toolCallId: 'c3', success: false, error: 'The disk is full.' }),
      ]);
      // The model saw the MCP results in its next request.
      expect(toolMessages(model.requests[1]?.messages.toArray() ?? [])).toHaveLength(3);
      model.assertComplete();
    });

    it('cancels a running call on abort, promptly, and the server sees the cancellation', async () => {
      const executor = await connect();
      const controller = new AbortController();
      const started = Date.now();
      setTimeout(() => controller.abort(), 150);
      const error = await executor
        .execute(call('slow', { ms: 20_000 }), { signal: controller.signal })
        .catch((e: unknown) => e);
      expect(AbortError.isInstance(error)).toBe(true);
      expect(Date.now() - started).toBeLessThan(2_000);
      // MCP's notifications/cancelled reached the tool on the server.
      await vi.waitFor(async () => expect(await cancelledCount(executor)).toBe(1), WAIT);
    });

    it("ends a chain run's slow MCP call at toolTimeoutMs with a failed result", async () => {
      const executor = await connect();
      const model = new ScriptedModel([
        { toolCalls: [{ id: 'c1', name: 'slow', arguments: { ms: 20_000 } }] },
        { text: 'gave up' },
      ]);
      const started = Date.now();
      const run = await createChain({ model, remote: executor, toolTimeoutMs: 200 }).invoke('go');
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(toolMessages(run.transcript)).toEqual([
        expect.objectContaining({
          toolCallId: 'c1',
          success: false,
          error: expect.stringContaining('timed out after 200 ms'),
        }),
      ]);
      await vi.waitFor(async () => expect(await cancelledCount(executor)).toBe(1), WAIT);
    });

    it('ends a chain run promptly when the run is aborted during an MCP call', async () => {
      const executor = await connect();
      const model = new ScriptedModel([
        { toolCalls: [{ id: 'c1', name: 'slow', arguments: { ms: 20_000 } }] },
        { text: 'never' },
      ]);
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 150);
      const started = Date.now();
      const error = await createChain({ model, remote: executor })
        .invoke('go', { signal: controller.signal })
        .catch((e: unknown) => e);
      expect(AbortError.isInstance(error)).toBe(true);
      expect(Date.now() - started).toBeLessThan(2_000);
      await vi.waitFor(async () => expect(await cancelledCount(executor)).toBe(1), WAIT);
    });

    it('refreshes its cached listing when the server sends tools/list_changed', async () => {
      const executor = await connect();
      expect((await executor.listTools()).map((t) => t.name)).not.toContain('secret');
      expect(await executor.execute(call('unlock'), { signal: NEVER })).toMatchObject({
        output: 'unlocked',
      });
      await vi.waitFor(
        async () => expect((await executor.listTools()).map((t) => t.name)).toContain('secret'),
        WAIT,
      );
      expect(await executor.execute(call('secret'), { signal: NEVER })).toMatchObject({
        output: 'statecharts',
        success: true,
      });
    });

    it('refuses work after close(); closing twice is harmless', async () => {
      const executor = await connect();
      await executor.close();
      await executor.close();
      await expect(executor.listTools()).rejects.toThrow(/closed/);
      await expect(
        executor.execute(call('add', { a: 1, b: 1 }), { signal: NEVER }),
      ).rejects.toThrow(/closed/);
    });
  },
);

describe('MCP over stdio: the child process', SPAWNING, () => {
  it('close() ends the server process', async () => {
    const executor = await connectors.stdio();
    const status = await executor.execute(call('status'), { signal: NEVER });
    const { pid } = status.output as { pid: number };
    expect(isAlive(pid)).toBe(true);
    await executor.close();
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), WAIT);
  });

  it('close() ends a server process that is busy with a call', async () => {
    const executor = await connectors.stdio();
    const { pid } = (await executor.execute(call('status'), { signal: NEVER })).output as {
      pid: number;
    };
    const pending = executor.execute(call('slow', { ms: 60_000 }), { signal: NEVER });
    pending.catch(() => {});
    await new Promise((r) => setTimeout(r, 100));
    await executor.close();
    await expect(pending).rejects.toThrow();
    await vi.waitFor(() => expect(isAlive(pid)).toBe(false), WAIT);
  });

  it('passes env and names the executor as asked', async () => {
    const executor = track(
      await McpToolExecutor.connect({
        name: 'fixture',
        transport: {
          type: 'stdio',
          command: process.execPath,
          args: ['--import', 'tsx', SERVER],
          cwd: root,
          env: { STATECRAFT_FIXTURE: '1' },
          stderr: 'ignore',
        },
      }),
    );
    expect(executor.name).toBe('fixture');
    expect((await executor.listTools()).length).toBe(FIXTURE_TOOLS.length);
    const status = await executor.execute(call('status'), { signal: NEVER });
    expect(status.output).toMatchObject({ env: '1' });
  });

  it('does not pass on variables it was not asked to', async () => {
    // The SDK starts the server with a safe default environment, not this process's.
    vi.stubEnv('STATECRAFT_FIXTURE', 'leaked');
    try {
      const executor = await connectors.stdio();
      const status = await executor.execute(call('status'), { signal: NEVER });
      expect(status.output).toMatchObject({ env: null });
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('MCP over Streamable HTTP: the session', () => {
  it('sends the configured headers and ends its session on close()', async () => {
    const server = await startHttpServer();
    httpServers.push(server);
    const executor = track(
      await McpToolExecutor.connect({
        transport: { type: 'http', url: server.url.href, headers: { authorization: 'Bearer t0k' } },
      }),
    );
    await executor.listTools();
    expect(server.requestHeaders.length).toBeGreaterThan(0);
    expect(server.requestHeaders.every((h) => h.authorization === 'Bearer t0k')).toBe(true);
    expect(server.sessions()).toHaveLength(1);
    await executor.close();
    await vi.waitFor(() => expect(server.sessions()).toHaveLength(0), WAIT);
  });

  it('close() returns even when the server never answers the DELETE that ends the session', async () => {
    const server = await startHttpServer({ ignoreDelete: true });
    httpServers.push(server);
    const executor = track(
      await McpToolExecutor.connect({ transport: { type: 'http', url: server.url } }),
    );
    await executor.listTools();
    expect(server.sessions()).toHaveLength(1);
    // A safety bound far above the executor's own, so a slow machine cannot fail this; without
    // the executor's bound close() never settles.
    const HUNG = Symbol('hung');
    let timer: ReturnType<typeof setTimeout> | undefined;
    const outcome = await Promise.race([
      executor.close().then(() => 'closed'),
      new Promise<symbol>((resolve) => {
        timer = setTimeout(() => resolve(HUNG), TERMINATE_SESSION_WAIT_MS + 8_000);
      }),
    ]);
    clearTimeout(timer);
    expect(outcome).toBe('closed');
    // It did ask: the DELETE reached the server, which left it unanswered.
    expect(server.requestMethods).toContain('DELETE');
  }, 20_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
