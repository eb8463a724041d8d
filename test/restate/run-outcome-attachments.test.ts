// What a run on Restate sends back to its client (the run's outcome): a chain whose input holds
// a screenshot and whose tool returns the same bytes twice makes three model calls, so its
// transcript and `details()` hold the image seven times; the outcome carries the bytes once and
// the client gets every copy back whole. The outcome is what a worker's step returns, so it is
// tested as the JSON that crosses; restate-attachments.test.ts runs such runs on a real
// deployment (one Restate server fewer for the suite to start).
import { type ChainPartialResult, type Message, ModelError } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { encode } from '../../src/durable/codec.js';
import { failed, type RunOutcome, settle, succeeded } from '../../src/restate/run-outcome.js';
import {
  ATTACHMENT_INPUT,
  attachmentChain,
  attachmentModel,
  EXPECTED_ANSWER,
  IMAGE_BASE64,
} from '../durable/attachments-workload.js';

/** The base64 of every attachment a model call was sent (its messages as details() keeps them). */
const imagesIn = (call: { request: { messages: readonly Message[] } }) =>
  call.request.messages.flatMap((message) =>
    message.role === 'user' || message.role === 'tool'
      ? (message.attachments ?? []).map((image) => image.data)
      : [],
  );

const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** `outcome` as the client reads it: JSON text, parsed. */
const crossed = (outcome: RunOutcome) => JSON.parse(JSON.stringify(outcome)) as RunOutcome;

describe("a run's outcome with attachments", () => {
  it('carries the bytes once however many model calls and results hold them, and gives each back', async () => {
    const result = await attachmentChain(attachmentModel()).invoke(ATTACHMENT_INPUT);
    expect(result.text).toBe(EXPECTED_ANSWER);
    const calls = result.details().modelCalls;
    expect(calls.map((call) => imagesIn(call).length)).toEqual([1, 2, 3]);

    const wire = crossed(succeeded(result));
    expect(occurrences(JSON.stringify(wire), IMAGE_BASE64)).toBe(1);

    const back = settle<typeof result>(wire);
    expect(back.text).toBe(EXPECTED_ANSWER);
    expect(back.transcript).toEqual(result.transcript);
    const backCalls = back.details().modelCalls;
    expect(backCalls.map((call) => imagesIn(call))).toEqual(calls.map((call) => imagesIn(call)));
  });

  it('carries a failed run partial result bytes once too', async () => {
    const model = attachmentModel(async (step) => {
      if (step === 2) throw new ModelError('overloaded', { retryable: false });
    });
    const error = await attachmentChain(model)
      .invoke(ATTACHMENT_INPUT)
      .then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
    expect(ModelError.isInstance(error)).toBe(true);

    const wire = crossed(failed(error));
    expect(occurrences(JSON.stringify(wire), IMAGE_BASE64)).toBe(1);
    const revived = (() => {
      try {
        settle(wire);
      } catch (thrown) {
        return thrown as ModelError;
      }
      throw new Error('a failed outcome settled');
    })();
    const partial = revived.partial as ChainPartialResult;
    expect(partial.transcript).toEqual(
      ((error as ModelError).partial as ChainPartialResult).transcript,
    );
    // The failed call too: details() keeps what it was sent.
    expect(partial.details().modelCalls.map((call) => imagesIn(call).length)).toEqual([1, 2, 3]);
    expect(new Set(partial.details().modelCalls.flatMap(imagesIn))).toEqual(
      new Set([IMAGE_BASE64]),
    );
  });

  it('settles an outcome whose bytes are inline (from a worker that sent no table)', async () => {
    const result = await attachmentChain(attachmentModel()).invoke(ATTACHMENT_INPUT);
    const { details: _method, ...rest } = result;
    const inline = crossed({ ok: true, output: encode(rest) });
    const back = settle<typeof result>(inline);
    expect(back.transcript).toEqual(result.transcript);
  });
});
