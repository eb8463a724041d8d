import {
  type AssistantMessage,
  assistantMessage,
  type Message,
  Transcript,
  userMessage,
} from 'statecraft';
import { describe, expect, it } from 'vitest';

const texts = (t: Transcript) => t.toArray().map((m) => ('content' in m ? m.content : m.role));

describe('Transcript', () => {
  it('appends without changing the version it came from', () => {
    const a = Transcript.from([userMessage('1')]);
    const b = a.append(userMessage('2'));
    const c = b.append(userMessage('3'), userMessage('4'));
    expect(texts(a)).toEqual(['1']);
    expect(texts(b)).toEqual(['1', '2']);
    expect(texts(c)).toEqual(['1', '2', '3', '4']);
    expect(a.length).toBe(1);
    expect(c.length).toBe(4);
  });

  it('keeps two branches of one version apart', () => {
    const base = Transcript.from([userMessage('base')]);
    const left = base.append(userMessage('left'));
    const right = base.append(userMessage('right'));
    const leftMore = left.append(userMessage('left 2'));
    const rightMore = right.append(userMessage('right 2'));
    expect(texts(left)).toEqual(['base', 'left']);
    expect(texts(right)).toEqual(['base', 'right']);
    expect(texts(leftMore)).toEqual(['base', 'left', 'left 2']);
    expect(texts(rightMore)).toEqual(['base', 'right', 'right 2']);
  });

  it('never lends the shared empty transcript to a run', () => {
    const first = Transcript.empty.append(userMessage('a'));
    const second = Transcript.empty.append(userMessage('b'));
    expect(Transcript.empty.length).toBe(0);
    expect(texts(first)).toEqual(['a']);
    expect(texts(second)).toEqual(['b']);
  });

  it('replaces and removes the first message in place of copying', () => {
    const t = Transcript.from([userMessage('a'), userMessage('b')]);
    const prepended = t.prepend(userMessage('head'));
    expect(texts(prepended)).toEqual(['head', 'a', 'b']);
    expect(texts(prepended.dropFirst())).toEqual(['a', 'b']);
    expect(texts(t.dropFirst())).toEqual(['b']);
    expect(texts(prepended.prepend(userMessage('new head')))).toEqual([
      'new head',
      'head',
      'a',
      'b',
    ]);
    // Appending to a version with a head keeps the head and leaves the others alone.
    const grown = prepended.append(userMessage('c'));
    expect(texts(grown)).toEqual(['head', 'a', 'b', 'c']);
    expect(texts(t)).toEqual(['a', 'b']);
  });

  it('indexes like Array#at and iterates in order', () => {
    const t = Transcript.from([userMessage('a'), userMessage('b')]).prepend(userMessage('h'));
    expect(t.at(0)).toMatchObject({ content: 'h' });
    expect(t.at(-1)).toMatchObject({ content: 'b' });
    expect(t.at(3)).toBeUndefined();
    expect(t.first).toMatchObject({ content: 'h' });
    expect(t.last).toMatchObject({ content: 'b' });
    expect([...t].map((m) => (m as { content: string }).content)).toEqual(['h', 'a', 'b']);
  });

  it('freezes messages it takes in and serialises as a plain array', () => {
    const mutable: Message = {
      role: 'assistant',
      content: 'x',
      toolCalls: [{ id: 'c1', name: 't', arguments: {} }],
    };
    const t = Transcript.from([mutable]);
    const stored = t.at(0);
    expect(Object.isFrozen(stored)).toBe(true);
    expect(Object.isFrozen((stored as AssistantMessage).toolCalls)).toBe(true);
    expect(JSON.parse(JSON.stringify(t))).toEqual([mutable]);
    expect(Transcript.from(t)).toBe(t);
  });

  it('shares message objects between versions instead of cloning them', () => {
    const message = assistantMessage('shared');
    const a = Transcript.from([message]);
    const b = a.append(userMessage('next'));
    expect(b.at(0)).toBe(message);
  });
});
