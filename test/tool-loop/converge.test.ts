// SPEC T8: after the loop, the execution records become `actionResults` keyed by purpose, an
// instruction to quote them, and `toolLogs`; no records inject nothing.

import type { ToolExecutionRecord } from 'statecraft';
import { converge, QUOTE_SOURCES_INSTRUCTION, toActionResults } from 'statecraft/tool-loop';
import { describe, expect, it } from 'vitest';

/** A successful record of `purpose` with `result`. */
function ok(purpose: string, result: unknown): ToolExecutionRecord {
  return {
    purpose,
    toolName: 'search',
    kwargs: { q: purpose },
    todoSuggestion: 'read it',
    next: 'read it',
    success: true,
    result,
    error: null,
  };
}

/** A failed record of `purpose`, as recordOf builds it (result null). */
function failed(purpose: string, error: string): ToolExecutionRecord {
  return { ...ok(purpose, null), success: false, error };
}

describe('toActionResults: keys', () => {
  it('keys each result by its purpose, in record order', () => {
    const results = toActionResults([ok('Search the docs', ['a', 'b']), ok('Read file', 'text')]);
    expect(results).toEqual({ 'Search the docs': ['a', 'b'], 'Read file': 'text' });
    expect(Object.keys(results)).toEqual(['Search the docs', 'Read file']);
  });

  it('trims the purpose', () => {
    expect(toActionResults([ok('  Search  ', 1)])).toEqual({ Search: 1 });
  });

  it('keys a blank purpose tool_call_<n>, n being its 1-based position among the records', () => {
    const results = toActionResults([ok('', 'first'), ok('named', 'second'), ok('   ', 'third')]);
    expect(results).toEqual({ tool_call_1: 'first', named: 'second', tool_call_3: 'third' });
  });

  it('suffixes duplicates (2), (3)', () => {
    const results = toActionResults([ok('a', 1), ok('b', 2), ok('a', 3), ok('a', 4)]);
    expect(results).toEqual({ a: 1, b: 2, 'a (2)': 3, 'a (3)': 4 });
  });

  it('counts purposes that differ only in surrounding blanks as duplicates', () => {
    expect(toActionResults([ok('a', 1), ok(' a ', 2)])).toEqual({ a: 1, 'a (2)': 2 });
  });

  it('never overwrites a generated key with a purpose that spells it', () => {
    const results = toActionResults([ok('a', 1), ok('a', 2), ok('a (2)', 3)]);
    expect(Object.keys(results)).toHaveLength(3);
    expect(results).toEqual({ a: 1, 'a (2)': 2, 'a (2) (2)': 3 });
  });

  it('skips a suffix a literal purpose already took', () => {
    const results = toActionResults([ok('a (2)', 1), ok('a', 2), ok('a', 3)]);
    expect(results).toEqual({ 'a (2)': 1, a: 2, 'a (3)': 3 });
  });

  it('does not let a literal tool_call_<n> purpose hide a blank one', () => {
    const results = toActionResults([ok('tool_call_2', 1), ok('', 2)]);
    expect(results).toEqual({ tool_call_2: 1, 'tool_call_2 (2)': 2 });
  });

  it('keeps every result when many records share a purpose', () => {
    const records = Array.from({ length: 12 }, (_, i) => ok('same', i));
    const results = toActionResults(records);
    expect(Object.values(results)).toEqual(records.map((_, i) => i));
    expect(results['same (12)']).toBe(11);
  });

  it('keeps a purpose named __proto__ as an own key, not as the prototype', () => {
    const results = toActionResults([ok('__proto__', { x: 1 }), ok('other', 2)]);
    expect(Object.keys(results)).toEqual(['__proto__', 'other']);
    expect(Object.getOwnPropertyDescriptor(results, '__proto__')?.value).toEqual({ x: 1 });
    expect(Object.getPrototypeOf(results)).toBe(Object.prototype);
  });

  it('is empty for no records', () => {
    expect(toActionResults([])).toEqual({});
  });
});

describe('toActionResults: values', () => {
  it('is the result itself for a success, whatever its type', () => {
    expect(toActionResults([ok('n', 0), ok('s', ''), ok('z', null), ok('o', { k: [1] })])).toEqual({
      n: 0,
      s: '',
      z: null,
      o: { k: [1] },
    });
  });

  it('is { error, result } for a failure', () => {
    const results = toActionResults([failed('Fetch page', "Tool 'fetch' failed: 404")]);
    expect(results).toEqual({ 'Fetch page': { error: "Tool 'fetch' failed: 404", result: null } });
  });

  it('keeps what a failed record carries as its result', () => {
    const record = { ...failed('partial', 'boom'), result: 'half done' };
    expect(toActionResults([record])).toEqual({ partial: { error: 'boom', result: 'half done' } });
  });

  it('wraps only the failures of a mixed list', () => {
    const results = toActionResults([ok('a', 1), failed('a', 'e'), ok('', 3)]);
    expect(results).toEqual({ a: 1, 'a (2)': { error: 'e', result: null }, tool_call_3: 3 });
  });
});

describe('converge', () => {
  it('injects nothing when no record exists', () => {
    expect(converge([])).toBeUndefined();
  });

  it('returns the action results, the quote-your-sources instruction and the records', () => {
    const records = [ok('Search', 'hit'), failed('', 'timeout')];
    const convergence = converge(records);
    expect(convergence).toEqual({
      actionResults: { Search: 'hit', tool_call_2: { error: 'timeout', result: null } },
      extraInstruction: QUOTE_SOURCES_INSTRUCTION,
      toolLogs: records,
    });
    expect(convergence?.toolLogs).toBe(records);
    expect(convergence?.extraInstruction).toBe(QUOTE_SOURCES_INSTRUCTION);
  });

  it('has action results equal to toActionResults of the same records', () => {
    const records = [ok('x', 1), ok('x', 2), ok(' ', 3)];
    expect(converge(records)?.actionResults).toEqual(toActionResults(records));
  });

  it('asks the answer to quote its sources by their keys', () => {
    expect(QUOTE_SOURCES_INSTRUCTION).toMatch(/quote/i);
    expect(QUOTE_SOURCES_INSTRUCTION).toMatch(/action results/i);
  });
});
