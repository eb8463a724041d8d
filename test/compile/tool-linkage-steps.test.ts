import fc from 'fast-check';
import {
  assistantMessage,
  type Message,
  systemMessage,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { describe, expect, it } from 'vitest';
import {
  appendChecked,
  checkReadyForModel,
  pendingToolCalls,
} from '../../src/compile/tool-linkage.js';
import { Transcript } from '../../src/transcript.js';

// The step of a transcript is derived on append from its parent's (tool-linkage.ts), not
// scanned back each time: the derivation must agree with the scan of the same messages.

const messageArb: fc.Arbitrary<Message> = fc.oneof(
  fc.constant(userMessage('u')),
  fc.constant(systemMessage('s')),
  fc.subarray(['a', 'b', 'c']).map((ids) =>
    assistantMessage(
      'x',
      ids.map((id) => ({ id, name: 't', arguments: {} })),
    ),
  ),
  fc
    .constantFrom('a', 'b', 'c', 'd')
    .map((id) => toolResultMessage({ toolCallId: id, name: 't', output: 1, success: true })),
);

/** What the linkage rules say of a transcript: its pending calls, and whether a model may be called. */
function verdict(transcript: Transcript) {
  let ready: string;
  try {
    checkReadyForModel(transcript);
    ready = 'ready';
  } catch (error) {
    ready = (error as Error).message;
  }
  return { pending: pendingToolCalls(transcript), ready };
}

describe('tool-linkage steps derived on append (issue 14 review)', () => {
  it('agree with a scan of the same transcript, on 3,000 random message lists', () => {
    fc.assert(
      fc.property(
        fc.array(messageArb, { maxLength: 8 }),
        fc.array(messageArb, { maxLength: 8 }),
        (given, appended) => {
          // A prefix given as it is (scanned), then appends through the checks (derived).
          let transcript = Transcript.from(given);
          for (const message of appended) {
            try {
              transcript = appendChecked(transcript, message);
            } catch {
              return; // refused: nothing derived to compare
            }
          }
          expect(verdict(transcript)).toEqual(verdict(Transcript.from([...given, ...appended])));
        },
      ),
      { numRuns: 3_000, seed: 14 },
    );
  });
});
