// SPEC H4 (issue 16, part 2): invalidToolCall decides what a call with arguments that are not
// JSON or fail the tool's schema becomes: the default correction, a run that fails, a fixed
// text, or a text of yours.
import {
  ChainError,
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  InvalidToolCallError,
  type InvalidToolCallPolicy,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const add = defineTool({
  name: 'add',
  description: 'Adds.',
  input: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

/** A chain whose model sends one bad call (schema or JSON), then answers. */
function chainWith(invalidToolCall: InvalidToolCallPolicy | undefined, bad: 'schema' | 'json') {
  const call =
    bad === 'schema'
      ? { id: 'c1', name: 'add', arguments: { a: 1, b: 'two' } }
      : { id: 'c1', name: 'add', argumentsText: '{"a": 1,' };
  return createChain({
    model: new ScriptedModel([{ toolCalls: [call] }, { text: 'ok' }]),
    tools: [add],
    ...(invalidToolCall !== undefined && { invalidToolCall }),
  });
}

const toolError = (transcript: readonly { role: string }[]) =>
  (transcript.find((m) => m.role === 'tool') as { error?: string } | undefined)?.error;

describe('invalidToolCall', () => {
  it("'return-to-model' (the default) lets the model read what was wrong", async () => {
    for (const policy of [undefined, 'return-to-model'] as const) {
      const result = await chainWith(policy, 'schema').invoke('add');
      expect(toolError(result.transcript)).toMatch(/Invalid arguments for tool 'add'/);
    }
  });

  it("'fail' ends the run: a ChainError caused by an InvalidToolCallError, partial kept", async () => {
    for (const bad of ['schema', 'json'] as const) {
      const error = await chainWith('fail', bad)
        .invoke('add')
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ChainError);
      const cause = (error as ChainError).cause as InvalidToolCallError;
      expect(cause).toBeInstanceOf(InvalidToolCallError);
      expect([cause.callId, cause.toolName, cause.problem]).toEqual(['c1', 'add', bad]);
      expect((error as ChainError).partial?.transcript.length).toBeGreaterThan(1);
    }
  });

  it('a string is what the model reads; a function words it from the problem', async () => {
    const fixed = await chainWith('Check the arguments and try again.', 'json').invoke('add');
    expect(toolError(fixed.transcript)).toBe('Check the arguments and try again.');
    const worded = await chainWith(
      ({ call, problem }) => `${call.name}: ${problem} problem`,
      'schema',
    ).invoke('add');
    expect(toolError(worded.transcript)).toBe('add: schema problem');
  });

  it('applies to a tool loop’s commands too', async () => {
    let round = 0;
    const loop = createToolLoop({
      planner: () =>
        round++ === 0
          ? {
              nextAction: 'execute',
              executionCommands: [{ purpose: 'sum', toolName: 'add', toolKwargs: { a: 'x' } }],
            }
          : { nextAction: 'response' },
      tools: [add],
      respond: false,
      invalidToolCall: 'fail',
    });
    const error = await loop.invoke('sum').catch((e: unknown) => e);
    expect((error as ChainError).cause).toBeInstanceOf(InvalidToolCallError);
  });

  it('refuses a value of another kind, on chains and loops', () => {
    expect(() => chainWith(42 as never, 'json')).toThrow(ConfigError);
    expect(() => createToolLoop({ planner: () => ({}), invalidToolCall: null as never })).toThrow(
      /invalidToolCall/,
    );
  });
});
