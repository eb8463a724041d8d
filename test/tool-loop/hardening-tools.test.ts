// Issue 13 in the tool loop (SPEC T6, C10, C11): tool output JSON cannot carry (BigInt, cycles)
// becomes JSON-safe records, so the next planner call and the response see it instead of the
// run failing with a ModelError that blames the provider; a streaming tool whose iterator
// breaks the protocol is a failed record, never a hang or a crash.
import { createToolLoop, defineTool, type Planner, type PlannerContext } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { within } from '../chain/helpers.js';

function circular(): Record<string, unknown> {
  const value: Record<string, unknown> = { name: 'loop', big: 2n ** 64n };
  value.self = value;
  return value;
}

function tool(name: string, execute: () => unknown) {
  return defineTool({ name, description: `The ${name} tool.`, input: z.object({}), execute });
}

/** A planner that runs each named tool once in round 0, then answers. */
function oneRound(...toolNames: string[]) {
  const contexts: PlannerContext[] = [];
  const planner: Planner = (context) => {
    contexts.push(context);
    return context.roundIndex === 0
      ? {
          nextAction: 'execute',
          executionCommands: toolNames.map((toolName) => ({ purpose: toolName, toolName })),
        }
      : { nextAction: 'response' };
  };
  return { planner, contexts };
}

async function settled<T>(promise: Promise<T>): Promise<T> {
  const outcome = await within(2_000, promise);
  if (outcome === 'hung') throw new Error('the run hung');
  if (outcome.settled === 'rejected') throw outcome.error;
  return outcome.value;
}

describe('tool output JSON cannot carry, in the tool loop (issue 13)', () => {
  it('BigInt and circular results become JSON-safe records the model planner and response read', async () => {
    const model = new ScriptedModel([
      {
        text: JSON.stringify({
          nextAction: 'execute',
          executionCommands: [
            { purpose: 'Big', toolName: 'big' },
            { purpose: 'Loop', toolName: 'loop' },
          ],
        }),
      },
      { text: JSON.stringify({ nextAction: 'response' }) },
      { text: 'answered' },
    ]);
    const result = await settled(
      createToolLoop({
        model,
        tools: [tool('big', () => ({ id: 2n ** 70n })), tool('loop', circular)],
      }).invoke('go'),
    );
    expect(result.answer).toBe('answered');
    expect(result.toolLogs.map((r) => r.result)).toEqual([
      { id: '1180591620717411303424' },
      { name: 'loop', big: '18446744073709551616', self: '[Circular]' },
    ]);
    expect(result.actionResults).toEqual({
      Big: { id: '1180591620717411303424' },
      Loop: { name: 'loop', big: '18446744073709551616', self: '[Circular]' },
    });
    expect(() => JSON.stringify(result.details())).not.toThrow();
    // The second planner call saw the records.
    expect(JSON.stringify(model.requests[1]?.messages.toArray())).toContain('[Circular]');
  });

  it('stream items JSON cannot carry are made safe as they are read', async () => {
    const stream = defineTool({
      name: 'numbers',
      description: 'Streams numbers.',
      input: z.object({}),
      execute: async function* () {
        yield 1n;
        yield circular();
      },
    });
    const { planner, contexts } = oneRound('numbers');
    const result = await settled(
      createToolLoop({ planner, tools: [stream], respond: false }).invoke('go'),
    );
    expect(result.toolLogs[0]?.result).toEqual([
      '1',
      { name: 'loop', big: '18446744073709551616', self: '[Circular]' },
    ]);
    expect(() => JSON.stringify(contexts[1])).not.toThrow();
  });

  it('kwargs a planner function returns with BigInts are JSON-safe in the records', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes.',
      input: z.object({ n: z.unknown() }),
      execute: ({ n }) => typeof n,
    });
    const planner: Planner = (context) =>
      context.roundIndex === 0
        ? {
            nextAction: 'execute',
            executionCommands: [{ purpose: 'Echo', toolName: 'echo', toolKwargs: { n: 5n } }],
          }
        : { nextAction: 'response' };
    const result = await settled(
      createToolLoop({ planner, tools: [echo], respond: false }).invoke('go'),
    );
    // The tool got the planner's value; the record, which models read, holds its JSON form.
    expect(result.toolLogs[0]).toMatchObject({ kwargs: { n: '5' }, result: 'bigint' });
    expect(() => JSON.stringify(result.toolLogs)).not.toThrow();
  });
});

/** A tool whose result is an AsyncIterable with a hand-written iterator. */
function iteratorTool(name: string, iterator: () => unknown) {
  return tool(name, () => ({ [Symbol.asyncIterator]: iterator }));
}

describe('streaming tools that break the iterator protocol, in the tool loop (issue 13)', () => {
  it('a next() that throws synchronously is a failed record', async () => {
    const broken = iteratorTool('broken', () => ({
      next: () => {
        throw new Error('next exploded');
      },
    }));
    const { planner } = oneRound('broken');
    const result = await settled(
      createToolLoop({ planner, tools: [broken], respond: false }).invoke('go'),
    );
    expect(result.toolLogs[0]).toMatchObject({
      success: false,
      error: expect.stringContaining('next exploded'),
    });
  });

  it('a next() that returns a non-object is a failed record, not an endless stream', async () => {
    const broken = iteratorTool('broken', () => ({ next: () => Promise.resolve(42) }));
    const { planner } = oneRound('broken');
    const result = await settled(
      createToolLoop({ planner, tools: [broken], respond: false }).invoke('go'),
    );
    expect(result.toolLogs[0]).toMatchObject({
      success: false,
      error: expect.stringContaining('not an iterator result'),
    });
  });

  it('an AsyncIterable whose [Symbol.asyncIterator]() throws is a failed record', async () => {
    const broken = iteratorTool('broken', () => {
      throw new Error('no iterator today');
    });
    const { planner } = oneRound('broken');
    const result = await settled(
      createToolLoop({ planner, tools: [broken], respond: false }).invoke('go'),
    );
    expect(result.toolLogs[0]).toMatchObject({
      success: false,
      error: expect.stringContaining('no iterator today'),
    });
  });
});
