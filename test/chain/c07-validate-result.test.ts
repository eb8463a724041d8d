// SPEC C7: validateResult(result) → { ok: true } | { ok: false, message }. On false the
// message is appended as a system message and the chain thinks again.
import { ChainError, createChain, ProtocolError, systemMessage } from 'statecraft';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { messagesOf, partialOf, rejectionOf, systemNotes } from './helpers.js';

describe('validateResult (C7)', () => {
  it('a rejected answer gets the message as a system note, and the chain thinks again', async () => {
    const validateResult = vi.fn((result: string) =>
      result.includes('Paris')
        ? ({ ok: true } as const)
        : ({ ok: false, message: 'Name the capital city explicitly.' } as const),
    );
    const model = new ScriptedModel([{ text: 'It is in France.' }, { text: 'Paris.' }]);
    const run = await createChain({ model, validateResult }).invoke('Capital of France?');

    expect(validateResult.mock.calls).toEqual([['It is in France.'], ['Paris.']]);
    expect(run.result).toBe('Paris.');
    expect(run.iterations).toBe(2);
    const second = messagesOf(model.requests[1]);
    expect(second.slice(-2)).toEqual([
      expect.objectContaining({ role: 'assistant', content: 'It is in France.' }),
      systemMessage('Name the capital city explicitly.'),
    ]);
    expect(systemNotes(run.transcript)).toEqual(['Name the capital city explicitly.']);
  });

  it('awaits an async validateResult', async () => {
    let checks = 0;
    const validateResult = async (result: string) => {
      checks++;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return result === 'yes'
        ? ({ ok: true } as const)
        : ({ ok: false, message: `"${result}" is not yes` } as const);
    };
    const model = new ScriptedModel([{ text: 'no' }, { text: 'maybe' }, { text: 'yes' }]);
    const run = await createChain({ model, validateResult }).invoke('say yes');
    expect(run.result).toBe('yes');
    expect(checks).toBe(3);
    expect(systemNotes(messagesOf(model.requests[2]))).toEqual([
      '"no" is not yes',
      '"maybe" is not yes',
    ]);
  });

  it('gets the parsed value with an outputSchema, and only after the schema accepted it', async () => {
    const schema = z.object({ min: z.number(), max: z.number() });
    const validateResult = vi.fn((range: z.infer<typeof schema>) =>
      range.min <= range.max
        ? ({ ok: true } as const)
        : ({ ok: false, message: 'min must not exceed max' } as const),
    );
    const model = new ScriptedModel([
      { text: '{"min": "low"}' }, // fails the schema: validateResult is not asked
      { text: '{"min": 9, "max": 1}' }, // fails validateResult
      { text: '{"min": 1, "max": 9}' },
    ]);
    const run = await createChain({ model, outputSchema: schema, validateResult }).invoke('range');
    expect(validateResult.mock.calls).toEqual([[{ min: 9, max: 1 }], [{ min: 1, max: 9 }]]);
    expect(run.result).toEqual({ min: 1, max: 9 });
    const notes = systemNotes(messagesOf(model.requests[2]));
    expect(notes).toHaveLength(2);
    expect(notes[0]).toContain('does not match the schema');
    expect(notes[1]).toBe('min must not exceed max');
  });

  it('is bounded by maxIterations: ProtocolError with the rejections in the partial transcript', async () => {
    const model = new ScriptedModel(() => ({ text: 'never right' }));
    const chain = createChain({
      model,
      maxIterations: 2,
      validateResult: () => ({ ok: false, message: 'Wrong.' }),
    });
    const error = await rejectionOf(ProtocolError, chain.invoke('go'));
    expect(model.callCount).toBe(2);
    expect(systemNotes(partialOf(error).transcript)).toEqual(['Wrong.', 'Wrong.']);
  });

  it('a validateResult that throws ends the run with a ChainError carrying the cause', async () => {
    const boom = new Error('validator exploded');
    const model = new ScriptedModel([{ text: 'answer' }]);
    const chain = createChain({
      model,
      validateResult: () => {
        throw boom;
      },
    });
    const error = await rejectionOf(ChainError, chain.invoke('go'));
    expect(error.cause).toBe(boom);
    expect(error.message).toContain('validator exploded');
    expect(partialOf(error).transcript.at(-1)).toMatchObject({
      role: 'assistant',
      content: 'answer',
    });
  });
});
