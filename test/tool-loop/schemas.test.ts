// The tool loop's plan and record shapes as zod schemas: held to the runtime. The lenient
// schema accepts exactly what a loop accepts from a planner and yields the plan it runs
// (normalizePlan), on generated answers and on a loop run; the canonical plan schema holds
// every normalized plan; every record and planner context of real runs passes its schema.
import fc from 'fast-check';
import {
  createToolLoop,
  defineTool,
  type PlannerContext,
  type ToolExecutionRecord,
} from 'statecraft';
import {
  plannerAnswerSchema,
  plannerContextSchema,
  planSchema,
  toolCommandSchema,
  toolExecutionRecordSchema,
} from 'statecraft/tool-loop';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { isRecord } from '../../src/is-record.js';
// From its module: the root export is being narrowed, and these move to a subpath.
import { normalizePlan, type Plan, type ToolCommand } from '../../src/plan/plan.js';
import { planResponseFormat } from '../../src/plan/planner-context.js';

// Answers built from the keys a planner's answer may hold, with the values that decide each
// rule: blank, padded and odd-cased text, wrong types, lists that yield nothing, snake_case.
const text = fc.constantFrom('', '  ', 'search', ' search ', 'fetch', 'Use it', 'compare', 42);
const action = fc.constantFrom('execute', 'EXECUTE', ' Response ', 'response', 'wait', '', 1);
const kwargs = fc.oneof(
  fc.constant({ q: 'x' }),
  fc.constant({}),
  fc.constant('q=x'),
  fc.constant(null),
  fc.constant([1]),
);
const command = fc.oneof(
  fc.record(
    {
      purpose: text,
      toolName: text,
      tool_name: text,
      toolKwargs: kwargs,
      tool_kwargs: kwargs,
      todoSuggestion: text,
      todo_suggestion: text,
      next: text,
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom('search', null, 7, [{ toolName: 'search' }]),
);
const commands = fc.oneof(fc.array(command, { maxLength: 3 }), command);
const answer = fc.oneof(
  fc.record(
    {
      nextAction: action,
      next_action: action,
      executionCommands: commands,
      execution_commands: commands,
      toolCommands: commands,
      tool_commands: commands,
      toolCommand: command,
      tool_command: command,
      todoSuggestion: text,
      todo_suggestion: text,
      next: text,
      useTool: fc.constantFrom(true, false, 'no'),
      use_tool: fc.constantFrom(true, false),
    },
    { requiredKeys: [] },
  ),
  // What is no plan: the loop asks again (planRetries), then fails.
  fc.constantFrom(null, undefined, 'respond', 42, true, [], [{ nextAction: 'response' }]),
);

/** A loop with no tool never asks its planner: these have one. */
const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  input: z.object({}),
  execute: () => 'ok',
});

describe('plannerAnswerSchema: what a loop accepts from a planner', () => {
  it('accepts exactly the JSON objects, and yields the plan normalizePlan makes', () => {
    fc.assert(
      fc.property(answer, (raw) => {
        const parsed = plannerAnswerSchema.safeParse(raw);
        expect(parsed.success).toBe(isRecord(raw));
        if (parsed.success) expect(parsed.data).toEqual(normalizePlan(raw));
      }),
      { numRuns: 1000, seed: 24 },
    );
  });

  it('the lenient cases, by name', () => {
    const cases: [unknown, Plan][] = [
      // snake_case, the action in any case, a todo from `next`, a blank purpose
      [
        { next_action: 'EXECUTE', tool_commands: [{ tool_name: 'search', next: 'read it' }] },
        {
          nextAction: 'execute',
          executionCommands: [
            {
              purpose: 'Use search',
              toolName: 'search',
              toolKwargs: {},
              todoSuggestion: 'read it',
            },
          ],
        },
      ],
      // one toolCommand, no action: execute is inferred; the decision's todo fills in
      [
        { toolCommand: { toolName: 'search', toolKwargs: 'q' }, todoSuggestion: 'compare' },
        {
          nextAction: 'execute',
          executionCommands: [
            {
              purpose: 'Use search',
              toolName: 'search',
              toolKwargs: {},
              todoSuggestion: 'compare',
            },
          ],
        },
      ],
      // useTool: false respond, whatever the commands
      [
        { nextAction: 'execute', useTool: false, executionCommands: [{ toolName: 'search' }] },
        { nextAction: 'response', executionCommands: [] },
      ],
      [{}, { nextAction: 'response', executionCommands: [] }],
    ];
    for (const [raw, plan] of cases) expect(plannerAnswerSchema.parse(raw)).toEqual(plan);
  });

  it('what it refuses is what a loop refuses: a planner answering it fails the run', async () => {
    for (const raw of [null, 42, 'respond', [{ nextAction: 'response' }]]) {
      expect(plannerAnswerSchema.safeParse(raw).success).toBe(false);
      const loop = createToolLoop({
        planner: () => raw,
        planRetries: 0,
        respond: false,
        tools: [noop],
      });
      // A string answer is searched for a JSON object; 'respond' holds none.
      await expect(loop.invoke('go')).rejects.toMatchObject({ code: 'PROTOCOL_ERROR' });
    }
    // An object is always a plan: the loop runs it.
    const loop = createToolLoop({
      planner: () => ({ useTool: 'maybe' }),
      respond: false,
      tools: [noop],
    });
    await expect(loop.invoke('go')).resolves.toMatchObject({ stopReason: expect.any(String) });
  });
});

describe('planSchema: the plan as the loop runs it', () => {
  it('holds every plan normalizePlan makes, unchanged', () => {
    fc.assert(
      fc.property(answer, (raw) => {
        const plan = normalizePlan(raw);
        expect(planSchema.parse(plan)).toEqual(plan);
      }),
      { numRuns: 1000, seed: 25 },
    );
  });

  it('states the canonical answer: what normalizePlan tolerates, it does not', () => {
    const canonical = {
      nextAction: 'execute',
      executionCommands: [
        { purpose: 'Search', toolName: 'search', toolKwargs: { q: 'x' }, todoSuggestion: '' },
      ],
    };
    expect(planSchema.parse(canonical)).toEqual(normalizePlan(canonical));
    const { todoSuggestion: _, ...withoutTodo } = canonical.executionCommands[0] as ToolCommand;
    for (const lenient of [
      { ...canonical, nextAction: 'EXECUTE' },
      { nextAction: 'execute', toolCommands: canonical.executionCommands },
      { nextAction: 'execute', executionCommands: [withoutTodo] },
      {
        nextAction: 'execute',
        executionCommands: [{ ...withoutTodo, todoSuggestion: 'x', toolName: ' ' }],
      },
      { nextAction: 'response', executionCommands: canonical.executionCommands },
    ]) {
      expect(planSchema.safeParse(lenient).success, JSON.stringify(lenient)).toBe(false);
    }
    expect(
      toolCommandSchema.safeParse({ purpose: 'p', toolName: 't', toolKwargs: [] }).success,
    ).toBe(false);
  });
});

describe('planSchema and the response format the model planner is given', () => {
  it('name the same fields, required alike, at both levels', () => {
    type Level = { properties: Record<string, unknown>; required: string[] };
    const fields = (schema: Level) => ({
      properties: Object.keys(schema.properties).sort(),
      required: [...schema.required].sort(),
    });
    const commandsOf = (schema: Level) =>
      (schema.properties.executionCommands as { items: Level }).items;
    const stated = z.toJSONSchema(planSchema, { io: 'input' }) as unknown as Level;
    const given = planResponseFormat([]) as unknown as { schema: Level };
    expect(fields(stated)).toEqual(fields(given.schema));
    expect(fields(commandsOf(stated))).toEqual(fields(commandsOf(given.schema)));
  });
});

describe('records and planner contexts of real runs pass their schemas', () => {
  it('succeeded, failed, unknown-tool and invalid-argument records, and every context', async () => {
    const lookup = defineTool({
      name: 'lookup',
      description: 'Looks an order up.',
      input: z.object({ order: z.string() }),
      execute: ({ order }) => {
        if (order === 'none') throw new Error(`no order ${order}`);
        return { order, status: 'shipped' };
      },
    });
    const contexts: PlannerContext[] = [];
    const loop = createToolLoop({
      tools: [lookup],
      respond: false,
      planner: (context) => {
        contexts.push(context);
        if (context.roundIndex > 0) return { nextAction: 'response' };
        return {
          nextAction: 'execute',
          executionCommands: [
            { purpose: 'Find A-1', toolName: 'lookup', toolKwargs: { order: 'A-1' } },
            { purpose: 'Find none', toolName: 'lookup', toolKwargs: { order: 'none' } },
            { purpose: 'Guess', toolName: 'lookup_everything', toolKwargs: {} },
            { purpose: 'Wrong', toolName: 'lookup', toolKwargs: { order: 7 } },
          ],
        };
      },
    });
    const result = await loop.invoke({
      userInput: 'Where are my orders?',
      extraRequirement: 'Be brief.',
    });
    expect(result.toolLogs.map((r) => r.success)).toEqual([true, false, false, false]);
    for (const record of result.toolLogs) {
      expect(toolExecutionRecordSchema.parse(record)).toEqual(record);
    }
    expect(contexts).toHaveLength(2);
    for (const context of contexts) {
      expect(plannerContextSchema.parse(context)).toEqual(context);
    }
    expect(contexts[1]?.lastRoundResult).toEqual(result.toolLogs);
    for (const round of result.plans) expect(planSchema.parse(round.plan)).toEqual(round.plan);
  });
});

describe('the schemas type what the loop types', () => {
  it('outputs are the Plan, ToolCommand, ToolExecutionRecord and PlannerContext types', () => {
    expectTypeOf<z.output<typeof planSchema>>().toMatchTypeOf<Plan>();
    expectTypeOf<Plan>().toMatchTypeOf<z.output<typeof planSchema>>();
    expectTypeOf<z.output<typeof plannerAnswerSchema>>().toEqualTypeOf<Plan>();
    expectTypeOf<z.output<typeof toolCommandSchema>>().toMatchTypeOf<ToolCommand>();
    expectTypeOf<ToolCommand>().toMatchTypeOf<z.output<typeof toolCommandSchema>>();
    expectTypeOf<z.output<typeof toolExecutionRecordSchema>>().toMatchTypeOf<ToolExecutionRecord>();
    expectTypeOf<ToolExecutionRecord>().toMatchTypeOf<z.output<typeof toolExecutionRecordSchema>>();
    expectTypeOf<z.output<typeof plannerContextSchema>>().toMatchTypeOf<PlannerContext>();
  });
});
