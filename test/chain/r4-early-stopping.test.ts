// SPEC R4 `earlyStopping` (LangChain's early_stopping_method) when maxIterations or
// maxExecutionTime is reached: 'force' succeeds with a stop message; 'generate' makes one last
// model call without tools, which must answer. Default: the run fails. At maxIterations the
// last generation's tools run first (SPEC H3, as LangChain's AgentExecutor). A call that
// crossed maxTokens is not early-stopped: it already spent beyond it (budgets checked before a
// call are in test/chain/h3-budgets.test.ts).
import {
  type ChainOptions,
  ConfigError,
  createChain,
  defineTool,
  ProtocolError,
  TokenLimitError,
} from 'statecraft';
import { validatedTranscript } from 'statecraft/compile';
import { EARLY_STOP_MESSAGE } from 'statecraft/machines';
import { ScriptedModel, type ScriptStep } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { thrownBy } from '../support/errors.js';
import { messagesOf, partialOf, rejectionOf, systemNotes, toolMessages } from './helpers.js';

const ping = defineTool({
  name: 'ping',
  description: 'Answers pong.',
  input: z.object({ n: z.number() }),
  execute: () => 'pong',
});

/** A turn that calls `ping` again, as a model that never stops would. */
function pingTurn(n: number): ScriptStep {
  return { text: `step ${n}`, toolCalls: [{ id: `call_${n}`, name: 'ping', arguments: { n } }] };
}

describe("earlyStopping: 'force' (R4)", () => {
  it('ends a run that reaches maxIterations with the stop message, and says so', async () => {
    const model = new ScriptedModel([pingTurn(1), pingTurn(2)]);
    const chain = createChain({
      model,
      tools: [ping],
      maxIterations: 2,
      earlyStopping: 'force',
      resultCacheKey: 'answer',
    });
    const run = await chain.invoke('loop');
    expect(run).toMatchObject({
      status: 'succeeded',
      result: EARLY_STOP_MESSAGE,
      text: EARLY_STOP_MESSAGE,
      stopped: { reason: 'maxIterations', method: 'force' },
      iterations: 2,
    });
    model.assertComplete();
    // The calls of the last generation ran before the run stopped (SPEC H3: an iteration is
    // a model call and its tools), so the transcript ends with their results.
    expect(toolMessages(run.transcript).at(-1)).toMatchObject({
      toolCallId: 'call_2',
      success: true,
      output: 'pong',
    });
    expect(() => validatedTranscript(run.transcript)).not.toThrow();
    // The stop message is not a result later chains should read.
    expect(run.intermediateResults).toEqual({});
    expect(run.intermediateSteps.map((s) => s.action.id)).toEqual(['call_1', 'call_2']);
  });

  it('ends a run that reaches maxExecutionTime with the stop message', async () => {
    const model = new ScriptedModel([{ text: 'never', latencyMs: 5_000 }]);
    const run = await createChain({ model, maxExecutionTime: 30, earlyStopping: 'force' }).invoke(
      'go',
    );
    expect(run.result).toBe(EARLY_STOP_MESSAGE);
    expect(run.stopped).toEqual({ reason: 'maxExecutionTime', method: 'force' });
  });

  it('does not apply to a call that crossed maxTokens', async () => {
    const model = new ScriptedModel([
      { text: 'long', usage: { inputTokens: 90, outputTokens: 20 } },
    ]);
    await rejectionOf(
      TokenLimitError,
      createChain({ model, maxTokens: 100, earlyStopping: 'force' }).invoke('go'),
    );
  });
});

describe("earlyStopping: 'generate' (R4)", () => {
  it('makes one last call without tools after maxIterations, and returns its answer', async () => {
    const model = new ScriptedModel([pingTurn(1), pingTurn(2), { text: 'pong, twice' }]);
    const run = await createChain({
      model,
      tools: [ping],
      maxIterations: 2,
      earlyStopping: 'generate',
    }).invoke('loop');
    expect(run).toMatchObject({
      result: 'pong, twice',
      text: 'pong, twice',
      stopped: { reason: 'maxIterations', method: 'generate' },
      iterations: 3,
    });
    model.assertComplete();
    const final = model.requests[2];
    // Listed (the transcript holds tool calls), but not callable.
    expect(final?.toolChoice).toBe('none');
    expect(final?.tools?.map((t) => t.name)).toEqual(['ping']);
    expect(model.requests[1]?.tools?.map((t) => t.name)).toEqual(['ping']);
    const messages = messagesOf(final);
    // The last generation's calls ran: the final call reads their results.
    expect(messages.at(-2)).toMatchObject({ role: 'tool', toolCallId: 'call_2', success: true });
    expect(systemNotes(messages).at(-1)).toMatch(/cannot call tools any more/);
    expect(run.steps.map((s) => s.iteration)).toEqual([1, 2, 3]);
    expect(() => validatedTranscript(run.transcript)).not.toThrow();
  });

  it('validates the final answer like any, and fails a bad one instead of looping', async () => {
    const schema = z.object({ answer: z.string() });
    const good = new ScriptedModel([pingTurn(1), { text: '{"answer": "pong"}' }]);
    const options = { tools: [ping], maxIterations: 1, earlyStopping: 'generate' } as const;
    const run = await createChain({ model: good, outputSchema: schema, ...options }).invoke('go');
    expect(run.result).toEqual({ answer: 'pong' });

    const bad = new ScriptedModel([pingTurn(1), { text: 'no JSON here' }]);
    const error = await rejectionOf(
      ProtocolError,
      createChain({ model: bad, outputSchema: schema, ...options }).invoke('go'),
    );
    expect(error.message).toMatch(/final answer after reaching maxIterations failed validation/);
    bad.assertComplete();
  });

  it('fails when the final call answers with tool calls only', async () => {
    const model = new ScriptedModel([
      pingTurn(1),
      { toolCalls: [{ name: 'ping', arguments: { n: 9 } }] },
    ]);
    const error = await rejectionOf(
      ProtocolError,
      createChain({ model, tools: [ping], maxIterations: 1, earlyStopping: 'generate' }).invoke(
        'go',
      ),
    );
    expect(error.message).toMatch(/has no text/);
    expect(partialOf(error).output.iterations).toBe(2);
  });

  it('counts the final call against maxTokens', async () => {
    // Expected to fit (about 10 + 33 input and 10 output tokens, 20 spent), it spends 95.
    const model = new ScriptedModel([
      { ...pingTurn(1), usage: { inputTokens: 10, outputTokens: 10 } },
      { text: 'a very long answer', usage: { inputTokens: 50, outputTokens: 45 } },
    ]);
    const error = await rejectionOf(
      TokenLimitError,
      createChain({
        model,
        tools: [ping],
        maxIterations: 1,
        maxTokens: 100,
        earlyStopping: 'generate',
      }).invoke('go'),
    );
    expect(error).toMatchObject({ limit: 100, used: 115, estimate: undefined });
    model.assertComplete();
  });

  it('shows the concluding state in the stream', async () => {
    const model = new ScriptedModel([pingTurn(1), { text: 'done' }]);
    const chain = createChain({
      model,
      tools: [ping],
      maxIterations: 1,
      earlyStopping: 'generate',
    });
    const states: string[] = [];
    for await (const event of chain.stream('go'))
      if (event.type === 'state') states.push(event.state);
    // The last generation's tools run (doing) before the final call (concluding).
    expect(states).toEqual(['thinking', 'doing', 'concluding', 'validating', 'succeeded']);
  });
});

describe('without earlyStopping (R4 default)', () => {
  it('fails at maxIterations with a ProtocolError, as before', async () => {
    const model = new ScriptedModel([pingTurn(1), pingTurn(2)]);
    const error = await rejectionOf(
      ProtocolError,
      createChain({ model, tools: [ping], maxIterations: 2 }).invoke('go'),
    );
    expect(partialOf(error).output.status).toBe('failed');
  });
});

describe('early stopping options are validated (R4)', () => {
  const model = new ScriptedModel([]);
  const configErrorFor = (overrides: Record<string, unknown>) =>
    thrownBy(ConfigError, () =>
      createChain({ model, ...overrides } as unknown as ChainOptions<string>),
    );

  it.each([
    ['maxExecutionTime', -5],
    ['maxExecutionTime', '1000'],
    ['maxExecutionTime', Number.NaN],
    ['maxExecutionTime', 2 ** 31],
    ['earlyStopping', 'stop'],
    ['earlyStopping', true],
  ])('%s = %j', (option, value) => {
    expect(configErrorFor({ [option]: value }).option).toBe(option);
  });

  it("refuses 'force' with structured output, and suggests 'generate'", () => {
    for (const structured of [
      { outputSchema: z.object({ n: z.number() }) },
      { responseFormat: { type: 'json_object' } },
    ]) {
      const error = configErrorFor({ earlyStopping: 'force', ...structured });
      expect(error.option).toBe('earlyStopping');
      expect(error.message).toContain("'generate'");
    }
    expect(() =>
      createChain({ model, earlyStopping: 'force', responseFormat: { type: 'text' } }),
    ).not.toThrow();
    expect(() =>
      createChain({ model, earlyStopping: 'generate', outputSchema: z.object({ n: z.number() }) }),
    ).not.toThrow();
  });

  it('accepts the longest delay a timer can wait, and 0 (no model call)', () => {
    expect(() => createChain({ model, maxExecutionTime: 2 ** 31 - 1 })).not.toThrow();
    expect(() => createChain({ model, maxExecutionTime: 0 })).not.toThrow();
  });
});
