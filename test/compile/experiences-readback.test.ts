import { type Message, systemMessage, Transcript, userMessage } from 'statecraft';
import { compileTurn, convertToLlmRequest, mutate, renderExperiences } from 'statecraft/compile';
import { describe, expect, it } from 'vitest';

// SPEC P3: experiences rendered into a compiled system prompt are read back from it when the
// caller compiles the next turn from the transcript alone, without the snapshot.

const start = [systemMessage('Base.'), userMessage('hi')];
const tools = [{ name: 'add', description: 'Adds.', bestPractices: ['Sum every time.'] }];

/** A first turn that remembered three experiences; only its transcript is kept. */
function firstTurn() {
  return compileTurn({
    transcript: start,
    mutations: [
      mutate.experienceRemember('Check twice.'),
      mutate.experienceRemember('Be brief.'),
      mutate.experienceRemember('Cite sources.'),
    ],
    contract: { tools },
  });
}

describe('experiences read back from the system prompt (SPEC P3)', () => {
  it('survive a turn compiled from the transcript alone: forget by id, new ids continue', () => {
    const first = firstTurn();
    const second = compileTurn({
      transcript: first.transcript.toArray(), // plain messages, no snapshot
      mutations: [mutate.experienceForget(3), mutate.experienceRemember('Ask when unsure.')],
      contract: { tools },
    });
    expect(second.snapshot).toEqual({
      basePrompt: 'Base.',
      experiences: [
        { id: 1, text: 'Check twice.' },
        { id: 2, text: 'Be brief.' },
        // 3 was forgotten; the highest remaining is 2.
        { id: 3, text: 'Ask when unsure.' },
      ],
    });
    expect(second.systemPrompt).toBe(
      'Base.\n\n<experiences>\n[1] Check twice.\n[2] Be brief.\n[3] Ask when unsure.\n</experiences>',
    );
  });

  it('continue from the highest id read back, not from the count', () => {
    const first = firstTurn();
    const second = compileTurn({
      transcript: first.transcript,
      mutations: [mutate.experienceForget(1), mutate.experienceRemember('Fourth.')],
    });
    expect(second.snapshot?.experiences.map((e) => e.id)).toEqual([2, 3, 4]);
  });

  it('stay in the prompt of a turn without mutations, and come back as its snapshot', () => {
    const first = firstTurn();
    const again = compileTurn({ transcript: first.transcript, contract: { tools } });
    expect(again.systemPrompt).toBe(first.systemPrompt);
    expect(again.messages.toArray()).toEqual(first.messages.toArray());
    expect(again.snapshot).toEqual(first.snapshot);
  });

  it('are read back from the sent messages too (rendered tool blocks are skipped)', () => {
    const first = firstTurn();
    const again = compileTurn({
      transcript: first.messages,
      mutations: [mutate.experienceRemember('Fourth.')],
      contract: { tools },
    });
    expect(again.snapshot?.basePrompt).toBe('Base.');
    expect(again.snapshot?.experiences.map((e) => e.id)).toEqual([1, 2, 3, 4]);
    expect((again.messages.first as { content: string }).content.match(/<experiences>/g)).toEqual([
      '<experiences>',
    ]);
  });

  it('keep their ids through a summary that remembers more', () => {
    const first = firstTurn();
    const summarised = compileTurn({
      transcript: first.transcript,
      mutations: [mutate.contextSummary('We said hi.', ['Greet back.'])],
    });
    expect(summarised.snapshot?.experiences.map((e) => `${e.id} ${e.text}`)).toEqual([
      '1 Check twice.',
      '2 Be brief.',
      '3 Cite sources.',
      '4 Greet back.',
    ]);
  });

  it('round-trip multi-line texts, even a line that looks like an experience', () => {
    const text = 'Before editing:\n[9] read the file\n\n  keep its indent';
    const first = compileTurn({ transcript: start, mutations: [mutate.experienceRemember(text)] });
    expect(first.systemPrompt).toBe(
      'Base.\n\n<experiences>\n[1] Before editing:\n  [9] read the file\n\n    keep its indent\n</experiences>',
    );
    const again = compileTurn({
      transcript: first.transcript,
      mutations: [mutate.experienceRemember('Next.')],
    });
    expect(again.snapshot?.experiences).toEqual([
      { id: 1, text },
      { id: 2, text: 'Next.' },
    ]);
  });

  it('win over an explicit system prompt, as the carried snapshot would', () => {
    const first = firstTurn();
    const again = convertToLlmRequest(
      { transcript: first.transcript, snapshot: undefined },
      { systemPrompt: 'Explicit.' },
    );
    expect(again.systemPrompt).toBe(first.systemPrompt);
  });

  it('leave a prompt without experiences to the ordinary priorities', () => {
    const plain: Message[] = [systemMessage('From transcript.'), userMessage('hi')];
    const compiled = convertToLlmRequest(
      { transcript: Transcript.from(plain), snapshot: undefined },
      { systemPrompt: 'Explicit.' },
    );
    expect(compiled.systemPrompt).toBe('Explicit.');
    expect(compiled.snapshot).toBeUndefined();
  });

  it('read a hand-written block: stray lines ignored before the first, unsafe ids continue', () => {
    const prompt = `Base.\n\n<experiences>\nnotes:\n[2] Two.\n[99999999999999999999] still two\n</experiences>`;
    const compiled = convertToLlmRequest({
      transcript: Transcript.from([systemMessage(prompt)]),
      snapshot: undefined,
    });
    expect(compiled.snapshot?.experiences).toEqual([
      { id: 2, text: 'Two.\n[99999999999999999999] still two' },
    ]);
    expect(renderExperiences(compiled.snapshot?.experiences ?? [])).toBe(
      '<experiences>\n[2] Two.\n  [99999999999999999999] still two\n</experiences>',
    );
  });
});
