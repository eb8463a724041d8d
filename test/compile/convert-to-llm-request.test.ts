import {
  createChain,
  defineTool,
  type Message,
  systemMessage,
  Transcript,
  userMessage,
} from 'statecraft';
import {
  compileTurn,
  convertToLlmRequest,
  NATIVE_TOOL_CALLING_PRINCIPLE,
  type PromptContract,
  type SelfRefSnapshot,
} from 'statecraft/compile';
import { ScriptedModel } from 'statecraft/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const reduced = (messages: Message[], snapshot?: SelfRefSnapshot) => ({
  transcript: Transcript.from(messages),
  snapshot,
});
const withSystem = [systemMessage('from transcript'), userMessage('hi')];
const withoutSystem = [userMessage('hi')];
const snapshot: SelfRefSnapshot = {
  basePrompt: 'from snapshot',
  experiences: [{ id: 1, text: 'Check twice.' }],
};

describe('convertToLlmRequest: system prompt priority', () => {
  it.each([
    [
      'snapshot wins over everything',
      withSystem,
      snapshot,
      { systemPrompt: 'explicit', baseInstruction: 'base' },
      'from snapshot\n\n<experiences>\n[1] Check twice.\n</experiences>',
    ],
    [
      'explicit wins over the transcript',
      withSystem,
      undefined,
      { systemPrompt: 'explicit', baseInstruction: 'base' },
      'explicit',
    ],
    [
      'explicit "" wins too, and means no system prompt',
      withSystem,
      undefined,
      { systemPrompt: '', baseInstruction: 'base' },
      undefined,
    ],
    [
      'the transcript wins over the base instruction',
      withSystem,
      undefined,
      { baseInstruction: 'base' },
      'from transcript',
    ],
    [
      'the base instruction is the fallback',
      withoutSystem,
      undefined,
      { baseInstruction: 'base' },
      'base',
    ],
    ['nothing gives no system prompt', withoutSystem, undefined, {}, undefined],
    [
      'a snapshot without base builds on the lower priorities',
      withSystem,
      { experiences: [{ id: 2, text: 'x' }] },
      {},
      'from transcript\n\n<experiences>\n[2] x\n</experiences>',
    ],
  ] as const)('%s', (_name, messages, snap, contract, expected) => {
    const compiled = convertToLlmRequest(reduced([...messages], snap), contract);
    expect(compiled.systemPrompt).toBe(expected);
  });
});

describe('convertToLlmRequest: placing the system message', () => {
  it('replaces an existing system message', () => {
    const { transcript } = convertToLlmRequest(reduced(withSystem), { systemPrompt: 'new' });
    expect(transcript.toArray()).toEqual([systemMessage('new'), userMessage('hi')]);
  });

  it('inserts one when the transcript has none', () => {
    const { transcript } = convertToLlmRequest(reduced(withoutSystem), { baseInstruction: 'base' });
    expect(transcript.toArray()).toEqual([systemMessage('base'), userMessage('hi')]);
  });

  it('removes it when no prompt resolves', () => {
    const { transcript, messages } = convertToLlmRequest(reduced(withSystem), { systemPrompt: '' });
    expect(transcript.toArray()).toEqual([userMessage('hi')]);
    expect(messages.toArray()).toEqual([userMessage('hi')]);
  });

  it('keeps the same transcript when the prompt is unchanged', () => {
    const input = reduced(withSystem);
    expect(convertToLlmRequest(input, {}).transcript).toBe(input.transcript);
  });

  it('only touches the leading system message', () => {
    const note = systemMessage('a note in the middle');
    const { transcript } = convertToLlmRequest(reduced([userMessage('a'), note]), {
      systemPrompt: 'top',
    });
    expect(transcript.toArray()).toEqual([systemMessage('top'), userMessage('a'), note]);
  });
});

describe('convertToLlmRequest: tool blocks', () => {
  const tools: PromptContract['tools'] = [
    { name: 'git_status', bestPractices: ['Run it before committing.'] },
    {
      name: 'git_commit',
      bestPractices: ['Write the message in the imperative.', 'One concern per commit.'],
    },
    { name: 'plain' },
  ];

  it('renders best practices before the prompt and must-principles after it', () => {
    const { messages, transcript, systemPrompt } = convertToLlmRequest(reduced(withSystem), {
      tools,
    });
    expect(messages.first).toEqual(
      systemMessage(
        [
          '<tool_best_practices>',
          '- git_status: Run it before committing.',
          '- git_commit: Write the message in the imperative.',
          '- git_commit: One concern per commit.',
          '</tool_best_practices>',
          '',
          'from transcript',
          '',
          '<must_principles>',
          `- ${NATIVE_TOOL_CALLING_PRINCIPLE}`,
          '</must_principles>',
        ].join('\n'),
      ),
    );
    // The transcript keeps the clean prompt; only the request carries the blocks.
    expect(transcript.first).toEqual(systemMessage('from transcript'));
    expect(systemPrompt).toBe('from transcript');
    expect(messages.at(1)).toBe(transcript.at(1));
  });

  it('is idempotent: compiling its own output renders the blocks once', () => {
    const once = convertToLlmRequest(reduced(withSystem), {
      tools,
      mustPrinciples: ['Cite sources.'],
    });
    const twice = convertToLlmRequest(reduced(once.messages.toArray()), {
      tools,
      mustPrinciples: ['Cite sources.'],
    });
    expect(twice.messages.toArray()).toEqual(once.messages.toArray());
    expect(twice.systemPrompt).toBe('from transcript');
  });

  it('renders blocks alone when there is no prompt, and nothing without tools or principles', () => {
    const alone = convertToLlmRequest(reduced(withoutSystem), { tools: [{ name: 'x' }] });
    expect(alone.messages.first).toEqual(
      systemMessage(`<must_principles>\n- ${NATIVE_TOOL_CALLING_PRINCIPLE}\n</must_principles>`),
    );
    expect(alone.transcript.first).toEqual(userMessage('hi'));
    const none = convertToLlmRequest(reduced(withoutSystem), {
      tools: [{ name: 'x' }],
      mustPrinciples: [],
    });
    expect(none.messages.toArray()).toEqual(withoutSystem);
  });

  it('re-renders a mutable contract each time, and renders a frozen one once', () => {
    const tools = [{ name: 'a', bestPractices: ['First.'] }];
    const mutable: PromptContract = { tools };
    const before = convertToLlmRequest(reduced(withoutSystem), mutable).messages.first;
    tools.push({ name: 'b', bestPractices: ['Second.'] });
    const after = convertToLlmRequest(reduced(withoutSystem), mutable).messages.first;
    expect((before as { content: string }).content).not.toContain('Second.');
    expect((after as { content: string }).content).toContain('- b: Second.');

    const frozen: PromptContract = Object.freeze({
      tools: Object.freeze([{ name: 'c', bestPractices: ['Third.'] }]),
    });
    const once = convertToLlmRequest(reduced(withoutSystem), frozen).messages.first;
    const again = convertToLlmRequest(reduced(withSystem), frozen).messages.first;
    expect((once as { content: string }).content).toContain('- c: Third.');
    expect((again as { content: string }).content).toContain('- c: Third.');
    expect((again as { content: string }).content).toContain('from transcript');
  });

  it('keeps experiences rendered once across turns driven by compileTurn', () => {
    let turn = compileTurn({ transcript: withSystem, snapshot, contract: { tools } });
    for (let i = 0; i < 3; i++) {
      turn = compileTurn({
        transcript: turn.transcript,
        snapshot: turn.snapshot,
        contract: { tools },
      });
    }
    const system = turn.messages.first as { content: string };
    expect(system.content.match(/<experiences>/g)).toHaveLength(1);
    expect(system.content.match(/<tool_best_practices>/g)).toHaveLength(1);
  });
});

describe('convertToLlmRequest: tool descriptions and deduplicated best practices', () => {
  const contentOf = (message: Message | undefined) => (message as { content: string }).content;

  it("renders each tool's description as its <use> line above its practices", () => {
    const { messages } = convertToLlmRequest(reduced(withoutSystem), {
      tools: [
        {
          name: 'git_commit',
          description: '  Records staged changes.  ',
          bestPractices: ['Write the message in the imperative.', 'One concern per commit.'],
        },
        { name: 'git_status', bestPractices: ['Run it before committing.'] },
        { name: 'git_log', description: 'Shows history.' },
      ],
      mustPrinciples: [],
    });
    expect(contentOf(messages.first)).toBe(
      [
        '<tool_best_practices>',
        '<use tool="git_commit">Records staged changes.</use>',
        '- git_commit: Write the message in the imperative.',
        '- git_commit: One concern per commit.',
        // No description, no <use> line; no practices (git_log), no lines at all.
        '- git_status: Run it before committing.',
        '</tool_best_practices>',
      ].join('\n'),
    );
  });

  it('drops repeated practices and ones that only repeat the description, comparing normalized text', () => {
    const { messages } = convertToLlmRequest(reduced(withoutSystem), {
      tools: [
        {
          name: 'read_file',
          description: 'Reads a file  from disk.',
          bestPractices: [
            'reads A file from\n disk', // the description again: case, spacing, final period
            '  Prefer absolute paths.  ',
            'prefer\tabsolute   PATHS', // a repeat of the one before
            '   ', // empty
            'Read small files whole.',
          ],
        },
      ],
      mustPrinciples: [],
    });
    expect(contentOf(messages.first)).toBe(
      [
        '<tool_best_practices>',
        '<use tool="read_file">Reads a file  from disk.</use>',
        '- read_file: Prefer absolute paths.',
        '- read_file: Read small files whole.',
        '</tool_best_practices>',
      ].join('\n'),
    );
  });

  it('renders no block for a tool whose only practice repeats its description', () => {
    const { messages } = convertToLlmRequest(reduced(withoutSystem), {
      tools: [{ name: 'ping', description: 'Pings a host.', bestPractices: ['PINGS A HOST'] }],
      mustPrinciples: [],
    });
    expect(messages.toArray()).toEqual(withoutSystem);
  });

  it("createChain's contract carries each tool's description into the block", async () => {
    const careful = defineTool({
      name: 'careful',
      description: 'Needs care.',
      input: z.object({}),
      execute: () => 'ok',
      bestPractices: ['Call it at most once.', 'needs care'],
    });
    const model = new ScriptedModel([{ text: 'fine' }]);
    await createChain({ model, tools: [careful], systemPrompt: 'Be careful.' }).invoke('go');
    const sent = contentOf(model.requests[0]?.messages.first);
    expect(sent).toContain(
      '<use tool="careful">Needs care.</use>\n- careful: Call it at most once.\n</tool_best_practices>',
    );
  });
});
