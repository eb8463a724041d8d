// Issue 15, part 2: a request hashes the same in any process and any key order.
import { spawnSync } from 'node:child_process';
import { assistantMessage, ModelError, Transcript, userMessage } from 'statecraft';
import { describe, expect, it } from 'vitest';
import { decode, encode } from '../../src/durable/codec.js';
import { JournalCodecError } from '../../src/durable/codec-error.js';
import { JournalMismatchError } from '../../src/durable/journal-mismatch.js';
import { canonicalJson, EffectHasher, requestHash } from '../../src/durable/request-hash.js';

const request = {
  messages: Transcript.from([
    userMessage('add 1 and 2'),
    assistantMessage('', [{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }]),
  ]),
  tools: ['add', 'multiply'],
  settings: { temperature: 0.2, maxTokens: 100, seed: 7n },
};

describe('requestHash', () => {
  it('is a sha256 hex digest, the same for the same request regardless of key order', () => {
    const hash = requestHash(request);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const reordered = {
      settings: { seed: 7n, maxTokens: 100, temperature: 0.2 },
      tools: ['add', 'multiply'],
      messages: Transcript.from([
        userMessage('add 1 and 2'),
        {
          role: 'assistant',
          toolCalls: [{ arguments: { b: 2, a: 1 }, name: 'add', id: 'c1' }],
          content: '',
        },
      ] as const),
    };
    expect(requestHash(reordered)).toBe(hash);
    expect(canonicalJson({ b: 1, a: { d: 2, c: 3 } })).toBe('{"a":{"c":3,"d":2},"b":1}');
  });

  it('changes when any value changes, including array order and tagged values', () => {
    const hash = requestHash(request);
    const variants = [
      { ...request, tools: ['multiply', 'add'] },
      { ...request, settings: { ...request.settings, temperature: 0.3 } },
      { ...request, settings: { ...request.settings, seed: 8n } },
      { ...request, settings: { ...request.settings, seed: '7' } },
      { ...request, messages: request.messages.append(userMessage('more')) },
      { ...request, messages: request.messages.toArray() },
      {
        ...request,
        messages: Transcript.from([
          userMessage('add 1 and 2'),
          assistantMessage('', [{ id: 'c1', name: 'add', arguments: { a: 1, b: 3 } }]),
        ]),
      },
    ];
    const hashes = variants.map(requestHash);
    for (const other of hashes) expect(other).not.toBe(hash);
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  it('treats an undefined property as absent, but not an undefined array item', () => {
    expect(requestHash({ a: 1, format: undefined })).toBe(requestHash({ a: 1 }));
    expect(requestHash([1, undefined])).not.toBe(requestHash([1, null]));
    expect(requestHash([1, undefined])).not.toBe(requestHash([1]));
  });

  it('hashes the same after a journal round trip, and leaves error stacks out', () => {
    const journaled = decode(JSON.parse(JSON.stringify(encode(request))));
    expect(requestHash(journaled)).toBe(requestHash(request));
    const a = new ModelError('x', { status: 500 });
    const b = new ModelError('x', { status: 500 });
    expect(a.stack).not.toBe(b.stack);
    expect(requestHash({ e: a })).toBe(requestHash({ e: b }));
    expect(requestHash({ e: a })).not.toBe(
      requestHash({ e: new ModelError('x', { status: 501 }) }),
    );
  });

  it('is the same in another process', () => {
    const value = { z: [1, 2n, Number.NaN, { y: 'é', x: null }], a: new Date(0) };
    const script = `
      import { requestHash } from './src/durable/request-hash.ts';
      process.stdout.write(requestHash({ a: new Date(0), z: [1, 2n, NaN, { x: null, y: 'é' }] }));
    `;
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', '--conditions=statecraft-source', '--input-type=module', '-e', script],
      { encoding: 'utf8', cwd: process.cwd() },
    );
    expect(child.stderr).toBe('');
    expect(child.stdout).toBe(requestHash(value));
  });

  it('refuses what the codec refuses, naming the path', () => {
    try {
      requestHash({ tools: [{ execute: () => 1 }] });
      expect.unreachable();
    } catch (error) {
      if (!JournalCodecError.isInstance(error)) throw error;
      expect(error.path).toBe('$.tools[0].execute');
    }
  });
});

describe('JournalMismatchError', () => {
  it('names the entry and carries both hashes', () => {
    const expectedHash = requestHash(request);
    const actualHash = requestHash({ ...request, tools: [] });
    const error = new JournalMismatchError({
      entry: 12,
      expectedHash,
      actualHash,
      request: "tool call 'add' (c1)",
    });
    expect(JournalMismatchError.isInstance(error)).toBe(true);
    expect(error.code).toBe('JOURNAL_MISMATCH');
    expect(error.name).toBe('JournalMismatchError');
    expect(error).toMatchObject({ entry: 12, expectedHash, actualHash });
    expect(error.message).toContain('Journal entry 12');
    expect(error.message).toContain("tool call 'add' (c1)");
    expect(error.message).toContain(expectedHash.slice(0, 12));
    expect(error.message).toContain(actualHash.slice(0, 12));
  });
});

describe('EffectHasher', () => {
  const system = (text: string) => ({ role: 'system' as const, content: text });
  const user = (text: string) => ({ role: 'user' as const, content: text });
  const input = (messages: object[], iteration = 1) => ({
    messages: Transcript.from(messages as never),
    iteration,
  });

  it('hashes a growing transcript like a fresh hasher would (the hash of a resumed process)', () => {
    const running = new EffectHasher();
    const messages: object[] = [system('rules'), user('hi')];
    for (let step = 0; step < 6; step++) {
      // A new system message object every turn, as compileTurn makes it.
      const turn = [system('rules'), ...messages.slice(1)];
      expect(running.hash(input(turn, step))).toBe(new EffectHasher().hash(input(turn, step)));
      messages.push(assistantMessage(`answer ${step}`), user(`more ${step}`));
    }
  });

  it('tells apart transcripts that differ anywhere, in order, or in the other fields', () => {
    const hasher = new EffectHasher();
    const base = [system('rules'), user('a'), user('b')];
    const seen = new Set([
      hasher.hash(input(base)),
      hasher.hash(input([system('rules!'), user('a'), user('b')])),
      hasher.hash(input([system('rules'), user('x'), user('b')])),
      hasher.hash(input([system('rules'), user('b'), user('a')])),
      hasher.hash(input([system('rules'), user('a')])),
      hasher.hash(input(base, 2)),
    ]);
    expect(seen.size).toBe(6);
    expect(hasher.hash(input(base))).toBe(new EffectHasher().hash(input(base)));
  });
});
