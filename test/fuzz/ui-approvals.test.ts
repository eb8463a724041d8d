// What a browser posts back is untrusted input: random UI messages (random parts, states,
// approval objects, ids naming this run, another run or nothing statecraft made) through
// uiApprovalResponses either give answers for this chat's run only, each naming the call its
// id names, or are refused with an InputError; never another error, never another run's call.
import fc from 'fast-check';
import { InputError } from 'statecraft';
import { uiApprovalResponses } from 'statecraft/ai-sdk';
import { describe, expect, it } from 'vitest';
import { approvalIdOf } from '../../src/ui-stream/approval-id.js';
import { settingsFromEnv } from './properties.js';

const { seed } = settingsFromEnv();
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const RUN = 'chat:1/é';

const callId = fc.oneof(fc.constantFrom('c1', 'call:2', 'x/y'), fc.string({ maxLength: 6 }));
const approvalId = fc.oneof(
  callId.map((call) => approvalIdOf(RUN, call)),
  fc
    .tuple(fc.constantFrom('other', 'chat:1', ''), callId)
    .map(([run, call]) => approvalIdOf(run, call)),
  fc.string({ maxLength: 12 }),
  fc.constantFrom('%E0%A4%A:c1', `${encodeURIComponent(RUN)}:`, '::'),
);
// Mostly well-formed, so that answers are reached often; junk at every level now and then.
const junk = { arbitrary: fc.anything(), weight: 1 };
const approval = fc.oneof(
  {
    arbitrary: fc.record(
      {
        id: approvalId,
        approved: fc.boolean(),
        reason: fc.option(fc.string(), { nil: undefined }),
      },
      { requiredKeys: ['id', 'approved'] },
    ),
    weight: 8,
  },
  junk,
);
const part = fc.oneof(
  {
    arbitrary: fc.record(
      {
        type: fc.constantFrom('tool-drop_table', 'text', 'dynamic-tool'),
        state: fc.constantFrom('approval-responded', 'approval-responded', 'output-available'),
        toolCallId: fc.option(callId, { nil: undefined }),
        approval,
      },
      { requiredKeys: ['state'] },
    ),
    weight: 8,
  },
  junk,
);
const message = fc.oneof(
  {
    arbitrary: fc.record({
      id: fc.string(),
      role: fc.constantFrom('assistant', 'assistant', 'user'),
      parts: fc.oneof({ arbitrary: fc.array(part, { maxLength: 4 }), weight: 8 }, junk),
    }),
    weight: 8,
  },
  junk,
);
const posted = fc.oneof(
  { arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }), weight: 8 },
  junk,
);

describe('uiApprovalResponses under fuzz', () => {
  it("answers for this chat's run only, or an InputError", () => {
    let answered = 0;
    fc.assert(
      fc.property(posted, (messages) => {
        let answers: ReturnType<typeof uiApprovalResponses>;
        try {
          answers = uiApprovalResponses(messages, { runId: RUN });
        } catch (error) {
          expect(error).toBeInstanceOf(InputError);
          return;
        }
        answered += answers.length;
        for (const answer of answers) {
          expect(answer.runId).toBe(RUN);
          expect(answer.approvalId).toBe(approvalIdOf(RUN, answer.callId));
          expect(typeof answer.approved).toBe('boolean');
        }
      }),
      { seed, numRuns: RUNS },
    );
    // The property was tested on answers, not only on refusals.
    expect(answered).toBeGreaterThan(0);
  });
});
