import {
  assistantMessage,
  systemMessage,
  type ToolResult,
  toolResultMessage,
  userMessage,
} from 'statecraft';
import {
  ensureToolCallId,
  generateToolCallId,
  parseToolArguments,
  toolResultText,
} from 'statecraft/model';
import { describe, expect, it } from 'vitest';

describe('generateToolCallId', () => {
  it('returns non-empty ids prefixed with call_', () => {
    const id = generateToolCallId();
    expect(id).toMatch(/^call_[A-Za-z0-9]+$/);
    expect(id.length).toBeGreaterThan('call_'.length);
  });

  it('returns unique ids over 1000 calls', () => {
    const ids = Array.from({ length: 1000 }, generateToolCallId);
    expect(new Set(ids).size).toBe(1000);
    for (const id of ids) expect(id.startsWith('call_')).toBe(true);
  });
});

describe('ensureToolCallId', () => {
  it('keeps an existing id and returns the call unchanged', () => {
    const call = { id: 'toolu_01', name: 'search', arguments: { q: 'x' } };
    expect(ensureToolCallId(call)).toBe(call);
  });

  it.each([
    ['missing', undefined],
    ['empty', ''],
  ])('generates an id when it is %s, keeping the other fields', (_label, id) => {
    const call = { id, name: 'search', arguments: { q: 'x' } };
    const ensured = ensureToolCallId(call);
    expect(ensured.id).toMatch(/^call_./);
    expect(ensured.name).toBe('search');
    expect(ensured.arguments).toBe(call.arguments);
    // The caller's object is not mutated.
    expect(call.id).toBe(id);
  });
});

describe('message constructors', () => {
  it('assistantMessage generates missing call ids and keeps given ones', () => {
    const message = assistantMessage('Let me look.', [
      { id: 'call_given', name: 'search', arguments: { q: 'a' } },
      { name: 'read', arguments: { path: '/b' } },
    ]);
    expect(message.role).toBe('assistant');
    expect(message.content).toBe('Let me look.');
    expect(message.toolCalls).toHaveLength(2);
    expect(message.toolCalls[0]).toEqual({
      id: 'call_given',
      name: 'search',
      arguments: { q: 'a' },
    });
    expect(message.toolCalls[1]?.id).toMatch(/^call_./);
    expect(message.toolCalls[1]?.id).not.toBe('call_given');
    expect(message.toolCalls[1]).toMatchObject({ name: 'read', arguments: { path: '/b' } });
  });

  it('assistantMessage freezes the message, its call list and each call', () => {
    const message = assistantMessage('hi', [{ name: 'search', arguments: {} }]);
    expect(Object.isFrozen(message)).toBe(true);
    expect(Object.isFrozen(message.toolCalls)).toBe(true);
    expect(Object.isFrozen(message.toolCalls[0])).toBe(true);
    expect(() => {
      (message as { content: string }).content = 'changed';
    }).toThrow(TypeError);
    expect(message.content).toBe('hi');
  });

  it('assistantMessage marks truncation only when asked', () => {
    expect(assistantMessage('cut')).not.toHaveProperty('truncated');
    expect(assistantMessage('cut', [], { truncated: true }).truncated).toBe(true);
    expect(assistantMessage('plain').toolCalls).toEqual([]);
  });

  it('builds frozen system, user and tool messages', () => {
    const system = systemMessage('Be brief.');
    const user = userMessage('Hello');
    const result: ToolResult = { toolCallId: 'call_1', name: 'search', output: [1], success: true };
    const tool = toolResultMessage(result);
    expect(system).toEqual({ role: 'system', content: 'Be brief.' });
    expect(user).toEqual({ role: 'user', content: 'Hello' });
    expect(tool).toEqual({ role: 'tool', ...result });
    for (const message of [system, user, tool]) expect(Object.isFrozen(message)).toBe(true);
  });
});

describe('parseToolArguments', () => {
  it.each(['', '   ', '\n'])('treats empty text %j as no arguments', (text) => {
    expect(parseToolArguments(text)).toStrictEqual({ arguments: {} });
  });

  it('parses valid JSON', () => {
    expect(parseToolArguments('{"path":"/a","limit":3}')).toStrictEqual({
      arguments: { path: '/a', limit: 3 },
    });
    expect(parseToolArguments('[1,2]')).toStrictEqual({ arguments: [1, 2] });
  });

  it('keeps invalid JSON as raw text with the parse error', () => {
    const parsed = parseToolArguments('{"a":');
    expect(parsed.arguments).toBe('{"a":');
    expect(typeof parsed.argumentsError).toBe('string');
    expect(parsed.argumentsError).not.toBe('');
  });
});

describe('toolResultText', () => {
  const ok = (output: unknown): ToolResult => ({
    toolCallId: 'call_1',
    name: 'x',
    output,
    success: true,
  });

  it('sends strings as they are', () => {
    expect(toolResultText(ok('plain "text"'))).toBe('plain "text"');
  });

  it('sends other values as JSON', () => {
    expect(toolResultText(ok({ a: 1, b: ['c'] }))).toBe('{"a":1,"b":["c"]}');
    expect(toolResultText(ok(42))).toBe('42');
    expect(toolResultText(ok(null))).toBe('null');
  });

  it('sends an empty text for undefined output', () => {
    expect(toolResultText(ok(undefined))).toBe('');
  });

  it('sends the error of a failed result, not its output', () => {
    const failed: ToolResult = {
      toolCallId: 'call_1',
      name: 'x',
      output: 'partial output',
      success: false,
      error: "Tool 'x' failed: boom",
    };
    expect(toolResultText(failed)).toBe("Tool 'x' failed: boom");
  });

  it('sends a fallback text for a failed result without an error', () => {
    const text = toolResultText({ toolCallId: 'call_1', name: 'x', output: null, success: false });
    expect(text).toMatch(/failed/);
  });

  // toolResultText is what providers are sent for every result: it must not throw on a
  // successful output that JSON cannot express (SPEC C10: tool outcomes are data).
  it('returns a string for every successful output, even one JSON cannot express', () => {
    const circular: { self?: unknown } = {};
    circular.self = circular;
    for (const output of [{ id: 10n }, circular, () => 1]) {
      let text: unknown;
      expect(() => {
        text = toolResultText(ok(output));
      }).not.toThrow();
      expect(typeof text).toBe('string');
    }
    expect(toolResultText(ok({ id: 10n }))).toBe('{"id":"10"}');
    expect(toolResultText(ok(circular))).toContain('unserializable object');
  });

  it('falls back to a message for a failure with an empty error', () => {
    expect(
      toolResultText({ toolCallId: 'c', name: 'x', output: null, success: false, error: '' }),
    ).toBe('The tool failed without an error message.');
  });
});
