import {
  assistantMessage,
  type Message,
  systemMessage,
  Transcript,
  TranscriptError,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { type ContextMutation, mutate, reduceTurnContext } from 'statecraft/compile';
import { describe, expect, it } from 'vitest';
import { thrownBy } from '../support/errors.js';

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

const call = (id: string, name = 'lookup', args: unknown = { q: id }) => ({
  id,
  name,
  arguments: args,
});
const ok = (toolCallId: string, output: unknown = `result ${toolCallId}`, name = 'lookup') =>
  mutate.toolResult({ toolCallId, name, output, success: true });

function reduceError(transcript: Iterable<Message>, mutations: ContextMutation[]): TranscriptError {
  return thrownBy(TranscriptError, () => reduceTurnContext(transcript, mutations));
}

describe('reduceTurnContext: applying mutations', () => {
  it('applies every message mutation in order and leaves a frozen input untouched', () => {
    const input = deepFreeze([systemMessage('You are terse.'), userMessage('Find two things.')]);
    const snapshotOfInput = JSON.stringify(input);
    const { transcript } = reduceTurnContext(input, [
      mutate.assistantMessage('Looking.', [call('c1'), call('c2')]),
      ok('c1'),
      mutate.toolCancelled('c2', 'lookup', 'timed out after 5 s'),
      mutate.assistantTruncated('Half an ans', 'length'),
      mutate.userMessage('Go on.'),
    ]);
    expect(JSON.stringify(input)).toBe(snapshotOfInput);
    expect(transcript.toArray()).toEqual([
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Find two things.' },
      { role: 'assistant', content: 'Looking.', toolCalls: [call('c1'), call('c2')] },
      { role: 'tool', toolCallId: 'c1', name: 'lookup', output: 'result c1', success: true },
      {
        role: 'tool',
        toolCallId: 'c2',
        name: 'lookup',
        output: null,
        success: false,
        error: "Tool 'lookup' was cancelled: timed out after 5 s.",
      },
      {
        role: 'assistant',
        content: 'Half an ans',
        toolCalls: [],
        truncated: true,
        truncatedReason: 'length',
      },
      { role: 'user', content: 'Go on.' },
    ]);
  });

  it('adds system notes mid-conversation without touching the leading system prompt', () => {
    const { transcript } = reduceTurnContext(
      [systemMessage('Prompt.'), userMessage('q')],
      [mutate.systemNote('Two generations left.')],
    );
    expect(transcript.toArray()).toEqual([
      systemMessage('Prompt.'),
      userMessage('q'),
      { role: 'system', content: 'Two generations left.' },
    ]);
  });

  it('never changes the Transcript it was given', () => {
    const before = Transcript.from([userMessage('hi')]);
    const { transcript } = reduceTurnContext(before, [mutate.assistantMessage('hello')]);
    expect(before.length).toBe(1);
    expect(transcript.length).toBe(2);
    expect(transcript.at(0)).toBe(before.at(0));
  });

  it('assigns ids to tool calls when the mutation is built, so replays agree', () => {
    const m = mutate.assistantMessage('', [{ name: 'lookup', arguments: {} }]);
    const id = m.toolCalls[0]?.id;
    expect(id).toMatch(/^call_/);
    const once = reduceTurnContext([], [m]).transcript.at(0);
    const twice = reduceTurnContext([], [m]).transcript.at(0);
    expect(once).toEqual(twice);
  });

  it('replaces the whole context, checking the new messages', () => {
    const { transcript } = reduceTurnContext(
      [userMessage('old')],
      [mutate.contextReplace([userMessage('new'), assistantMessage('fresh')])],
    );
    expect(transcript.toArray().map((m) => ('content' in m ? m.content : ''))).toEqual([
      'new',
      'fresh',
    ]);
    const error = reduceError(
      [],
      [
        mutate.contextReplace([
          userMessage('q'),
          toolResultMessage({ toolCallId: 'x', name: 't', output: 1, success: true }),
        ]),
      ],
    );
    expect(error.index).toBe(1);
    expect(error.message).toContain('mutations[0] (contextReplace)');
  });

  it('summarises the context, keeping a leading system message', () => {
    const { transcript, snapshot } = reduceTurnContext(
      [systemMessage('Base.'), userMessage('long'), assistantMessage('longer')],
      [mutate.contextSummary('The user asked; we answered.')],
    );
    expect(transcript.toArray()).toEqual([
      { role: 'system', content: 'Base.' },
      {
        role: 'user',
        content: '<conversation_summary>\nThe user asked; we answered.\n</conversation_summary>',
      },
    ]);
    expect(snapshot).toBeUndefined();
    const withoutSystem = reduceTurnContext(
      [userMessage('a')],
      [mutate.contextSummary('s')],
    ).transcript;
    expect(withoutSystem.toArray()).toEqual([
      { role: 'user', content: '<conversation_summary>\ns\n</conversation_summary>' },
    ]);
  });

  it('stores summary `remember` items as experiences on a snapshot based on the system prompt', () => {
    const { snapshot } = reduceTurnContext(
      [systemMessage('Base.'), userMessage('x')],
      [
        mutate.contextSummary('sum', [
          'Prefer git status first.',
          'Prefer git status first.',
          '  ',
        ]),
      ],
    );
    expect(snapshot).toEqual({
      basePrompt: 'Base.',
      experiences: [{ id: 1, text: 'Prefer git status first.' }],
    });
  });
});

describe('reduceTurnContext: tool linkage', () => {
  it('rejects a tool result that answers no pending call, naming mutation and index', () => {
    const error = reduceError(
      [userMessage('q')],
      [mutate.assistantMessage('', [call('c1')]), ok('c9')],
    );
    expect(error.index).toBe(2);
    expect(error.message).toContain('mutations[1] (toolResult)');
    expect(error.message).toContain("transcript[2]: tool result for call 'c9'");
    expect(error.message).toContain("pending: 'c1' (lookup)");
  });

  it('rejects answering the same call twice', () => {
    const error = reduceError([], [mutate.assistantMessage('', [call('c1')]), ok('c1'), ok('c1')]);
    expect(error.index).toBe(2);
    expect(error.message).toContain('no tool call is pending');
  });

  it('rejects an assistant turn while calls are unanswered', () => {
    const error = reduceError(
      [userMessage('q')],
      [
        mutate.assistantMessage('', [call('c1'), call('c2')]),
        ok('c2'),
        mutate.assistantMessage('done'),
      ],
    );
    expect(error.index).toBe(3);
    expect(error.message).toContain('mutations[2] (assistantMessage)');
    expect(error.message).toContain("calls of transcript[1] are unanswered: 'c1' (lookup)");
  });

  it('rejects duplicate call ids in one message', () => {
    const error = reduceError([], [mutate.assistantMessage('', [call('same'), call('same')])]);
    expect(error.message).toContain("tool call id 'same' is used twice");
  });

  it('accepts results in any order, and system notes after all of them', () => {
    const { transcript } = reduceTurnContext(
      [],
      [
        mutate.assistantMessage('', [call('a'), call('b')]),
        ok('b'),
        ok('a'),
        mutate.assistantMessage('ok'),
      ],
    );
    expect(transcript.length).toBe(4);
    const withNote = reduceTurnContext(
      [assistantMessage('', [call('a')])],
      [ok('a'), mutate.systemNote('Some tools stream; stop them when done.')],
    );
    expect(withNote.transcript.length).toBe(3);
  });

  it('rejects cancelling a call that was already answered', () => {
    const error = reduceError(
      [],
      [mutate.assistantMessage('', [call('c1')]), ok('c1'), mutate.toolCancelled('c1', 'lookup')],
    );
    expect(error.index).toBe(2);
    expect(error.message).toContain('mutations[2] (toolCancelled)');
    expect(error.message).toContain("call 'c1'");
  });
});

describe('reduceTurnContext: experience batching', () => {
  const base = {
    basePrompt: 'Base.',
    experiences: [
      { id: 1, text: 'a' },
      { id: 2, text: 'b' },
      { id: 3, text: 'c' },
    ],
  };

  it('applies forgets before remembers, continuing ids from the highest remaining', () => {
    const { snapshot } = reduceTurnContext(
      [],
      [
        mutate.experienceRemember('d'),
        mutate.experienceForget(3),
        mutate.experienceRemember('a'), // duplicate of a kept experience: dropped
        mutate.experienceRemember('e'),
        mutate.experienceRemember('e'), // duplicate inside the batch: dropped
      ],
      base,
    );
    expect(snapshot?.experiences).toEqual([
      { id: 1, text: 'a' },
      { id: 2, text: 'b' },
      { id: 3, text: 'd' },
      { id: 4, text: 'e' },
    ]);
    expect(snapshot?.basePrompt).toBe('Base.');
  });

  it('flushes the batch before the next mutation of another kind', () => {
    // Flushed at the user message: the forget of 4 comes in a later batch, after 'x' got id 4.
    const { snapshot } = reduceTurnContext(
      [],
      [mutate.experienceRemember('x'), mutate.userMessage('next'), mutate.experienceForget(4)],
      base,
    );
    expect(snapshot?.experiences.map((e) => e.text)).toEqual(['a', 'b', 'c']);
    // In one batch the forget would have come first and missed.
    const together = reduceTurnContext(
      [],
      [mutate.experienceRemember('x'), mutate.experienceForget(4)],
      base,
    );
    expect(together.snapshot?.experiences.map((e) => e.id)).toEqual([1, 2, 3, 4]);
  });

  it('starts ids at 1, ignores unknown forgets and returns the same snapshot when untouched', () => {
    const first = reduceTurnContext(
      [systemMessage('Sys')],
      [mutate.experienceForget(7), mutate.experienceRemember('x')],
    );
    expect(first.snapshot).toEqual({ basePrompt: 'Sys', experiences: [{ id: 1, text: 'x' }] });
    const untouched = reduceTurnContext([], [mutate.userMessage('hi')], base);
    expect(untouched.snapshot).toBe(base);
  });

  it('does not edit the snapshot it was given', () => {
    const frozen = deepFreeze(structuredClone(base));
    const { snapshot } = reduceTurnContext(
      [],
      [mutate.experienceForget(1), mutate.experienceRemember('z')],
      frozen,
    );
    expect(frozen.experiences).toHaveLength(3);
    expect(snapshot?.experiences.map((e) => e.id)).toEqual([2, 3, 4]);
  });
});
