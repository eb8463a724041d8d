// Regressions for what a review of the tool loop found; each test failed before its fix.
import { getEventListeners } from 'node:events';
import {
  AbortError,
  ConfigError,
  createChain,
  createToolLoop,
  defineTool,
  type Planner,
  StatecraftError,
  TimeoutError,
  type ToolLoopPartialResult,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { rejectionOf } from '../chain/helpers.js';
import { thrownBy } from '../support/errors.js';

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a word up.',
  input: z.object({ q: z.string() }),
  execute: ({ q }) => `${q}: found`,
});

const execute = (toolName: string, toolKwargs: object = {}) => ({
  nextAction: 'execute',
  executionCommands: [{ purpose: `Use ${toolName}`, toolName, toolKwargs }],
});

/** Answers with the plans in turn, then with `response`. */
function plansInTurn(...plans: object[]): Planner {
  return ({ roundIndex }) => plans[roundIndex] ?? { nextAction: 'response' };
}

async function drainAll(stream: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of stream);
}

describe('stream() leaves nothing on a long-lived signal', () => {
  it('the tool loop removes its abort listener when each run ends', async () => {
    const shared = new AbortController();
    const loop = createToolLoop({
      planner: plansInTurn(execute('lookup', { q: 'a' })),
      tools: [lookup],
    });
    for (let i = 0; i < 12; i++) await drainAll(loop.stream('go', { signal: shared.signal }));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('so does the chain', async () => {
    const shared = new AbortController();
    const model = new ScriptedModel(() => ({ text: 'done' }));
    const chain = createChain({ model });
    for (let i = 0; i < 12; i++) await drainAll(chain.stream('go', { signal: shared.signal }));
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('and when the reader breaks out early', async () => {
    const shared = new AbortController();
    const loop = createToolLoop({
      planner: plansInTurn(execute('lookup', { q: 'a' })),
      tools: [lookup],
    });
    for await (const event of loop.stream('go', { signal: shared.signal })) {
      if (event.type === 'round-started') break;
    }
    await vi.waitFor(() => expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0));
  });
});

describe('timers that cannot wait that long are refused', () => {
  it('rejects a tool-loop timeout above 2^31 - 1 ms, which would fire at once', () => {
    const error = thrownBy(ConfigError, () =>
      createToolLoop({ planner: () => ({}), tools: [lookup], timeout: 30 * 24 * 3600 * 1000 }),
    );
    expect(error.option).toBe('timeout');
    expect(error.message).toMatch(/at most 2147483647 ms/);
    expect(() =>
      createToolLoop({ planner: () => ({}), tools: [lookup], timeout: 2_147_483_647 }),
    ).not.toThrow();
  });

  it('and so does the chain for toolTimeoutMs', () => {
    const model = new ScriptedModel([]);
    const error = thrownBy(ConfigError, () => createChain({ model, toolTimeoutMs: 2 ** 31 }));
    expect(error.option).toBe('toolTimeoutMs');
  });
});

describe('streaming tools inside the loop', () => {
  const lines = defineTool({
    name: 'lines',
    description: 'Streams lines.',
    input: z.object({ fail: z.boolean().optional() }),
    execute: async function* ({ fail }) {
      yield 'one';
      yield 'two';
      if (fail) throw new Error('disk gone');
      yield 'three';
    },
  });

  it('reads the stream to its end: the next planner and the action results see the items', async () => {
    const seen: unknown[] = [];
    const loop = createToolLoop({
      planner: (context) => {
        seen.push(context.lastRoundResult[0]?.result);
        return context.roundIndex === 0 ? execute('lines') : { nextAction: 'response' };
      },
      tools: [lines],
    });
    const result = await loop.invoke('read');
    expect(seen).toEqual([undefined, ['one', 'two', 'three']]);
    expect(result.actionResults).toEqual({ 'Use lines': ['one', 'two', 'three'] });
    expect(JSON.parse(JSON.stringify(result.toolLogs))).toEqual(result.toolLogs);
  });

  it('makes a failed record, saying how far it got, when the stream throws', async () => {
    const loop = createToolLoop({
      planner: plansInTurn(execute('lines', { fail: true })),
      tools: [lines],
    });
    const [record] = (await loop.invoke('read')).toolLogs;
    expect(record).toMatchObject({ success: false, result: null });
    expect(record?.error).toBe("Tool 'lines' failed after streaming 2 item(s): disk gone");
  });

  it('stops reading a stream that outlives the loop timeout', async () => {
    let returned = false;
    const endless = defineTool({
      name: 'endless',
      description: 'Streams forever.',
      input: z.object({}),
      execute: async function* () {
        try {
          for (let i = 0; ; i++) {
            yield i;
            await new Promise((resolve) => setTimeout(resolve, 5));
          }
        } finally {
          returned = true;
        }
      },
    });
    const loop = createToolLoop({
      planner: plansInTurn(execute('endless')),
      tools: [endless],
      timeout: 60,
    });
    await rejectionOf(TimeoutError, loop.invoke('read'));
    await vi.waitFor(() => expect(returned).toBe(true));
  });
});

describe('a signal aborted before the run starts', () => {
  it('rejects without any call, even for a loop that would not plan (no tools)', async () => {
    const model = new ScriptedModel([{ text: 'never' }]);
    for (const respond of [true, false]) {
      const loop = createToolLoop({ model, respond });
      const error = await rejectionOf(
        AbortError,
        loop.invoke('go', { signal: AbortSignal.abort() }),
      );
      expect((error.partial as ToolLoopPartialResult).toolLogs).toEqual([]);
    }
    expect(model.requests).toHaveLength(0);
  });

  it('planOnly rejects too, without a planner call', async () => {
    const planner = vi.fn(() => execute('lookup'));
    const loop = createToolLoop({ planner, tools: [lookup] });
    await rejectionOf(AbortError, loop.planOnly('go', { signal: AbortSignal.abort() }));
    expect(planner).not.toHaveBeenCalled();
  });
});

describe('a chain responder that fails', () => {
  it('adds what the chain spent to the loop usage kept in the error', async () => {
    const model = new ScriptedModel([
      { text: 'not json', usage: { inputTokens: 100, outputTokens: 50 } },
      { text: 'still not json', usage: { inputTokens: 100, outputTokens: 50 } },
    ]);
    const chain = createChain({
      model,
      outputSchema: z.object({ ok: z.boolean() }),
      maxIterations: 2,
    });
    const loop = createToolLoop({ planner: plansInTurn(), tools: [lookup], respond: chain });
    const error = await rejectionOf(StatecraftError, loop.invoke('go'));
    expect(error.partial?.usage.totalTokens).toBe(300);
  });
});

describe('planOnly runs the machine: its stop conditions and retries apply', () => {
  it('does not call the planner with maxRounds 0', async () => {
    const planner = vi.fn(() => execute('lookup'));
    const loop = createToolLoop({ planner, tools: [lookup], maxRounds: 0 });
    expect(await loop.planOnly('go')).toEqual({ nextAction: 'response', executionCommands: [] });
    expect(planner).not.toHaveBeenCalled();
  });

  it('retries a malformed plan as a run does, and executes nothing', async () => {
    const execute_ = vi.fn(() => 'x');
    const tool = defineTool({
      name: 'lookup',
      description: 'd',
      input: z.object({}),
      execute: execute_,
    });
    const answers = ['no plan here', JSON.stringify(execute('lookup'))];
    const planner = vi.fn(() => answers.shift());
    const plan = await createToolLoop({ planner, tools: [tool] }).planOnly('go');
    expect(plan.executionCommands.map((c) => c.toolName)).toEqual(['lookup']);
    expect(planner).toHaveBeenCalledTimes(2);
    expect(execute_).not.toHaveBeenCalled();
  });
});

describe('instant applies to a planner of your own that streams', () => {
  it('with instant: false, the whole stream is read and parsed', async () => {
    let readToEnd = false;
    const planner: Planner = async function* () {
      yield '{"nextAction": "response", ';
      yield '"executionCommands": []}';
      readToEnd = true;
    };
    const result = await createToolLoop({ planner, tools: [lookup], instant: false }).invoke('go');
    expect(readToEnd).toBe(true);
    expect(result.plans[0]?.shortCircuited).toBe(false);
  });
});
