// SPEC R1 as the chain implements it: stream() yields typed events (state changes, text
// deltas, tool calls, tool results, warnings, final) in the order things happened; a failed
// run yields `final` and then throws its typed error.
import {
  AbortError,
  type ChainStreamEvent,
  createChain,
  ModelError,
  ProtocolError,
} from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { add, drain } from './helpers.js';

/** A compact, comparable view of an event. */
function label(event: ChainStreamEvent): string {
  switch (event.type) {
    case 'state':
      return `state:${event.state}`;
    case 'text-delta':
      return `text#${event.iteration}:${event.delta}`;
    case 'tool-call':
      return `call:${event.toolCall.id}`;
    case 'tool-result':
      return `result:${event.result.toolCallId}:${String(event.result.output)}`;
    case 'warning':
      return `warning:${event.kind}:${event.text}`;
    case 'approval-requested':
      return `approval?:${event.request.callId}`;
    case 'approval-decided':
      return `approval:${event.decision.callId}:${event.decision.approved}`;
    case 'final':
      return `final:${event.output.status}`;
  }
}

describe('chain.stream()', () => {
  it('yields states, deltas, calls, results, warnings and final in order', async () => {
    const model = new ScriptedModel([
      {
        chunks: ['Let me ', 'add.'],
        toolCalls: [
          { id: 'c1', name: 'add', arguments: { a: 1, b: 2 } },
          { id: 'c2', name: 'add', arguments: { a: 3, b: 4 } },
        ],
      },
      { chunks: ['The answers ', 'are 3 ', 'and 7.'] },
    ]);
    const chain = createChain({
      model,
      tools: [add],
      warningPrompt: { iterations: 'Wrap up.' },
      warningThreshold: { iterations: 1 },
    });
    const { events, error } = await drain(chain.stream('add twice'));
    expect(error).toBeUndefined();
    expect(events.map(label)).toEqual([
      'state:thinking',
      'text#1:Let me ',
      'text#1:add.',
      'state:doing',
      'call:c1',
      'call:c2',
      'result:c1:3',
      'result:c2:7',
      'warning:iterations:Wrap up.',
      'state:thinking',
      'text#2:The answers ',
      'text#2:are 3 ',
      'text#2:and 7.',
      'state:validating',
      'state:succeeded',
      'final:succeeded',
    ]);
    const final = events.at(-1);
    if (final?.type !== 'final' || final.output.status !== 'succeeded') throw new Error('no final');
    expect(final.output.result).toBe('The answers are 3 and 7.');
    expect(final.output.iterations).toBe(2);
    // The tool-call events carry the parsed calls.
    expect(events.find((e) => e.type === 'tool-call')).toMatchObject({
      toolCall: { id: 'c1', name: 'add', arguments: { a: 1, b: 2 } },
    });
  });

  it('streams the same run invoke() would make', async () => {
    const script = [
      { toolCalls: [{ id: 'c1', name: 'add', arguments: { a: 2, b: 2 } }] },
      { text: 'four' },
    ];
    const invoked = await createChain({ model: new ScriptedModel(script), tools: [add] }).invoke(
      'sum',
    );
    const { events } = await drain(
      createChain({ model: new ScriptedModel(script), tools: [add] }).stream('sum'),
    );
    const final = events.at(-1);
    if (final?.type !== 'final' || final.output.status !== 'succeeded') throw new Error('no final');
    expect(final.output.transcript.toArray()).toEqual(invoked.transcript);
    expect(final.output.usage).toEqual(invoked.usage);
  });

  it('on failure yields final, then throws the typed error', async () => {
    const model = new ScriptedModel(() => ({
      toolCalls: [{ name: 'add', arguments: { a: 1, b: 1 } }],
    }));
    const chain = createChain({ model, tools: [add], maxIterations: 2 });
    const { events, error } = await drain(chain.stream('loop'));
    expect(ProtocolError.isInstance(error)).toBe(true);
    expect(events.map((e) => e.type).slice(-2)).toEqual(['state', 'final']);
    expect(events.at(-2)).toEqual({ type: 'state', state: 'failed' });
    const final = events.at(-1);
    if (final?.type !== 'final') throw new Error('no final');
    expect(final.output.status).toBe('failed');
    if (final.output.status === 'failed') expect(final.output.failure.code).toBe('PROTOCOL_ERROR');
    // user, assistant, tool, assistant, and the last call answered as not run.
    expect((error as ProtocolError).partial?.transcript).toHaveLength(5);
  });

  it('a model error yields final, then throws the ModelError', async () => {
    const model = new ScriptedModel([
      { error: new ModelError('overloaded', { retryable: true, status: 529 }) },
    ]);
    const { events, error } = await drain(createChain({ model }).stream('go'));
    expect(events.at(-1)).toMatchObject({ type: 'final', output: { status: 'failed' } });
    if (!ModelError.isInstance(error)) throw error;
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(529);
  });

  it('aborting mid-stream yields the deltas so far, final, then an AbortError', async () => {
    const model = new ScriptedModel([
      { chunks: ['one ', 'two ', 'three ', 'four'], chunkDelayMs: 40 },
    ]);
    const controller = new AbortController();
    const events: ChainStreamEvent[] = [];
    let error: unknown;
    try {
      for await (const event of createChain({ model }).stream('count', {
        signal: controller.signal,
      })) {
        events.push(event);
        if (event.type === 'text-delta' && event.delta === 'two ') controller.abort();
      }
    } catch (caught) {
      error = caught;
    }
    expect(AbortError.isInstance(error)).toBe(true);
    const deltas = events.flatMap((e) => (e.type === 'text-delta' ? [e.delta] : []));
    expect(deltas).toEqual(['one ', 'two ']);
    expect(events.at(-1)).toMatchObject({ type: 'final', output: { status: 'failed' } });
  });

  it('records the streamed answer as the run’s text and transcript', async () => {
    const model = new ScriptedModel([{ chunks: ['Hel', 'lo'] }]);
    const { events } = await drain(createChain({ model }).stream('hi'));
    const final = events.at(-1);
    if (final?.type !== 'final' || final.output.status !== 'succeeded') throw new Error('no final');
    expect(final.output.text).toBe('Hello');
    expect(final.output.transcript.last).toMatchObject({ role: 'assistant', content: 'Hello' });
  });
});
