// The MCP executor's edges on a real SDK client and server connected in memory: pagination,
// the listing cache, wrapping an existing Client, option checks and connection failures.
import { getEventListeners } from 'node:events';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AbortError, ConfigError, createChain, defineTool } from 'statecraft';
import { McpConnectionError, type McpExecutorOptions, McpToolExecutor } from 'statecraft/mcp';
import { ScriptedModel } from 'statecraft/testing';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';

const EMPTY = { type: 'object' as const, properties: {} };
const tool = (name: string, extra: Partial<Tool> = {}): Tool => ({
  name,
  inputSchema: EMPTY,
  ...extra,
});

/** A low-level SDK server that serves `pages` of tools, one per cursor. */
function pagedServer(pages: Tool[][], cursorOf = (page: number) => `page-${page}`) {
  const server = new Server(
    { name: 'paged', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  );
  server.setRequestHandler(ListToolsRequestSchema, (request) => {
    const cursor = request.params?.cursor;
    const page = cursor === undefined ? 0 : Number(cursor.replace('page-', ''));
    const next = page + 1 < pages.length ? cursorOf(page + 1) : undefined;
    return { tools: pages[page] ?? [], ...(next ? { nextCursor: next } : {}) };
  });
  server.setRequestHandler(CallToolRequestSchema, (request) => ({
    content: [{ type: 'text', text: `ran ${request.params.name}` }],
  }));
  return server;
}

const opened: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.allSettled(opened.splice(0).map((o) => o.close()));
});

async function inMemory(server: Server, options?: McpExecutorOptions) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  const executor = McpToolExecutor.fromClient(client, options);
  opened.push(executor, server);
  return { client, executor };
}

const NEVER = new AbortController().signal;

describe('McpToolExecutor on an existing Client', () => {
  it('follows nextCursor through every page and leaves out task-only tools', async () => {
    const server = pagedServer([
      [tool('a', { description: 'A.' }), tool('b', { title: 'The B tool' })],
      [tool('c', { annotations: { title: 'C by annotation' } })],
      [tool('d', { description: 'D.', execution: { taskSupport: 'required' } }), tool('e')],
    ]);
    const { executor } = await inMemory(server);
    const specs = await executor.listTools();
    expect(specs.map((t) => [t.name, t.description])).toEqual([
      ['a', 'A.'],
      ['b', 'The B tool'],
      ['c', 'C by annotation'],
      ['e', "Tool 'e' of the MCP server 'paged'."],
    ]);
    expect(executor.name).toBe('mcp:paged');
  });

  it('renames a tool so it never takes a name listed on a later page, and runs it by its own', async () => {
    const server = pagedServer([[tool('files.read')], [tool('files_read')]]);
    const { executor } = await inMemory(server);
    expect((await executor.listTools()).map((t) => t.name)).toEqual(['files_read_2', 'files_read']);
    const run = (name: string) =>
      executor.execute({ id: 'c1', name, arguments: {} }, { signal: NEVER });
    expect(await run('files_read_2')).toMatchObject({
      name: 'files_read_2',
      output: 'ran files.read',
    });
    expect(await run('files_read')).toMatchObject({ output: 'ran files_read' });
  });

  it('rejects a listing whose cursor repeats instead of looping forever', async () => {
    const server = pagedServer([[tool('a')], [tool('b')], [tool('c')]], () => 'page-1');
    const { executor } = await inMemory(server);
    await expect(executor.listTools()).rejects.toThrow(/repeated the tool list cursor 'page-1'/);
  });

  it('caches the listing, shares one request between concurrent callers, and lists again after tools/list_changed', async () => {
    const server = pagedServer([[tool('a')]]);
    const { client, executor } = await inMemory(server);
    const listTools = vi.spyOn(client, 'listTools');
    const [first, second] = await Promise.all([executor.listTools(), executor.listTools()]);
    expect(first).toBe(second);
    expect(await executor.listTools()).toBe(first);
    expect(listTools).toHaveBeenCalledTimes(1);

    await server.sendToolListChanged();
    await vi.waitFor(async () => {
      await executor.listTools();
      expect(listTools).toHaveBeenCalledTimes(2);
    });
  });

  it('stops waiting for a listing on abort, with an AbortError', async () => {
    const server = new Server({ name: 'stuck', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, () => new Promise(() => {}));
    const { executor } = await inMemory(server);
    const controller = new AbortController();
    const listing = executor.listTools({ signal: controller.signal });
    controller.abort();
    await expect(listing).rejects.toSatisfy((e) => AbortError.isInstance(e));
  });

  it('leaves no abort listener on the caller signal after each call', async () => {
    const { executor } = await inMemory(pagedServer([[tool('a')]]));
    await executor.listTools();
    const signal = new AbortController().signal;
    for (let i = 0; i < 20; i++) {
      expect(
        await executor.execute({ id: `c${i}`, name: 'a', arguments: {} }, { signal }),
      ).toMatchObject({ output: 'ran a', success: true });
    }
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('closes the client it wraps', async () => {
    const { client, executor } = await inMemory(pagedServer([[tool('a')]]));
    const close = vi.spyOn(client, 'close');
    await executor.close();
    expect(close).toHaveBeenCalledOnce();
    await expect(
      executor.execute({ id: 'c1', name: 'a', arguments: {} }, { signal: NEVER }),
    ).rejects.toThrow(/closed/);
  });

  it('refuses something that is not a Client', () => {
    expect(() => McpToolExecutor.fromClient({} as Client)).toThrow(
      expect.objectContaining({ option: 'client' }),
    );
  });
});

describe('McpToolExecutor.connect options', () => {
  const stdio = { type: 'stdio', command: 'node' } as const;
  const cases: [string, unknown][] = [
    ['options', undefined],
    ['transport', {}],
    ['transport.type', { transport: { type: 'sse', url: 'http://127.0.0.1' } }],
    ['transport.command', { transport: { type: 'stdio', command: '' } }],
    ['transport.args', { transport: { ...stdio, args: 'server.js' } }],
    ['transport.env', { transport: { ...stdio, env: { PORT: 3000 } } }],
    ['transport.cwd', { transport: { ...stdio, cwd: 42 } }],
    ['transport.stderr', { transport: { ...stdio, stderr: 'loud' } }],
    ['transport.url', { transport: { type: 'http', url: 'not a url' } }],
    ['transport.url', { transport: { type: 'http', url: 'ftp://127.0.0.1/mcp' } }],
    ['transport.headers', { transport: { type: 'http', url: 'http://x', headers: [] } }],
    ['name', { name: '', transport: stdio }],
    ['requestTimeoutMs', { requestTimeoutMs: -1, transport: stdio }],
    ['clientInfo', { clientInfo: { name: 'x' }, transport: stdio }],
    ['signal', { signal: 'stop', transport: stdio }],
  ];
  it.each(cases)('names `%s` when it is wrong', async (option, options) => {
    const error = await McpToolExecutor.connect(options as never).catch((e: unknown) => e);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ option });
  });
});

describe('McpToolExecutor options: every problem at once, unknown keys named (SPEC Q4)', () => {
  // A command that cannot start: were an option let through, connect() fails fast, not hangs.
  const stdio = { type: 'stdio', command: '/nonexistent/mcp-server' } as const;

  it('refuses an unknown key with the nearest known name', async () => {
    const error = await McpToolExecutor.connect({
      transport: stdio,
      requestTimeoutMS: 1000,
    } as never).catch((e: unknown) => e);
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ option: 'requestTimeoutMS' });
    expect((error as Error).message).toContain('did you mean `requestTimeoutMs`?');
  });

  it('reports every problem of connect() in one ConfigError, transport keys included', async () => {
    const error = (await McpToolExecutor.connect({
      name: '',
      shadowLocalTool: true,
      transport: { type: 'stdio', command: '', arg: ['x'], stderr: 'loud' },
      signal: 'stop',
    } as never).catch((e: unknown) => e)) as ConfigError;
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error.problems.map((p) => p.option)).toEqual([
      'shadowLocalTool',
      'name',
      'transport.arg',
      'transport.command',
      'transport.stderr',
      'signal',
    ]);
    expect(error.message).toContain('6 invalid options for McpToolExecutor.connect');
    expect(error.message).toContain('did you mean `shadowLocalTools`?');
    expect(error.message).toContain('did you mean `transport.args`?');
    // The single-problem wording is kept for each.
    expect(error.problems[1]?.message).toContain('must be a non-empty string');
  });

  it('refuses unknown keys of an http transport and of fromClient', async () => {
    const http = await McpToolExecutor.connect({
      transport: { type: 'http', url: 'http://127.0.0.1:1/mcp', header: {} },
    } as never).catch((e: unknown) => e);
    expect(http).toMatchObject({ option: 'transport.header' });
    expect((http as Error).message).toContain('did you mean `transport.headers`?');
    const client = new Client({ name: 'test', version: '1.0.0' });
    expect(() => McpToolExecutor.fromClient(client, { nmae: 'x' } as never)).toThrow(
      /nmae.*did you mean `name`\?/,
    );
  });

  it('shadowLocalTools must be a boolean', async () => {
    const error = await McpToolExecutor.connect({
      transport: stdio,
      shadowLocalTools: 'yes',
    } as never).catch((e: unknown) => e);
    expect(error).toMatchObject({ option: 'shadowLocalTools' });
  });
});

describe('MCP tools named like local tools (issue 13, C10)', () => {
  const localAdd = () => {
    const execute = vi.fn(() => 'local sum');
    return {
      execute,
      tool: defineTool({
        name: 'a',
        description: 'Local a.',
        input: z.object({}),
        execute,
      }),
    };
  };
  const callA = () =>
    new ScriptedModel([{ toolCalls: [{ id: 'c1', name: 'a', arguments: {} }] }, { text: 'done' }]);

  it('are refused by default: the run ends with a ConfigError naming the server and the tool', async () => {
    const { executor } = await inMemory(pagedServer([[tool('a'), tool('b')]]));
    expect(executor.shadowLocalTools).toBe(false);
    const { tool: local, execute } = localAdd();
    const model = callA();
    const error = (await createChain({ model, tools: [local], remote: executor })
      .invoke('go')
      .catch((e: unknown) => e)) as ConfigError;
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error.code).toBe('TOOL_COLLISION');
    expect(error.message).toContain("'mcp:paged'");
    expect(error.message).toContain("'a'");
    expect(model.requests).toHaveLength(0);
    expect(execute).not.toHaveBeenCalled();
  });

  it("take the local tool's place with shadowLocalTools: true", async () => {
    const { executor } = await inMemory(pagedServer([[tool('a')]]), { shadowLocalTools: true });
    expect(executor.shadowLocalTools).toBe(true);
    const { tool: local, execute } = localAdd();
    const run = await createChain({ model: callA(), tools: [local], remote: executor }).invoke(
      'go',
    );
    expect(execute).not.toHaveBeenCalled();
    expect(run.transcript.find((m) => m.role === 'tool')).toMatchObject({
      output: 'ran a',
      success: true,
    });
  });
});

describe('McpToolExecutor.connect failures', () => {
  it('reports a server command that cannot start as McpConnectionError', async () => {
    const error = await McpToolExecutor.connect({
      transport: { type: 'stdio', command: '/nonexistent/mcp-server' },
    }).catch((e: unknown) => e);
    expect(McpConnectionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain('/nonexistent/mcp-server');
  });

  it('reports an HTTP server that does not answer as McpConnectionError', async () => {
    const { createServer } = await import('node:net');
    // A port that was free a moment ago: nothing listens there now.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const error = await McpToolExecutor.connect({
      transport: { type: 'http', url: `http://127.0.0.1:${port}/mcp` },
    }).catch((e: unknown) => e);
    expect(McpConnectionError.isInstance(error)).toBe(true);
    expect((error as Error).message).toContain(`127.0.0.1:${port}`);
  });

  it('gives up connecting when its signal aborts, and the process it started is gone', async () => {
    // Not an MCP server: it never answers and ignores its stdin closing, so only the SDK's
    // SIGTERM ends it. The rejection must come after that, not leave it running.
    const dir = await mkdtemp(join(tmpdir(), 'statecraft-mcp-'));
    const pidFile = join(dir, 'pid');
    try {
      const error = await McpToolExecutor.connect({
        transport: {
          type: 'stdio',
          command: process.execPath,
          args: [
            '-e',
            "require('fs').writeFileSync(process.argv[1], String(process.pid)); setInterval(() => {}, 1000)",
            pidFile,
          ],
        },
        signal: AbortSignal.timeout(500),
      }).catch((e: unknown) => e);
      expect(AbortError.isInstance(error)).toBe(true);
      expect(isAlive(Number(await readFile(pidFile, 'utf8')))).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 15_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
