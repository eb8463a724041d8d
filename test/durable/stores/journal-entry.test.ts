import { describe, expect, it } from 'vitest';
import {
  isEndEntry,
  isStartEntry,
  type JournalEntry,
  runStatusOf,
} from '../../../src/durable/journal-entry.js';
import { endEntry, startEntry } from './journal-store-contract.js';

describe('runStatusOf', () => {
  it('is the end entry status when the last entry is an end entry', () => {
    expect(runStatusOf([startEntry('r'), endEntry('succeeded')])).toBe('succeeded');
    expect(runStatusOf([startEntry('r'), endEntry('failed')])).toBe('failed');
  });

  it('is running without an end entry last, or with a malformed one', () => {
    expect(runStatusOf([])).toBe('running');
    expect(runStatusOf([startEntry('r'), { type: 'intent' }])).toBe('running');
    expect(runStatusOf([startEntry('r'), endEntry('succeeded'), { type: 'x' }])).toBe('running');
    expect(runStatusOf([startEntry('r'), { type: 'end', status: 'crashed' }])).toBe('running');
  });
});

describe('entry guards', () => {
  it('accepts a well-formed start entry and refuses one missing or mistyping a field', () => {
    expect(isStartEntry(startEntry('r'))).toBe(true);
    const broken: JournalEntry[] = [
      { ...startEntry('r'), version: 0 },
      { ...startEntry('r'), version: 1.5 },
      { ...startEntry('r'), runId: 7 },
      { ...startEntry('r'), kind: 'graph' },
      { ...startEntry('r'), startedAt: Number.NaN },
      { ...startEntry('r'), type: 'begin' },
    ];
    for (const entry of broken) expect(isStartEntry(entry), JSON.stringify(entry)).toBe(false);
  });

  it('accepts end entries that succeeded or failed only', () => {
    expect(isEndEntry(endEntry('failed'))).toBe(true);
    expect(isEndEntry({ type: 'end' })).toBe(false);
  });
});
