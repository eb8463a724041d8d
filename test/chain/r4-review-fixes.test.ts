// SPEC R4 review findings, each pinned through the public API: the final call of 'generate'
// leaves no call unanswered however it ends; a time limit in a tool step keeps the warnings of
// blocked duplicates; a returnDirect tool's stream is read whole; the limit that fired is the
// failure; 'force' with structured output is refused naming both options; returnDirect by
// name, whoever runs the tool.
import {
  type ChainOptions,
  ConfigError,
  createChain,
  defineTool,
  type Message,
  ProtocolError,
  type RemoteToolExecutor,
  TimeoutError,
  TokenLimitError,
  type ToolCall,
} from 'statecraft';
import { validatedTranscript } from 'statecraft/compile';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { thrownBy } from '../support/errors.js';
import { aborted, messagesOf, partialOf, rejectionOf, toolMessages, within } from './helpers.js';

/** Ids of the assistant tool calls in `messages` that no tool message answers. */
function unansweredCalls(messages: readonly Message[]): string[] {
  const answered = new Set(toolMessages(messages).map((m) => m.toolCallId));
  return messages
    .flatMap((m) => (m.role === 'assistant' ? m.toolCalls : []))
    .map((call) => call.id)
    .filter((id) => !answered.has(id));
}

const ping = defineTool({
  name: 'ping',
  description: 'Answers pong.',
  input: z.object({ n: z.number() }),
  execute: () => 'pong',
});

const pingCall = (n: number): ToolCall => ({ id: `call_${n}`, name: 'ping', arguments: { n } });

describe("the final call of earlyStopping 'generate' answers every call (finding 10)", () => {
  it('when it answers with calls only: the run fails, and no call is left unanswered', async () => {
    const model = new ScriptedModel([
      { text: 'step 1', toolCalls: [pingCall(1)] },
      { toolCalls: [pingCall(9)] },
    ]);
    const chain = createChain({
      model,
      tools: [ping],
      maxIterations: 1,
      earlyStopping: 'generate',
    });
    const error = await rejectionOf(ProtocolError, chain.invoke('go'));
    expect(error.message).toMatch(/has no text/);
    const { transcript, steps } = partialOf(error);
    expect(unansweredCalls(transcript)).toEqual([]);
    expect(() => validatedTranscript(transcript)).not.toThrow();
    // call_1 was closed as not run; call_9, made without tools, is dropped like after an answer.
    expect(toolMessages(transcript).map((m) => m.toolCallId)).toEqual(['call_1']);
    expect(steps.map((s) => s.toolCalls.map((c) => c.id))).toEqual([['call_1'], []]);
    model.assertComplete();
  });

  it('when it goes over maxTokens: TokenLimitError, and no call is left unanswered', async () => {
    const model = new ScriptedModel([
      { text: 'step 1', toolCalls: [pingCall(1)], usage: { inputTokens: 10, outputTokens: 10 } },
      {
        // Expected to fit (checked before the call, SPEC H3), it spends beyond the budget.
        text: 'a long answer that also calls',
        toolCalls: [pingCall(9)],
        usage: { inputTokens: 50, outputTokens: 45 },
      },
    ]);
    const chain = createChain({
      model,
      tools: [ping],
      maxIterations: 1,
      maxTokens: 100,
      earlyStopping: 'generate',
    });
    const error = await rejectionOf(TokenLimitError, chain.invoke('go'));
    expect(error).toMatchObject({ limit: 100, used: 115 });
    const { transcript } = partialOf(error);
    expect(unansweredCalls(transcript)).toEqual([]);
    expect(transcript.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'a long answer that also calls',
      toolCalls: [],
    });
  });
});

/** `lookup` warns on duplicates; `slow` waits for its signal, so the time limit cuts its step. */
function duplicateAndSlowTools() {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Looks a word up.',
    input: z.object({ q: z.string() }),
    execute: ({ q }) => `${q}: found`,
    duplicateCallWarn: true,
  });
  const slow = defineTool({
    name: 'slow',
    description: 'Takes its time.',
    input: z.object({}),
    execute: async (_args, { signal }) => {
      await aborted(signal);
      return 'too late';
    },
  });
  // Step 2 repeats step 1's call (blocked, answered with a warning) next to a slow call.
  const script = [
    { toolCalls: [{ id: 'l1', name: 'lookup', arguments: { q: 'x' } }] },
    {
      toolCalls: [
        { id: 'l2', name: 'lookup', arguments: { q: 'x' } },
        { id: 's1', name: 'slow', arguments: {} },
      ],
    },
  ];
  return { tools: [lookup, slow], script };
}

describe('a time limit in a tool step keeps the blocked duplicates (finding 8)', () => {
  it('without earlyStopping: the warning is in intermediateSteps and the transcript', async () => {
    const { tools, script } = duplicateAndSlowTools();
    const model = new ScriptedModel(script);
    const chain = createChain({ model, tools, maxIterations: 3, maxExecutionTime: 200 });
    const error = await rejectionOf(TimeoutError, chain.invoke('go'));
    const partial = partialOf(error);
    expect(partial.intermediateSteps.map((s) => [s.action.id, s.observation.success])).toEqual([
      ['l1', true],
      ['l2', false],
    ]);
    expect(partial.intermediateSteps[1]?.observation.error).toMatch(/already called/);
    expect(partial.steps.map((s) => s.toolResults.map((r) => r.toolCallId))).toEqual([
      ['l1'],
      ['l2'],
    ]);
    // The slow call never answered: it is answered as not run, so the transcript is valid input.
    expect(unansweredCalls(partial.transcript)).toEqual([]);
    expect(partial.transcript.at(-1)).toMatchObject({
      toolCallId: 's1',
      error: expect.stringMatching(/not run, the time limit was reached/),
    });
    expect(() => validatedTranscript(partial.transcript)).not.toThrow();
    model.assertComplete();
  });

  it("with 'generate': the final call sees the warning, and only the slow call as not run", async () => {
    const { tools, script } = duplicateAndSlowTools();
    const model = new ScriptedModel([...script, { text: 'x: found' }]);
    const chain = createChain({
      model,
      tools,
      maxIterations: 3,
      maxExecutionTime: 200,
      earlyStopping: 'generate',
    });
    const run = await chain.invoke('go');
    expect(run.stopped).toEqual({ reason: 'maxExecutionTime', method: 'generate' });
    expect(run.intermediateSteps.map((s) => s.action.id)).toEqual(['l1', 'l2']);
    const results = toolMessages(messagesOf(model.requests[2]));
    expect(results.map((m) => [m.toolCallId, m.error ?? m.output])).toEqual([
      ['l1', 'x: found'],
      ['l2', expect.stringMatching(/already called/)],
      ['s1', expect.stringMatching(/not run, the time limit was reached/)],
    ]);
    expect(() => validatedTranscript(run.transcript)).not.toThrow();
  });
});

/** A returnDirect tool streaming `line 1` … `line <count>` (or failing after `failAfter`). */
function streamingDirectTool(count: number, failAfter?: number) {
  const state = { closed: false };
  const tool = defineTool({
    name: 'tail',
    description: 'Streams a log; its lines are the answer.',
    input: z.object({}),
    returnDirect: true,
    execute: async function* () {
      try {
        for (let i = 1; i <= count; i++) {
          if (i === failAfter) throw new Error('disk gone');
          yield `line ${i}`;
        }
      } finally {
        state.closed = true;
      }
    },
  });
  return { tool, state };
}

const tailCall = { toolCalls: [{ id: 't1', name: 'tail', arguments: {} }] };

describe('returnDirect with a streaming tool reads the stream whole (finding 2)', () => {
  it('ends the run with every item of the stream, not its first batch', async () => {
    const { tool, state } = streamingDirectTool(12);
    const model = new ScriptedModel([tailCall]);
    const run = await createChain({ model, tools: [tool], streamBatchSize: 5 }).invoke('tail');
    const lines = Array.from({ length: 12 }, (_, i) => `line ${i + 1}`);
    expect(run.result).toBe(JSON.stringify(lines));
    expect(run.intermediateSteps[0]?.observation).toMatchObject({ success: true, output: lines });
    expect(toolMessages(run.transcript)[0]?.output).toEqual(lines);
    expect(state.closed).toBe(true);
    model.assertComplete();
  });

  it('streams as usual when the call is not alone in its step', async () => {
    const { tool } = streamingDirectTool(12);
    const model = new ScriptedModel([
      { toolCalls: [...tailCall.toolCalls, pingCall(1)] },
      { text: 'read some lines' },
    ]);
    const run = await createChain({ model, tools: [tool, ping], streamBatchSize: 5 }).invoke('go');
    expect(run.result).toBe('read some lines');
    expect(toolMessages(run.transcript)[0]?.output).toMatchObject({
      chunks: ['line 1', 'line 2', 'line 3', 'line 4', 'line 5'],
      done: false,
    });
  });

  it('a stream that fails is a failed result the model reads, not a partial answer', async () => {
    const { tool } = streamingDirectTool(12, 7);
    const model = new ScriptedModel([tailCall, { text: 'the log broke at line 7' }]);
    const run = await createChain({ model, tools: [tool] }).invoke('tail');
    expect(run.result).toBe('the log broke at line 7');
    expect(toolMessages(messagesOf(model.requests[1]))[0]).toMatchObject({
      success: false,
      error: expect.stringContaining('disk gone'),
    });
  });

  it('an endless stream is bounded by toolTimeoutMs, and closed', async () => {
    const { tool, state } = streamingDirectTool(Number.POSITIVE_INFINITY);
    const model = new ScriptedModel([tailCall, { text: 'the log never ends' }]);
    const chain = createChain({ model, tools: [tool], toolTimeoutMs: 50 });
    const outcome = await within(5_000, chain.invoke('tail'));
    if (outcome === 'hung' || outcome.settled !== 'resolved') throw new Error('run did not end');
    expect(outcome.value.result).toBe('the log never ends');
    expect(toolMessages(messagesOf(model.requests[1]))[0]).toMatchObject({
      success: false,
      error: expect.stringMatching(/timed out after 50 ms/),
    });
    expect(state.closed).toBe(true);
  });
});

describe('the limit that fired is the failure, also with the budget spent exactly (finding 7)', () => {
  it("a time limit with 'generate' and no tokens left: TimeoutError, saying why no final call", async () => {
    const { tools } = duplicateAndSlowTools();
    const model = new ScriptedModel([
      {
        toolCalls: [{ id: 's1', name: 'slow', arguments: {} }],
        usage: { inputTokens: 50, outputTokens: 10 },
      },
    ]);
    const chain = createChain({
      model,
      tools,
      maxTokens: 60,
      maxExecutionTime: 100,
      earlyStopping: 'generate',
    });
    const error = await rejectionOf(TimeoutError, chain.invoke('go'));
    expect(error).toMatchObject({ code: 'TIMEOUT', timeoutMs: 100 });
    expect(error.message).toMatch(/maxExecutionTime \(100 ms\).*'generate' made no final call/);
    model.assertComplete();
  });

  it("maxIterations with 'generate' and no tokens left: ProtocolError, as without earlyStopping", async () => {
    const model = new ScriptedModel([
      { toolCalls: [pingCall(1)], usage: { inputTokens: 50, outputTokens: 10 } },
    ]);
    const options = { model, tools: [ping], maxIterations: 1, maxTokens: 60 } as const;
    const error = await rejectionOf(
      ProtocolError,
      createChain({ ...options, earlyStopping: 'generate' }).invoke('go'),
    );
    expect(error.message).toMatch(/maxIterations \(1\).*'generate' made no final call/);
    expect(partialOf(error).output).toMatchObject({
      failure: { code: 'PROTOCOL_ERROR', limit: 1 },
    });
  });
});

describe("'force' with structured output is refused at construction (finding 11)", () => {
  const model = new ScriptedModel([]);
  const configErrorFor = (overrides: Record<string, unknown>) =>
    thrownBy(ConfigError, () =>
      createChain({ model, ...overrides } as unknown as ChainOptions<string>),
    );

  it('names earlyStopping as the option and the structured option it conflicts with', () => {
    const schema = configErrorFor({ earlyStopping: 'force', outputSchema: z.object({}) });
    expect(schema.option).toBe('earlyStopping');
    expect(schema.message).toMatch(/'force' cannot be combined with outputSchema/);
    const json = configErrorFor({
      earlyStopping: 'force',
      responseFormat: { type: 'json_schema', schema: { type: 'object' } },
    });
    expect(json.message).toMatch(
      /'force' cannot be combined with responseFormat \("json_schema"\)/,
    );
  });
});

describe('returnDirect is decided by the tool name, whoever runs it (finding 3)', () => {
  it('a remote executor running a returnDirect tool by its name still ends the run', async () => {
    const quote = defineTool({
      name: 'quote',
      description: 'Returns a quote.',
      input: z.object({}),
      execute: () => 'local quote',
      returnDirect: true,
    });
    const remote: RemoteToolExecutor = {
      name: 'remote-1',
      shadowLocalTools: true,
      listTools: () => [quote.spec],
      execute: async (call) => ({
        toolCallId: call.id,
        name: call.name,
        output: 'remote quote',
        success: true,
      }),
    };
    const model = new ScriptedModel([{ toolCalls: [{ id: 'q1', name: 'quote', arguments: {} }] }]);
    const run = await createChain({ model, tools: [quote], remote }).invoke('a quote');
    expect(run.result).toBe('remote quote');
    expect(run.details().toolCalls[0]?.executor).toBe('remote-1');
    model.assertComplete();
  });
});
