// Every step of the compile pipeline keeps attachments: tool results, user messages added by
// a mutation, summaries, replacements, experiences, cancellations and truncated answers leave
// the images and files of the messages they keep in place, and the budget estimate counts an
// image as the tokens it costs a model, not its base64's length.
import {
  assistantMessage,
  attachment,
  type Message,
  systemMessage,
  Transcript,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import { compileTurn, mutate, reduceTurnContext, replayMutationLog } from 'statecraft/compile';
import { describe, expect, it } from 'vitest';
import { nextCallEstimate } from '../../machines/budgets.js';
import { IMAGE_TOKENS } from '../../src/compile/attachment-tokens.js';

const png = attachment({
  data: new Uint8Array([0x89, 0x50, 0x4e, 0x47, ...Array.from({ length: 4000 }, (_, i) => i % 13)]),
  name: 'screen.png',
});
const csv = attachment({
  data: Buffer.from('a,b\n1,2\n'.repeat(100)).toString('base64'),
  mediaType: 'text/csv',
});
const remote = attachment({ url: 'https://example.com/spec.pdf' });

const attachmentsOf = (messages: Iterable<Message>) =>
  [...messages].map((m) => (m.role === 'user' || m.role === 'tool' ? (m.attachments ?? []) : []));

const start = () =>
  Transcript.from([
    systemMessage('You look at screens.'),
    userMessage('What is this?', [png]),
    assistantMessage('', [{ id: 'c1', name: 'fetch', arguments: {} }]),
  ]);

describe('the compile pipeline keeps attachments', () => {
  it('through tool results, user messages, experiences and a compiled request', () => {
    const mutations = [
      mutate.toolResult({
        toolCallId: 'c1',
        name: 'fetch',
        output: 'a sheet',
        success: true,
        attachments: [csv],
      }),
      mutate.experienceRemember('Screens are PNGs.'),
      mutate.assistantMessage('Look at this too?'),
      mutate.userMessage('And this', [remote]),
    ];
    const turn = compileTurn({
      transcript: start(),
      mutations,
      contract: { baseInstruction: 'Be brief.' },
    });
    expect(attachmentsOf(turn.messages)).toEqual([[], [png], [], [csv], [], [remote]]);
    expect(turn.snapshot?.experiences).toHaveLength(1);
    // A log replayed gives the same transcript, attachments included.
    const replayed = replayMutationLog(start(), [mutations]);
    expect(attachmentsOf(replayed.transcript)).toEqual(attachmentsOf(turn.transcript));
    expect(mutate.userMessage('no files', [])).toEqual({
      type: 'userMessage',
      content: 'no files',
    });
  });

  it('through a cancelled call and a truncated answer', () => {
    const { transcript } = reduceTurnContext(start(), [
      mutate.toolCancelled('c1', 'fetch', 'stopped'),
      mutate.assistantTruncated('It shows a cha', 'cut off'),
    ]);
    expect(attachmentsOf(transcript)).toEqual([[], [png], [], [], []]);
  });

  it('through a summary or a replacement that keeps them', () => {
    const summary = userMessage('<conversation_summary>a screen</conversation_summary>', [png]);
    const summarized = reduceTurnContext(start(), [mutate.contextSummary(summary)]);
    expect(attachmentsOf(summarized.transcript)).toEqual([[], [png]]);
    const replaced = reduceTurnContext(start(), [
      mutate.contextReplace([userMessage('again', [png, remote])]),
    ]);
    expect(attachmentsOf(replaced.transcript)).toEqual([[png, remote]]);
    const tool = toolResultMessage({
      toolCallId: 'c1',
      name: 'fetch',
      output: 1,
      success: true,
      attachments: [csv],
    });
    expect(tool.attachments).toEqual([csv]);
  });
});

describe('the budget estimate of attachments', () => {
  const none = { steps: [], pending: [], contract: {} };
  const tokens = (messages: Message[]) =>
    nextCallEstimate({ ...none, transcript: Transcript.from(messages) }).inputTokens;

  it('counts an image (inline or URL) as IMAGE_TOKENS, a text file as its bytes, never the base64', () => {
    const text = tokens([userMessage('abcd')]);
    expect(tokens([userMessage('abcd', [png])]) - text).toBe(IMAGE_TOKENS);
    expect(tokens([userMessage('abcd', [remote])]) - text).toBe(IMAGE_TOKENS);
    expect(tokens([userMessage('abcd', [csv])]) - text).toBe(800 / 4);
    expect(IMAGE_TOKENS).toBe(1600);
  });

  it('counts a PDF by its pages, not its bytes, and other binary files as an image', () => {
    const text = tokens([userMessage('abcd')]);
    const pages = (count: number) =>
      new TextEncoder().encode(
        `%PDF-1.7\n1 0 obj << /Type /Pages /Count ${count} >>\n${'2 0 obj << /Type /Page >>\n'.repeat(count)}${'x'.repeat(400_000)}`,
      );
    const pdf = (count: number) => attachment({ data: pages(count), name: 'r.pdf' });
    // 400 KB of a 3-page PDF: 3 images' worth, not 100,000 tokens of bytes.
    expect(tokens([userMessage('abcd', [pdf(3)])]) - text).toBe(3 * IMAGE_TOKENS);
    expect(tokens([userMessage('abcd', [pdf(0)])]) - text).toBe(IMAGE_TOKENS);
    const audio = attachment({ data: new Uint8Array(100_000), mediaType: 'audio/wav' });
    expect(tokens([userMessage('abcd', [audio])]) - text).toBe(IMAGE_TOKENS);
  });

  it('counts a tool result’s and a pending user message’s attachments', () => {
    const base = { ...none, transcript: start() };
    const plain = nextCallEstimate({
      ...base,
      pending: [mutate.toolResult({ toolCallId: 'c1', name: 'fetch', output: 'x', success: true })],
    }).inputTokens;
    const withImage = nextCallEstimate({
      ...base,
      pending: [
        mutate.toolResult({
          toolCallId: 'c1',
          name: 'fetch',
          output: 'x',
          success: true,
          attachments: [png],
        }),
      ],
    }).inputTokens;
    expect(withImage - plain).toBe(IMAGE_TOKENS);
    const note = nextCallEstimate({
      ...base,
      pending: [mutate.userMessage('', [png])],
    }).inputTokens;
    expect(
      note - nextCallEstimate({ ...base, pending: [mutate.userMessage('')] }).inputTokens,
    ).toBe(IMAGE_TOKENS);
  });
});
