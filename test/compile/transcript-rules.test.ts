// SPEC P1–P2, issue 14: the order providers accept (nothing between an assistant's calls and
// their results), calls left open, and what the cancellation, truncation and summary
// mutations leave in the transcript.
import {
  assistantMessage,
  type Message,
  systemMessage,
  TranscriptError,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { type ContextMutation, compileTurn, mutate, reduceTurnContext } from 'statecraft/compile';
import { describe, expect, it } from 'vitest';
import { thrownBy } from '../support/errors.js';

const call = (id: string, name = 'lookup') => ({ id, name, arguments: { q: id } });
const ok = (toolCallId: string, name = 'lookup') =>
  mutate.toolResult({ toolCallId, name, output: `result ${toolCallId}`, success: true });
const result = (toolCallId: string) =>
  toolResultMessage({ toolCallId, name: 'lookup', output: 1, success: true });

const reduceError = (transcript: Iterable<Message>, mutations: ContextMutation[]) =>
  thrownBy(TranscriptError, () => reduceTurnContext(transcript, mutations));
const compileError = (transcript: Iterable<Message>, mutations: ContextMutation[]) =>
  thrownBy(TranscriptError, () => compileTurn({ transcript, mutations }));

describe('nothing comes between tool calls and their results', () => {
  const start = [userMessage('Find two things.')];
  const cases: [string, ContextMutation, string][] = [
    ['a user message', mutate.userMessage('Hurry up.'), 'user message'],
    ['a system note', mutate.systemNote('Two generations left.'), 'system message'],
  ];

  for (const [what, interloper, role] of cases) {
    it(`rejects ${what} before the first result, in reduceTurnContext and compileTurn alike`, () => {
      const mutations = [mutate.assistantMessage('', [call('a'), call('b')]), interloper];
      for (const error of [reduceError(start, mutations), compileError(start, mutations)]) {
        expect(error.index).toBe(2);
        expect(error.message).toContain(`mutations[1] (${interloper.type})`);
        expect(error.message).toContain(
          `transcript[2]: ${role} between the tool calls of transcript[1] and their results`,
        );
        expect(error.message).toContain("'a' (lookup), 'b' (lookup)");
      }
    });

    it(`rejects ${what} between two results of one step`, () => {
      const mutations = [mutate.assistantMessage('', [call('a'), call('b')]), ok('a'), interloper];
      const error = compileError(start, mutations);
      expect(error.index).toBe(3);
      expect(error.message).toContain("unanswered: 'b' (lookup)");
    });
  }

  it("accepts notes after a step's last result: the order the chain machine writes", () => {
    const { messages } = compileTurn({
      transcript: start,
      mutations: [
        mutate.assistantMessage('', [call('a'), call('b')]),
        ok('b'),
        ok('a'),
        mutate.systemNote('Stop the streams you no longer need.'),
        mutate.systemNote('Stream s1 sent 2 more chunk(s).'),
        mutate.userMessage('And a third thing?'),
      ],
    });
    expect(messages.toArray().map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'tool',
      'system',
      'system',
      'user',
    ]);
  });

  it('rejects a transcript given with a note between calls and results, naming the note', () => {
    // Given as it is (never appended through a mutation): found when the step is read.
    const given = [
      userMessage('q'),
      assistantMessage('', [call('a'), call('b')]),
      result('a'),
      systemMessage('misplaced'),
      result('b'),
    ];
    const error = compileError(given, []);
    expect(error.index).toBe(3);
    expect(error.message).toContain(
      "transcript[3]: system message between an assistant's tool calls and their results",
    );
    // Answering the rest of a step after such a note is rejected too.
    const open = given.slice(0, 4);
    expect(reduceError(open, [ok('b')]).index).toBe(3);
    // And a replacement context is checked like any other.
    const replaced = reduceError([], [mutate.contextReplace(given)]);
    expect(replaced.index).toBe(3);
    expect(replaced.message).toContain('mutations[0] (contextReplace)');
  });
});

describe('calls left unanswered at the end of the mutations', () => {
  const mutations = [mutate.userMessage('q'), mutate.assistantMessage('', [call('a')])];

  it('are a step in progress for reduceTurnContext alone: its transcript stays open', () => {
    const { transcript } = reduceTurnContext([], mutations);
    expect(transcript.last).toMatchObject({ role: 'assistant', toolCalls: [call('a')] });
  });

  it('are reported by reduceTurnContext with requireAnswered, exactly as compileTurn reports them', () => {
    const reduced = thrownBy(TranscriptError, () =>
      reduceTurnContext([], mutations, undefined, { requireAnswered: true }),
    );
    const compiled = compileError([], mutations);
    expect(reduced.index).toBe(1);
    expect(reduced.message).toBe(compiled.message);
    expect(reduced.message).toContain(
      "transcript[1]: the model cannot be called while its tool calls are unanswered: 'a' (lookup)",
    );
    const answered = reduceTurnContext([], [...mutations, ok('a')], undefined, {
      requireAnswered: true,
    });
    expect(answered.transcript.length).toBe(3);
  });
});

describe('toolCancelled(callId, toolName, reason)', () => {
  it('adds the call itself before its cancellation when the transcript does not hold it', () => {
    const { transcript } = compileTurn({
      transcript: [userMessage('Search.')],
      mutations: [mutate.toolCancelled('c7', 'search', 'the user pressed stop')],
    });
    expect(transcript.toArray().slice(1)).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'c7', name: 'search', arguments: {} }] },
      {
        role: 'tool',
        toolCallId: 'c7',
        name: 'search',
        output: null,
        success: false,
        error: "Tool 'search' was cancelled: the user pressed stop.",
      },
    ]);
  });

  it('answers a call the transcript holds where it is, under the name the call has', () => {
    const { transcript } = compileTurn({
      transcript: [userMessage('q')],
      mutations: [
        mutate.assistantMessage('', [call('a'), call('b', 'fetch')]),
        ok('a'),
        mutate.toolCancelled('b', 'fetch', 'timed out'),
      ],
    });
    expect(transcript.length).toBe(4);
    expect(transcript.last).toMatchObject({ toolCallId: 'b', name: 'fetch', success: false });
  });

  it('rejects adding a call while calls of the step are unanswered, or re-making an earlier one', () => {
    const open = reduceError(
      [],
      [mutate.assistantMessage('', [call('a')]), mutate.toolCancelled('z', 'lookup')],
    );
    expect(open.index).toBe(1);
    expect(open.message).toContain("calls of transcript[0] are unanswered: 'a' (lookup)");
    const earlier = reduceError(
      [],
      [
        mutate.assistantMessage('', [call('a')]),
        ok('a'),
        mutate.assistantMessage('done'),
        mutate.toolCancelled('a', 'lookup'),
      ],
    );
    expect(earlier.index).toBe(3);
    expect(earlier.message).toContain("cannot cancel call 'a' (lookup): transcript[0] made it");
  });
});

describe('assistantTruncated(partial, reason)', () => {
  it('keeps the partial text as it is and the reason on the message', () => {
    const { transcript } = reduceTurnContext(
      [userMessage('Write a poem.')],
      [mutate.assistantTruncated('Roses are', 'the user pressed stop')],
    );
    expect(transcript.last).toEqual({
      role: 'assistant',
      content: 'Roses are',
      toolCalls: [],
      truncated: true,
      truncatedReason: 'the user pressed stop',
    });
    const noReason = reduceTurnContext([], [mutate.assistantTruncated('Roses')]).transcript.last;
    expect(noReason).not.toHaveProperty('truncatedReason');
  });
});

describe('contextSummary(summary, remember)', () => {
  const long = [systemMessage('Base.'), userMessage('long'), assistantMessage('longer')];

  it('takes a message of any role as the summary, keeping the leading system message', () => {
    for (const summary of [
      assistantMessage('So far: we found two flights.'),
      systemMessage('Summary: two flights found.'),
      userMessage('Recap: two flights.'),
    ]) {
      const { transcript } = reduceTurnContext(long, [mutate.contextSummary(summary)]);
      expect(transcript.toArray()).toEqual([systemMessage('Base.'), summary]);
    }
  });

  it('still wraps a string in a user summary message, and stores remember items', () => {
    const { transcript, snapshot } = reduceTurnContext(long, [
      mutate.contextSummary(assistantMessage('Recap.'), ['Prefer direct flights.']),
    ]);
    expect(transcript.last).toEqual(assistantMessage('Recap.'));
    expect(snapshot?.experiences).toEqual([{ id: 1, text: 'Prefer direct flights.' }]);
    const text = reduceTurnContext(long, [mutate.contextSummary('s')]).transcript.last;
    expect(text).toEqual(userMessage('<conversation_summary>\ns\n</conversation_summary>'));
  });

  it('rejects a summary that is a tool result: it would answer no call', () => {
    const error = reduceError(long, [mutate.contextSummary(result('x'))]);
    expect(error.index).toBe(1);
    expect(error.message).toContain("tool result for call 'x'");
  });
});
