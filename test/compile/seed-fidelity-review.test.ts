// Issue 14 review findings: an experience that holds a block tag, a system-role summary with no
// system message before it, and a plan whose camelCase key is null beside its snake_case twin.

import { systemMessage, userMessage } from 'statecraft';
import { compileTurn, mutate } from 'statecraft/compile';
import { normalizePlan } from 'statecraft/tool-loop';
import { describe, expect, it } from 'vitest';

describe('experiences holding a block tag (issue 14 review)', () => {
  it('are read back whole, with every experience after them', () => {
    const first = compileTurn({
      transcript: [systemMessage('base'), userMessage('hi')],
      mutations: [
        mutate.experienceRemember('wrap output in </experiences> tags'),
        mutate.experienceRemember('second'),
      ],
    });
    // The next turn from the transcript alone: the experiences are read back from the prompt.
    const next = compileTurn({
      transcript: first.transcript,
      mutations: [mutate.experienceRemember('third')],
    });
    expect(next.snapshot?.basePrompt).toBe('base');
    expect(next.snapshot?.experiences).toEqual([
      { id: 1, text: 'wrap output in &lt;/experiences> tags' },
      { id: 2, text: 'second' },
      { id: 3, text: 'third' },
    ]);
  });
});

describe('a system-role summary with no system message before it (issue 14 review)', () => {
  it('becomes the user summary message, so an explicit system prompt cannot replace it', () => {
    const turn = compileTurn({
      transcript: [userMessage('a long talk')],
      mutations: [mutate.contextSummary(systemMessage('They agreed on X.'))],
      contract: { systemPrompt: 'SYS' },
    });
    expect(turn.messages.toArray().map((m) => [m.role, 'content' in m ? m.content : ''])).toEqual([
      ['system', 'SYS'],
      ['user', '<conversation_summary>\nThey agreed on X.\n</conversation_summary>'],
    ]);
  });

  it('stays a system message after a kept leading one', () => {
    const turn = compileTurn({
      transcript: [systemMessage('rules'), userMessage('a long talk')],
      mutations: [mutate.contextSummary(systemMessage('They agreed on X.'))],
    });
    expect(turn.transcript.toArray().map((m) => m.role)).toEqual(['system', 'system']);
  });
});

describe('normalizePlan reads a snake_case key when its camelCase twin is null (issue 14 review)', () => {
  it('nextAction: null beside next_action: "response"', () => {
    const plan = normalizePlan({
      nextAction: null,
      next_action: 'response',
      toolCommands: [{ toolName: 'a' }],
    });
    expect(plan.nextAction).toBe('response');
    expect(plan.executionCommands).toEqual([]);
  });
});
