// Issue 15, part 2: what a real chain run holds crosses the journal and comes back equal.
import { createChain, defineTool, ModelError, StatecraftError, Transcript } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decode, encode } from '../../src/durable/codec.js';
import { partialOf, rejectionOf } from '../chain/helpers.js';

function roundTrip<T>(value: T): T {
  return decode(JSON.parse(JSON.stringify(encode(value)))) as T;
}

// Its output is JSON-safe (jsonSafeOutput keeps it as it is) yet holds what JSON alone loses.
const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up.',
  input: z.object({ key: z.string() }),
  execute: ({ key }) => ({ key, found: undefined, hits: [1, undefined, 3], $sc: 'user data' }),
});

describe('a chain run through the codec', () => {
  it('round-trips result.transcript, result.steps and the whole result data', async () => {
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: { key: 'a' } }] },
      {
        toolCalls: [
          { id: 'c2', name: 'lookup', arguments: { key: 'b' } },
          { id: 'c3', name: 'missing', arguments: {} },
        ],
      },
      { text: 'done' },
    ]);
    const result = await createChain({ model, tools: [lookup] }).invoke('look a and b up');

    const data = {
      transcript: result.transcript,
      steps: result.steps,
      intermediateSteps: result.intermediateSteps,
      usage: result.usage,
      mutationLog: result.mutationLog,
      details: result.details(),
    };
    const back = roundTrip(data);
    expect(back).toStrictEqual(data);
    // The tool's undefined fields survived the JSON text, where they would have vanished.
    const output = back.steps[0]?.toolResults[0]?.output as Record<string, unknown>;
    expect(Object.hasOwn(output, 'found')).toBe(true);
    expect(output.hits).toEqual([1, undefined, 3]);
    expect(output.$sc).toBe('user data');
    expect(JSON.parse(JSON.stringify(data)).steps[0].toolResults[0].output).not.toHaveProperty(
      'found',
    );
  });

  it('round-trips the Transcript the run compiled as a Transcript', async () => {
    const model = new ScriptedModel([{ text: 'hi' }]);
    await createChain({ model }).invoke('hello');
    const request = model.requests[0];
    if (!request) throw new Error('no request was recorded');
    const back = roundTrip(request);
    expect(back.messages).toBeInstanceOf(Transcript);
    expect(back.messages.toArray()).toEqual(request.messages.toArray());
    expect(back).toEqual(request);
  });

  it("round-trips a failed run's error with its cause and partial run", async () => {
    const cause = Object.assign(new TypeError('socket hang up'), { code: 'ECONNRESET' });
    const model = new ScriptedModel([
      { toolCalls: [{ id: 'c1', name: 'lookup', arguments: { key: 'a' } }] },
      { error: new ModelError('provider failed', { status: 503, retryable: true, cause }) },
    ]);
    const error = await rejectionOf(
      ModelError,
      createChain({ model, tools: [lookup] }).invoke('look a up'),
    );

    const back = roundTrip(error);
    expect(ModelError.isInstance(back)).toBe(true);
    expect(back).toBeInstanceOf(ModelError);
    expect(back).toStrictEqual(error);
    expect(back.message).toBe(error.message);
    expect(back.stack).toBe(error.stack);
    expect(back.status).toBe(503);
    expect(back.retryable).toBe(true);
    // The run wraps the provider's error; its cause chain comes back class by class.
    let revived: unknown = back;
    let original: unknown = error;
    while (original instanceof Error) {
      expect(revived).toBeInstanceOf(Object.getPrototypeOf(original).constructor);
      expect((revived as Error).message).toBe(original.message);
      original = original.cause;
      revived = (revived as Error).cause;
    }
    expect(revived).toBe(original);
    expect(JSON.stringify(encode(back))).toContain('socket hang up');
    expect(JSON.stringify(encode(back))).toContain('ECONNRESET');
    expect(partialOf(back)).toStrictEqual(partialOf(error));
    expect(partialOf(back).details()).toStrictEqual(partialOf(error).details());
    expect(StatecraftError.isInstance(back)).toBe(true);
  });
});
