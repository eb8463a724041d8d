// What a user's editor infers from defineTool and createChain: the `execute` argument from the
// input schema, the tool's output from `execute`, and a chain's `result` from `outputSchema`.
// defineTool constrains its schema on the one property it reads (`_zod.output`), not on
// `z.ZodType`, so that type-checking stays fast (`npm run bench` counts the instantiations);
// these cases keep that from changing what is inferred. `npm test` runs `tsc --noEmit` over
// this file: each `@ts-expect-error` fails the typecheck if its line ever compiles.
import {
  type AnyTool,
  type Chain,
  type ChainResult,
  ConfigError,
  createChain,
  defineTool,
  type StandardSchema,
  type Tool,
  type ToolArgs,
  type ToolContext,
  type ToolDefinition,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { z as zm } from 'zod/mini';

type OutputOf<T> = T extends Tool<infer _Input, infer Output> ? Output : never;
type ArgsOf<T> = T extends Tool<infer Input, unknown> ? ToolArgs<Input> : never;

const add = defineTool({
  name: 'add',
  description: 'Adds two numbers.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

describe('defineTool infers the arguments and the output', () => {
  it('types execute arguments from the zod schema, and the output from execute', async () => {
    expectTypeOf<ArgsOf<typeof add>>().toEqualTypeOf<{ a: number; b: number }>();
    expectTypeOf<OutputOf<typeof add>>().toEqualTypeOf<number>();
    expectTypeOf(add.execute).parameters.toEqualTypeOf<[{ a: number; b: number }, ToolContext]>();
    expect(
      await add.execute({ a: 2, b: 3 }, { signal: AbortSignal.timeout(1_000), toolCallId: 'c' }),
    ).toBe(5);
  });

  it('gives execute the schema output: defaults filled, transforms applied, optionals optional', () => {
    const tool = defineTool({
      name: 'shaped',
      description: 'Shapes its input.',
      input: z.object({
        path: z.string(),
        limit: z.number().default(10),
        tags: z.string().transform((s) => s.split(',')),
        nested: z.object({ deep: z.array(z.object({ id: z.number() })) }).optional(),
        kind: z.enum(['a', 'b']),
      }),
      execute: async (args, context) => {
        expectTypeOf(args).toEqualTypeOf<{
          path: string;
          limit: number;
          tags: string[];
          nested?: { deep: { id: number }[] } | undefined;
          kind: 'a' | 'b';
        }>();
        expectTypeOf(context).toEqualTypeOf<ToolContext>();
        return { found: args.tags.length, at: args.path };
      },
    });
    expectTypeOf<OutputOf<typeof tool>>().toEqualTypeOf<{ found: number; at: string }>();
    expect(tool.inputSchema.type).toBe('object');
  });

  it('types needsApproval from the same schema', () => {
    const refund = defineTool({
      name: 'refund',
      description: 'Refunds an order.',
      input: z.object({ orderId: z.string(), cents: z.number() }),
      needsApproval: (args) => {
        expectTypeOf(args).toEqualTypeOf<{ orderId: string; cents: number }>();
        return args.cents > 10_000;
      },
      execute: ({ orderId }) => orderId,
    });
    expect(refund.needsApproval).toBeTypeOf('function');
    // @ts-expect-error the predicate reads a field the schema does not have
    defineTool({ ...refund, needsApproval: ({ amount }) => amount > 1 });
  });

  it('accepts zod/mini schemas, whose types carry the same output', () => {
    const mini = defineTool({
      name: 'mini',
      description: 'A zod/mini schema.',
      input: zm.object({ q: zm.string(), n: zm.optional(zm.number()) }),
      execute: ({ q, n }) => `${q}${n ?? ''}`,
    });
    expectTypeOf<ArgsOf<typeof mini>>().toEqualTypeOf<{ q: string; n?: number | undefined }>();
    expect(mini.inputSchema.required).toEqual(['q']);
  });

  it('refuses execute functions that do not fit the schema, and inputs that are not zod', () => {
    const input = z.object({ a: z.number(), b: z.number() });
    const description = 'Refused.';
    // @ts-expect-error `c` is not an argument of this schema
    defineTool({ name: 'x', description, input, execute: ({ c }) => c });
    // @ts-expect-error `a` is a number, not a string
    defineTool({ name: 'x', description, input, execute: ({ a }: { a: string }) => a });
    // @ts-expect-error a number has no `toUpperCase`
    defineTool({ name: 'x', description, input, execute: ({ a }) => a.toUpperCase() });
    const jsonSchemaInput = () =>
      // @ts-expect-error a JSON Schema object is not a zod schema
      defineTool({ name: 'x', description, input: { type: 'object' }, execute: () => 1 });
    expect(jsonSchemaInput).toThrow(ConfigError);
    const standardInput = () =>
      // @ts-expect-error a Standard Schema without zod's types cannot describe a tool's input
      defineTool({ name: 'x', description, input: standardNumber, execute: (n) => n });
    expect(standardInput).toThrow(ConfigError);
  });

  it('keeps Tool and ToolDefinition usable with a named schema type', () => {
    const input = z.object({ city: z.string() });
    const definition: ToolDefinition<typeof input, string> = {
      name: 'weather',
      description: 'Says the weather.',
      input,
      execute: ({ city }) => `sun in ${city}`,
    };
    const tool: Tool<typeof input, string> = defineTool(definition);
    // What a registry holds, and a schema named the wide way: z.ZodType has `_zod.output` too.
    const held: AnyTool = tool;
    // A tool named without type arguments keeps zod's methods on its input, as it had.
    expectTypeOf<Tool['input']>().toEqualTypeOf<z.ZodType>();
    const wide: ToolDefinition<z.ZodType, string> = {
      name: 'weather',
      description: 'Says the weather.',
      input: input as z.ZodType,
      execute: (args) => {
        expectTypeOf(args).toEqualTypeOf<unknown>();
        return 'sun';
      },
    };
    expect([held.name, defineTool(wide).name]).toEqual(['weather', 'weather']);
  });
});

/** A Standard Schema that is not zod: a number at least 0. */
const standardNumber: StandardSchema<number> = {
  '~standard': {
    version: 1,
    vendor: 'test',
    validate: (value) =>
      typeof value === 'number' && value >= 0
        ? { value }
        : { issues: [{ message: 'expected a number at least 0' }] },
  },
};

describe('createChain infers its result from outputSchema', () => {
  const model = () => new ScriptedModel([{ text: '{"answer": 5}' }]);

  it('types the result from a zod outputSchema, with tools of any input beside it', async () => {
    const greet = defineTool({
      name: 'greet',
      description: 'Greets.',
      input: z.object({ who: z.string() }),
      execute: ({ who }) => `hello ${who}`,
    });
    const chain = createChain({
      model: model(),
      tools: [add, greet],
      outputSchema: z.object({ answer: z.number() }),
    });
    expectTypeOf(chain).toEqualTypeOf<Chain<{ answer: number }>>();
    const run = await chain.invoke('What is 2 + 3?');
    expectTypeOf(run).toEqualTypeOf<ChainResult<{ answer: number }>>();
    expect(run.result.answer).toBe(5);
    // @ts-expect-error the result has no such field
    expect(run.result.total).toBeUndefined();
  });

  it('types the result from a Standard Schema that is not zod', async () => {
    const chain = createChain({
      model: new ScriptedModel([{ text: '7' }]),
      outputSchema: standardNumber,
    });
    expectTypeOf(chain).toEqualTypeOf<Chain<number>>();
    expect((await chain.invoke('A number?')).result).toBe(7);
  });

  it('types the result as text without a schema, and as unknown JSON with a JSON Schema', () => {
    expectTypeOf(createChain({ model: model() })).toEqualTypeOf<Chain<string>>();
    const json = createChain({
      model: model(),
      outputSchema: { type: 'object', properties: { answer: { type: 'number' } } },
    });
    expectTypeOf(json).toEqualTypeOf<Chain<unknown>>();
  });
});
