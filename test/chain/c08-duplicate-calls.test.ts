// SPEC C8: warnRecursiveCalls (default true) with tools marked duplicateCallWarn. A repeat of
// an earlier call (same name, deeply equal arguments) is not executed the first time; the model
// gets a warning result. Repeated right after the warning, it runs. Unmarked tools never block.
import { createChain, defineTool } from 'statecraft';
import { ScriptedModel, type ScriptedToolCall } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { messagesOf, toolMessages } from './helpers.js';

function searchTool(duplicateCallWarn: boolean) {
  const execute = vi.fn(({ query }: { query: string }) => `results for ${query}`);
  const tool = defineTool({
    name: 'search',
    description: 'Searches the web.',
    input: z.object({
      query: z.string(),
      filter: z.object({ site: z.string(), years: z.array(z.number()) }).optional(),
    }),
    execute,
    duplicateCallWarn,
  });
  return { tool, execute };
}

/** One tool call per generation, then a final answer. */
function modelCalling(...calls: ScriptedToolCall[]) {
  return new ScriptedModel([...calls.map((call) => ({ toolCalls: [call] })), { text: 'done' }]);
}

const ARGS = { query: 'xstate', filter: { site: 'github.com', years: [2024, 2025] } };
// Deeply equal to ARGS, with every key in another order.
const SAME_ARGS_REORDERED = {
  filter: { years: [2024, 2025], site: 'github.com' },
  query: 'xstate',
};

describe('duplicate tool calls (C8)', () => {
  it('blocks the first repeat (keys in any order) with a warning result the model sees', async () => {
    const { tool, execute } = searchTool(true);
    const model = modelCalling(
      { id: 'c1', name: 'search', arguments: ARGS },
      { id: 'c2', name: 'search', arguments: SAME_ARGS_REORDERED },
    );
    const run = await createChain({ model, tools: [tool] }).invoke('find');
    model.assertComplete();

    expect(execute).toHaveBeenCalledTimes(1);
    const results = toolMessages(messagesOf(model.requests[2]));
    expect(results[0]).toMatchObject({
      toolCallId: 'c1',
      success: true,
      output: 'results for xstate',
    });
    expect(results[1]).toMatchObject({
      toolCallId: 'c2',
      name: 'search',
      success: false,
      error: expect.stringMatching(/already called/),
    });
    expect(run.steps[1]?.toolResults).toEqual([
      expect.objectContaining({ toolCallId: 'c2', success: false }),
    ]);
  });

  it('runs the call when the model repeats it right after the warning', async () => {
    const { tool, execute } = searchTool(true);
    const model = modelCalling(
      { id: 'c1', name: 'search', arguments: ARGS },
      { id: 'c2', name: 'search', arguments: ARGS },
      { id: 'c3', name: 'search', arguments: SAME_ARGS_REORDERED },
    );
    await createChain({ model, tools: [tool] }).invoke('find');
    expect(execute).toHaveBeenCalledTimes(2);
    expect(toolMessages(messagesOf(model.requests[3])).map((r) => r.success)).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('warns again when the repeat does not come right after the warning', async () => {
    const { tool, execute } = searchTool(true);
    const model = modelCalling(
      { id: 'c1', name: 'search', arguments: { query: 'a' } },
      { id: 'c2', name: 'search', arguments: { query: 'a' } }, // warned
      { id: 'c3', name: 'search', arguments: { query: 'b' } }, // something else
      { id: 'c4', name: 'search', arguments: { query: 'a' } }, // not right after: warned again
    );
    await createChain({ model, tools: [tool] }).invoke('find');
    expect(execute.mock.calls.map(([args]) => args.query)).toEqual(['a', 'b']);
    expect(toolMessages(messagesOf(model.requests[4])).map((r) => r.success)).toEqual([
      true,
      false,
      true,
      false,
    ]);
  });

  it('never blocks calls whose arguments differ', async () => {
    const { tool, execute } = searchTool(true);
    const model = modelCalling(
      { name: 'search', arguments: ARGS },
      {
        name: 'search',
        arguments: { ...ARGS, filter: { site: 'github.com', years: [2025, 2024] } },
      },
      { name: 'search', arguments: { query: 'xstate' } },
    );
    await createChain({ model, tools: [tool] }).invoke('find');
    expect(execute).toHaveBeenCalledTimes(3);
  });

  it('never blocks a tool that did not opt in', async () => {
    const { tool, execute } = searchTool(false);
    const model = modelCalling(
      { name: 'search', arguments: ARGS },
      { name: 'search', arguments: ARGS },
      { name: 'search', arguments: SAME_ARGS_REORDERED },
    );
    await createChain({ model, tools: [tool] }).invoke('find');
    expect(execute).toHaveBeenCalledTimes(3);
    expect(toolMessages(messagesOf(model.requests[3])).every((r) => r.success)).toBe(true);
  });

  it('warnRecursiveCalls: false disables the check for marked tools', async () => {
    const { tool, execute } = searchTool(true);
    const model = modelCalling(
      { name: 'search', arguments: ARGS },
      { name: 'search', arguments: ARGS },
    );
    await createChain({ model, tools: [tool], warnRecursiveCalls: false }).invoke('find');
    expect(execute).toHaveBeenCalledTimes(2);
  });

  it('blocks only the repeated call of a step; the other calls of that step run', async () => {
    const { tool, execute } = searchTool(true);
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'search', arguments: { query: 'a' } }] },
      {
        toolCalls: [
          { id: 'c2', name: 'search', arguments: { query: 'b' } },
          { id: 'c3', name: 'search', arguments: { query: 'a' } },
        ],
      },
      { text: 'done' },
    ]);
    await createChain({ model, tools: [tool] }).invoke('find');
    expect(execute.mock.calls.map(([args]) => args.query)).toEqual(['a', 'b']);
    // Results stay in call order, the blocked one in its place.
    expect(
      toolMessages(messagesOf(model.requests[2])).map((r) => [r.toolCallId, r.success]),
    ).toEqual([
      ['c1', true],
      ['c2', true],
      ['c3', false],
    ]);
  });

  it('each run starts with a fresh call history', async () => {
    const { tool, execute } = searchTool(true);
    const model = new ScriptedModel([
      { toolCalls: [{ name: 'search', arguments: { query: 'a' } }] },
      { text: 'one' },
      { toolCalls: [{ name: 'search', arguments: { query: 'a' } }] },
      { text: 'two' },
    ]);
    const chain = createChain({ model, tools: [tool] });
    await chain.invoke('first');
    await chain.invoke('second');
    expect(execute).toHaveBeenCalledTimes(2);
  });
});
