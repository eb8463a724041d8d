import { ConfigError, defineTool, type ToolCall, type ToolContext } from 'statecraft';
import { parseToolArguments } from 'statecraft/model';
import { LocalToolRegistry, runTool } from 'statecraft/tools';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { thrownBy } from './support/errors.js';

const configErrorOf = (fn: () => unknown) => thrownBy(ConfigError, fn);

function expectConfigError(fn: () => unknown, option: string): ConfigError {
  const error = configErrorOf(fn);
  expect(error.option).toBe(option);
  expect(error.message).toContain(`\`${option}\``);
  return error;
}

const validDefinition = {
  name: 'read_file',
  description: 'Reads a file',
  input: z.object({ path: z.string() }),
  execute: () => 'ok',
};

function call(name: string, args: unknown, id = 'call_1'): ToolCall {
  return { id, name, arguments: args };
}

describe('defineTool', () => {
  it('derives the JSON Schema of the input from zod', () => {
    const tool = defineTool({
      name: 'search',
      description: 'Searches the web',
      input: z.object({
        query: z.string().describe('What to look for'),
        limit: z.number().int().optional(),
      }),
      execute: () => [],
    });
    const schema = tool.inputSchema as {
      type: string;
      properties: Record<string, { type: string; description?: string }>;
      required: string[];
    };
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties).sort()).toEqual(['limit', 'query']);
    expect(schema.properties.query?.type).toBe('string');
    expect(schema.properties.query?.description).toBe('What to look for');
    expect(schema.properties.limit?.type).toBe('integer');
    expect(schema.required).toEqual(['query']);
    // Several providers reject unknown top-level keys such as $schema.
    expect(tool.inputSchema).not.toHaveProperty('$schema');
    expect(tool.spec).toEqual({
      name: 'search',
      description: 'Searches the web',
      inputSchema: tool.inputSchema,
    });
    expect(Object.isFrozen(tool)).toBe(true);
  });

  it('keeps the definition options on the tool', () => {
    const execute = () => 'ok';
    const tool = defineTool({
      ...validDefinition,
      execute,
      returnDirect: true,
      duplicateCallWarn: true,
      bestPractices: ['Read before you write'],
    });
    expect(tool.name).toBe('read_file');
    expect(tool.execute).toBe(execute);
    expect(tool.returnDirect).toBe(true);
    expect(tool.duplicateCallWarn).toBe(true);
    expect(tool.bestPractices).toEqual(['Read before you write']);
  });

  it('accepts names made of letters, digits, _ and - up to 64 characters', () => {
    for (const name of ['a', 'read_file-2', 'X'.repeat(64)]) {
      expect(defineTool({ ...validDefinition, name }).name).toBe(name);
    }
  });

  it.each([
    ['an empty name', ''],
    ['a space', 'read file'],
    ['a dot', 'fs.read'],
    ['65 characters', 'a'.repeat(65)],
    ['a non-string', 42],
  ])('rejects a name with %s, naming the option', (_label, name) => {
    const error = expectConfigError(
      () => defineTool({ ...validDefinition, name: name as string }),
      'name',
    );
    expect(error.message).toContain(JSON.stringify(name));
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['missing', undefined],
  ])('rejects a %s description, naming the option and the tool', (_label, description) => {
    const error = expectConfigError(
      () => defineTool({ ...validDefinition, description: description as string }),
      'description',
    );
    expect(error.message).toContain("tool 'read_file'");
  });

  it.each([
    ['a JSON Schema object', { type: 'object', properties: { path: { type: 'string' } } }],
    ['undefined', undefined],
    ['a string', 'z.object()'],
  ])('rejects %s as input: only zod schemas are accepted', (_label, input) => {
    const error = expectConfigError(
      () => defineTool({ ...validDefinition, input: input as unknown as z.ZodObject }),
      'input',
    );
    expect(error.message).toContain('zod');
  });

  it.each([
    ['a string schema', z.string(), '"string"'],
    ['an array schema', z.array(z.string()), '"array"'],
  ])('rejects %s as input: providers pass arguments as an object', (_label, input, type) => {
    const error = expectConfigError(
      () => defineTool({ ...validDefinition, input: input as unknown as z.ZodObject }),
      'input',
    );
    expect(error.message).toContain('object schema');
    expect(error.message).toContain(type);
  });

  it('rejects a missing execute function', () => {
    expectConfigError(
      () => defineTool({ ...validDefinition, execute: undefined as unknown as () => string }),
      'execute',
    );
    expectConfigError(
      () => defineTool({ ...validDefinition, execute: 'run' as unknown as () => string }),
      'execute',
    );
  });

  it.each([
    ['a string', 'Read before you write'],
    ['an array with a non-string', ['ok', 1]],
    ['an object', { tip: 'x' }],
  ])('rejects bestPractices given as %s', (_label, bestPractices) => {
    expectConfigError(
      () =>
        defineTool({
          ...validDefinition,
          bestPractices: bestPractices as unknown as string[],
        }),
      'bestPractices',
    );
  });

  // z.date(), z.bigint() and the like have no JSON Schema form: a ConfigError on `input`.
  it('reports an input schema that has no JSON Schema as a ConfigError on `input`', () => {
    const error = expectConfigError(
      () =>
        defineTool({
          ...validDefinition,
          input: z.object({ at: z.coerce.date() }),
        }),
      'input',
    );
    expect(error.message).toContain("tool 'read_file'");
  });
});

describe('LocalToolRegistry', () => {
  const alpha = defineTool({ ...validDefinition, name: 'alpha' });
  const beta = defineTool({ ...validDefinition, name: 'beta' });

  it('holds tools by name and lists their specs in registration order', () => {
    const registry = new LocalToolRegistry([beta, alpha]);
    expect(registry.size).toBe(2);
    expect(registry.has('alpha')).toBe(true);
    expect(registry.has('gamma')).toBe(false);
    expect(registry.get('beta')).toBe(beta);
    expect(registry.specs().map((spec) => spec.name)).toEqual(['beta', 'alpha']);
  });

  it('rejects two tools with the same name', () => {
    const twin = defineTool({ ...validDefinition, name: 'alpha', description: 'Another alpha' });
    const error = expectConfigError(() => new LocalToolRegistry([alpha, beta, twin]), 'tools');
    expect(error.message).toContain("'alpha'");
  });

  it('rejects something that is not a tool', () => {
    const error = expectConfigError(
      () => new LocalToolRegistry([alpha, { name: 'fake' } as unknown as typeof alpha]),
      'tools',
    );
    expect(error.message).toContain('tools[1]');
  });

  describe('run', () => {
    it('returns a failed result listing the available tools for an unknown tool', async () => {
      const registry = new LocalToolRegistry([alpha, beta]);
      const result = await registry.run(call('gamma', { path: 'x' }, 'call_g'));
      expect(result).toMatchObject({
        toolCallId: 'call_g',
        name: 'gamma',
        success: false,
        output: null,
      });
      expect(result.error).toContain("Unknown tool 'gamma'");
      expect(result.error).toContain('Available tools: alpha, beta.');
    });

    it('passes on why a call could not be parsed when its name is unknown too', async () => {
      const registry = new LocalToolRegistry([alpha]);
      const result = await registry.run({
        id: 'call_m',
        name: 'malformed_call',
        arguments: '',
        argumentsError: 'Gemini reported MALFORMED_FUNCTION_CALL: the call could not be parsed.',
      });
      expect(result.error).toBe(
        "Unknown tool 'malformed_call'. Gemini reported MALFORMED_FUNCTION_CALL: the call could not be parsed. Available tools: alpha.",
      );
    });

    it('says so when no tools are available at all', async () => {
      const result = await new LocalToolRegistry().run(call('gamma', {}));
      expect(result.success).toBe(false);
      expect(result.error).toContain('No tools are available');
    });

    it('does not call execute when the arguments fail the schema, and names the field', async () => {
      const execute = vi.fn(() => 'should not run');
      const registry = new LocalToolRegistry([
        defineTool({
          name: 'search',
          description: 'Searches',
          input: z.object({ query: z.string(), maxResults: z.number() }),
          execute,
        }),
      ]);
      const result = await registry.run(call('search', { query: 'cats', maxResults: 'ten' }));
      expect(execute).not.toHaveBeenCalled();
      expect(result.success).toBe(false);
      expect(result.output).toBeNull();
      expect(result.error).toContain("Invalid arguments for tool 'search'");
      expect(result.error).toContain('maxResults');
      expect(result.error).not.toMatch(/\bquery\b/);
      expect(result.error).toMatch(/expected number/);
    });

    it('reports a missing required field by name', async () => {
      const execute = vi.fn(() => 'should not run');
      const registry = new LocalToolRegistry([{ ...alpha, execute }]);
      const result = await registry.run(call('alpha', {}));
      expect(execute).not.toHaveBeenCalled();
      expect(result.success).toBe(false);
      expect(result.error).toContain('path');
    });

    it('returns a failed result for malformed JSON arguments without calling execute', async () => {
      const execute = vi.fn(() => 'should not run');
      const registry = new LocalToolRegistry([{ ...alpha, execute }]);
      const parsed = parseToolArguments('{"path":');
      expect(parsed.argumentsError).toBeDefined();
      const result = await registry.run({ id: 'call_j', name: 'alpha', ...parsed });
      expect(execute).not.toHaveBeenCalled();
      expect(result).toMatchObject({ toolCallId: 'call_j', name: 'alpha', success: false });
      expect(result.error).toContain('not valid JSON');
      expect(result.error).toContain(parsed.argumentsError);
    });

    it.each([
      ['an Error', new Error('disk full'), 'disk full'],
      ['a string', 'disk full', 'disk full'],
      ['a plain object', { code: 'ENOSPC' }, '{"code":"ENOSPC"}'],
    ])('turns %s thrown by execute into a failed result', async (_label, thrown, described) => {
      const registry = new LocalToolRegistry([
        defineTool({
          ...validDefinition,
          name: 'x',
          execute: async () => {
            throw thrown;
          },
        }),
      ]);
      const result = await registry.run(call('x', { path: '/tmp' }, 'call_x'));
      expect(result).toEqual({
        toolCallId: 'call_x',
        name: 'x',
        output: null,
        success: false,
        error: `Tool 'x' failed: ${described}`,
      });
    });

    it('turns a synchronous throw into a failed result instead of rejecting', async () => {
      const registry = new LocalToolRegistry([
        defineTool({
          ...validDefinition,
          name: 'x',
          execute: () => {
            throw new TypeError('bad input');
          },
        }),
      ]);
      await expect(registry.run(call('x', { path: '/tmp' }))).resolves.toMatchObject({
        success: false,
        error: "Tool 'x' failed: bad input",
      });
    });

    it('keeps the output as execute returned it', async () => {
      const output = { files: ['a.txt', 'b.txt'], total: 2 };
      const registry = new LocalToolRegistry([
        defineTool({ ...validDefinition, name: 'list', execute: async () => output }),
      ]);
      const result = await registry.run(call('list', { path: '/' }, 'call_l'));
      expect(result).toEqual({ toolCallId: 'call_l', name: 'list', output, success: true });
      expect(result.output).toBe(output);
      expect(result.error).toBeUndefined();
    });

    it('passes the parsed arguments, the AbortSignal and the toolCallId to execute', async () => {
      const execute = vi.fn((_args: { count: number }, _context: ToolContext) => 'done');
      const registry = new LocalToolRegistry([
        defineTool({
          name: 'count',
          description: 'Counts',
          // The schema transforms, so execute must get the parsed value, not the raw one.
          input: z.object({ count: z.string().transform(Number) }),
          execute,
        }),
      ]);
      const controller = new AbortController();
      await registry.run(call('count', { count: '7' }, 'call_42'), { signal: controller.signal });
      expect(execute).toHaveBeenCalledTimes(1);
      const [args, context] = execute.mock.calls[0] ?? [];
      expect(args).toEqual({ count: 7 });
      expect(context?.signal).toBe(controller.signal);
      expect(context?.toolCallId).toBe('call_42');
    });

    it('gives execute a signal that is not aborted when the caller passes none', async () => {
      const execute = vi.fn((_args: unknown, _context: ToolContext) => 'done');
      const registry = new LocalToolRegistry([{ ...alpha, execute }]);
      await registry.run(call('alpha', { path: 'x' }));
      const context = execute.mock.calls[0]?.[1];
      expect(context?.signal).toBeInstanceOf(AbortSignal);
      expect(context?.signal.aborted).toBe(false);
    });

    it('returns a cancelled result when the signal aborts while the tool runs', async () => {
      let started!: () => void;
      const running = new Promise<void>((resolve) => {
        started = resolve;
      });
      const registry = new LocalToolRegistry([
        defineTool({
          name: 'slow',
          description: 'Waits until cancelled',
          input: z.object({}),
          execute: (_args, { signal }) =>
            new Promise((_resolve, reject) => {
              signal.addEventListener('abort', () => reject(signal.reason), { once: true });
              started();
            }),
        }),
      ]);
      const controller = new AbortController();
      const pending = registry.run(call('slow', {}, 'call_s'), { signal: controller.signal });
      await running;
      controller.abort();
      const result = await pending;
      expect(result).toMatchObject({ toolCallId: 'call_s', name: 'slow', success: false });
      expect(result.error).toMatch(/cancelled/);
      expect(result.error).not.toMatch(/failed:/);
    });

    it('answers an abort at once even when the tool ignores its signal', async () => {
      let finish!: (value: string) => void;
      const stubborn = defineTool({
        name: 'stubborn',
        description: 'Ignores its signal',
        input: z.object({}),
        execute: () =>
          new Promise<string>((resolve) => {
            finish = resolve;
          }),
      });
      const controller = new AbortController();
      const pending = runTool(stubborn, call('stubborn', {}, 'call_x'), {
        signal: controller.signal,
      });
      await vi.waitFor(() => expect(finish).toBeTypeOf('function'));
      controller.abort();
      const result = await pending;
      expect(result).toMatchObject({ success: false, error: "Tool 'stubborn' was cancelled." });
      finish('too late'); // settling afterwards changes nothing and raises nothing
    });

    it('reports cancellation before argument problems when already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const result = await new LocalToolRegistry([alpha]).run(call('alpha', { path: 42 }), {
        signal: controller.signal,
      });
      expect(result.error).toMatch(/cancelled before it started/);
    });

    it('adds no abort listeners when the caller passes no signal, however many tools run', async () => {
      const warnings: Error[] = [];
      const onWarning = (warning: Error) => warnings.push(warning);
      process.on('warning', onWarning);
      try {
        const registry = new LocalToolRegistry([{ ...alpha, execute: async () => 'ok' }]);
        const results = await Promise.all(
          Array.from({ length: 25 }, () => registry.run(call('alpha', { path: 'x' }))),
        );
        expect(results.every((r) => r.success)).toBe(true);
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      } finally {
        process.off('warning', onWarning);
      }
    });

    it('does not execute the tool when the signal is already aborted', async () => {
      const execute = vi.fn(() => 'should not run');
      const registry = new LocalToolRegistry([{ ...alpha, execute }]);
      const controller = new AbortController();
      controller.abort();
      const result = await registry.run(call('alpha', { path: 'x' }), {
        signal: controller.signal,
      });
      expect(execute).not.toHaveBeenCalled();
      expect(result.success).toBe(false);
      expect(result.error).toMatch(/cancelled/);
    });
  });
});

describe('runTool', () => {
  it('runs one tool for one call, with the same never-throw contract', async () => {
    const tool = defineTool({ ...validDefinition, execute: ({ path }) => `read ${path}` });
    await expect(runTool(tool, call('read_file', { path: '/a' }))).resolves.toEqual({
      toolCallId: 'call_1',
      name: 'read_file',
      output: 'read /a',
      success: true,
    });
    const invalid = await runTool(tool, call('read_file', { path: 1 }));
    expect(invalid.success).toBe(false);
    expect(invalid.error).toContain('path');
  });
});
