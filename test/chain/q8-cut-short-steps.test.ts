// SPEC Q8: a failed run's transcript tells the truth. However a tool step is cut short — the
// time limit, the caller's abort, an afterToolCall or beforeToolCall hook that throws, a
// decision's deadline under onApprovalTimeout 'fail', a tool step that breaks — every call
// that finished keeps its real result in partial.transcript, partial.intermediateSteps and
// details(); only the calls that did not finish are answered "not run". The transcript is
// valid input for the next run, which then reads what really happened.
import {
  AbortError,
  ChainError,
  type ChainPartialResult,
  createChain,
  defineTool,
  InvalidToolCallError,
  type Message,
  type RunDetails,
  TimeoutError,
  ToolHookError,
  userMessage,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aborted, deferred, partialOf, rejectionOf, toolMessages } from './helpers.js';

/**
 * `charge` finishes at once (a side effect that happened); `wait` runs until its signal
 * aborts, then still answers (a tool that ignores its abort), as `charged` resolves when
 * `charge` has finished.
 */
function sideEffects() {
  const done: string[] = [];
  const charged = deferred();
  const charge = defineTool({
    name: 'charge',
    description: 'Charges a card.',
    input: z.object({ cents: z.number() }),
    execute: ({ cents }) => {
      done.push(`charged ${cents}`);
      charged.resolve();
      return `charged ${cents}`;
    },
  });
  const wait = defineTool({
    name: 'wait',
    description: 'Waits for the bank.',
    input: z.object({}),
    execute: async (_args, { signal }) => {
      await aborted(signal);
      done.push('waited');
      return 'the bank answered, too late';
    },
  });
  return { tools: [charge, wait], done, charged: charged.promise };
}

const CHARGE = { id: 'c1', name: 'charge', arguments: { cents: 500 } };
const WAIT = { id: 'c2', name: 'wait', arguments: {} };

/** One step that calls both tools, then (for a next call) an answer. */
const bothTools = () => new ScriptedModel([{ toolCalls: [CHARGE, WAIT] }, { text: 'Done.' }]);

/** The details of a partial run: a method or an object, whichever this version has. */
function detailsOf(partial: ChainPartialResult): RunDetails {
  const details = partial.details as RunDetails | (() => RunDetails);
  return typeof details === 'function' ? details() : details;
}

/** c1's tool message: its real result. */
const chargedAnswer = {
  role: 'tool',
  toolCallId: 'c1',
  name: 'charge',
  success: true,
  output: 'charged 500',
};

/** The transcript, fed to a new run, is valid input, and that run reads c1's real result. */
async function continuesWithTruth(transcript: readonly Message[]): Promise<void> {
  const model = new ScriptedModel([{ text: 'Noted.' }]);
  const next = createChain({ model });
  await expect(
    next.invoke({ messages: [...transcript, userMessage('Go on.')] }),
  ).resolves.toMatchObject({ status: 'succeeded' });
  const sent = model.requests[0]?.messages.toArray() ?? [];
  expect(toolMessages(sent).find((m) => m.toolCallId === 'c1')).toMatchObject(chargedAnswer);
}

/** What every cut-short run below must report of c1, the call that finished. */
function expectChargeKept(partial: ChainPartialResult): void {
  expect(toolMessages(partial.transcript).find((m) => m.toolCallId === 'c1')).toEqual(
    chargedAnswer,
  );
  expect(partial.intermediateSteps.map((s) => [s.action.id, s.observation.success])).toContainEqual(
    ['c1', true],
  );
  const c1 = detailsOf(partial).toolCalls.find((c) => c.call.id === 'c1');
  expect(c1?.result).toMatchObject({ success: true, output: 'charged 500' });
  expect(c1?.discarded).toBeUndefined();
}

describe('a step cut short keeps the calls that finished (SPEC Q8)', () => {
  it('maxExecutionTime: the finished call keeps its result; the one still running is not run', async () => {
    const { tools, done } = sideEffects();
    const chain = createChain({ model: bothTools(), tools, maxExecutionTime: 1_500 });

    const error = await rejectionOf(TimeoutError, chain.invoke('Pay the bill.'));

    const partial = partialOf(error);
    expectChargeKept(partial);
    expect(toolMessages(partial.transcript).find((m) => m.toolCallId === 'c2')).toMatchObject({
      success: false,
      error: expect.stringMatching(/not run, the time limit was reached/),
    });
    expect(partial.intermediateSteps.map((s) => s.action.id)).toEqual(['c1']);
    expect(partial.steps).toHaveLength(1);
    // The bank answers after the step was cut short: if details lists it, then as dropped,
    // as the transcript has it (the model was told it did not run).
    const c2 = detailsOf(partial).toolCalls.find((c) => c.call.id === 'c2');
    if (c2) expect(c2.discarded).toBe(true);
    await expect.poll(() => done).toContain('waited');
    await continuesWithTruth(partial.transcript);
  }, 30_000);

  it("maxExecutionTime with earlyStopping 'generate': the final call reads what ran", async () => {
    const { tools } = sideEffects();
    const model = new ScriptedModel([{ toolCalls: [CHARGE, WAIT] }, { text: 'Charged; no bank.' }]);
    const chain = createChain({ model, tools, maxExecutionTime: 1_500, earlyStopping: 'generate' });

    const result = await chain.invoke('Pay the bill.');

    expect(result.stopped).toEqual({ reason: 'maxExecutionTime', method: 'generate' });
    const final = model.requests[1]?.messages.toArray() ?? [];
    expect(toolMessages(final).find((m) => m.toolCallId === 'c1')).toMatchObject(chargedAnswer);
    expect(result.intermediateSteps.map((s) => s.action.id)).toEqual(['c1']);
    // The bank's call ended once the step was cut short, while the final call was made:
    // details() shows it, marked as dropped, as the transcript has it (not run).
    const c2 = result.details().toolCalls.find((c) => c.call.id === 'c2');
    expect(c2?.discarded).toBe(true);
    expect(toolMessages(result.transcript).find((m) => m.toolCallId === 'c2')).toMatchObject({
      success: false,
      error: expect.stringMatching(/not run, the time limit was reached/),
    });
  }, 30_000);

  it("an abort (the caller's signal) keeps the calls that finished", async () => {
    const { tools, charged } = sideEffects();
    const controller = new AbortController();
    // Aborted once charge has finished and its result had a turn to reach the run.
    void charged.then(() => setTimeout(() => controller.abort('the user left'), 0));
    const chain = createChain({ model: bothTools(), tools });

    const error = await rejectionOf(
      AbortError,
      chain.invoke('Pay the bill.', { signal: controller.signal }),
    );

    const partial = partialOf(error);
    expectChargeKept(partial);
    expect(toolMessages(partial.transcript).find((m) => m.toolCallId === 'c2')).toMatchObject({
      success: false,
      error: expect.stringMatching(/not run, the run failed: The run was cancelled: the user left/),
    });
    await continuesWithTruth(partial.transcript);
  });

  it('an afterToolCall that throws after both calls ran: both keep their results', async () => {
    const { tools } = sideEffects();
    const fast = defineTool({
      name: 'notify',
      description: 'Notifies.',
      input: z.object({}),
      execute: () => 'notified',
    });
    const model = new ScriptedModel([
      { toolCalls: [CHARGE, { id: 'c2', name: 'notify', arguments: {} }] },
    ]);
    const chain = createChain({
      model,
      tools: [...tools, fast],
      afterToolCall: (call) => {
        if (call.id === 'c1') throw new Error('audit log is down');
      },
    });

    const error = await rejectionOf(ChainError, chain.invoke('Pay the bill.'));

    expect(ToolHookError.isInstance(error.cause)).toBe(true);
    const partial = partialOf(error);
    expectChargeKept(partial);
    expect(toolMessages(partial.transcript).find((m) => m.toolCallId === 'c2')).toMatchObject({
      success: true,
      output: 'notified',
    });
    expect(partial.intermediateSteps.map((s) => s.observation.output)).toEqual([
      'charged 500',
      'notified',
    ]);
    expect(detailsOf(partial).toolCalls.map((c) => c.result.success)).toEqual([true, true]);
    await continuesWithTruth(partial.transcript);
  });

  it('a beforeToolCall that throws for one call: the other keeps its result, it was not run', async () => {
    const { tools, done } = sideEffects();
    const chain = createChain({
      model: bothTools(),
      tools,
      beforeToolCall: async (call) => {
        if (call.id !== 'c2') return;
        await new Promise((resolve) => setTimeout(resolve, 10));
        throw new Error('the bank is not allowed today');
      },
    });

    const error = await rejectionOf(ChainError, chain.invoke('Pay the bill.'));

    const partial = partialOf(error);
    expectChargeKept(partial);
    expect(done).toEqual(['charged 500']);
    expect(toolMessages(partial.transcript).find((m) => m.toolCallId === 'c2')).toMatchObject({
      success: false,
      error: expect.stringMatching(/not run, the run failed: beforeToolCall failed/),
    });
    expect(partial.intermediateSteps.map((s) => s.action.id)).toEqual(['c1']);
    await continuesWithTruth(partial.transcript);
  });

  it("a decision's deadline under onApprovalTimeout 'fail': what ran keeps its result", async () => {
    const { tools } = sideEffects();
    const refund = defineTool({
      name: 'refund',
      description: 'Refunds.',
      input: z.object({}),
      needsApproval: true,
      execute: () => 'refunded',
    });
    const model = new ScriptedModel([
      { toolCalls: [CHARGE, { id: 'c2', name: 'refund', arguments: {} }] },
    ]);
    const chain = createChain({
      model,
      tools: [...tools, refund],
      approvalTimeoutMs: 50,
      onApprovalTimeout: 'fail',
    });

    const error = await rejectionOf(
      TimeoutError,
      chain.invoke('Pay the bill.', { approve: () => undefined }),
    );

    const partial = partialOf(error);
    expectChargeKept(partial);
    expect(toolMessages(partial.transcript).find((m) => m.toolCallId === 'c2')).toMatchObject({
      success: false,
      error: expect.stringMatching(/not run, the run failed: No decision on tool call c2/),
    });
    await continuesWithTruth(partial.transcript);
  });

  it("a tool step that breaks (invalidToolCall 'fail'): the call that finished keeps its result", async () => {
    const { tools } = sideEffects();
    const model = new ScriptedModel([
      { toolCalls: [CHARGE, { id: 'c2', name: 'charge', arguments: { cents: 'lots' } }] },
    ]);
    const chain = createChain({ model, tools, invalidToolCall: 'fail' });

    const error = await rejectionOf(ChainError, chain.invoke('Pay the bill.'));

    expect(InvalidToolCallError.isInstance(error.cause)).toBe(true);
    const partial = partialOf(error);
    expectChargeKept(partial);
    expect(toolMessages(partial.transcript).find((m) => m.toolCallId === 'c2')).toMatchObject({
      success: false,
      error: expect.stringMatching(/not run, the run failed/),
    });
    await continuesWithTruth(partial.transcript);
  });
});
