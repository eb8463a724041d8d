// Attachments in a durable run's journal: the input's image and a tool's two screenshots of the
// same bytes go into the journal once (content-addressed, see RunJournal's AttachmentBytes),
// every other entry refers to them, and a run killed with SIGKILL (file store) or cut short
// (memory store) resumes with the same transcript, so the model is sent all three images.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { approvals, createChain, defineTool, type LanguageModel } from 'statecraft';
import type { JournalEntry } from 'statecraft/durable';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AttachmentBytes } from '../../src/durable/attachment-bytes.js';
import { encode } from '../../src/durable/codec.js';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import {
  ATTACHMENT_INPUT,
  ATTACHMENT_RUN_ID,
  attachmentChain,
  attachmentModel,
  EXPECTED_ANSWER,
  IMAGE,
  IMAGE_BASE64,
} from './attachments-workload.js';
import { storeWithPrefix, turnModel } from './helpers.js';

const CHILD = fileURLToPath(new URL('./attachments-child.ts', import.meta.url));

const occurrences = (text: string, part: string) => text.split(part).length - 1;

/** Every file under `dir`, concatenated. */
function filesText(dir: string): string {
  return readdirSync(dir)
    .map((name) => path.join(dir, name))
    .map((file) => (statSync(file).isDirectory() ? filesText(file) : readFileSync(file, 'utf8')))
    .join('\n');
}

const children = new Set<ChildProcess>();
const roots: string[] = [];
afterAll(() => {
  for (const child of children) child.kill('SIGKILL');
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

/** Runs the child; resolves with its stdout lines once `until` printed, or once it exits. */
function runChild(dir: string, mode: 'invoke' | 'resume', until?: string) {
  const child = spawn(
    process.execPath,
    ['--conditions=statecraft-source', '--import', 'tsx', CHILD, dir, mode],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  return {
    child,
    done: new Promise<string[]>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`child ${mode} timed out: ${stderr}`)),
        60_000,
      );
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        if (until && stdout.split('\n').includes(until)) {
          clearTimeout(timer);
          resolve(stdout.split('\n'));
        }
      });
      child.on('exit', (code) => {
        children.delete(child);
        clearTimeout(timer);
        if (code !== 0 && !until) reject(new Error(`child ${mode} ended with ${code}: ${stderr}`));
        resolve(stdout.split('\n'));
      });
    }),
  };
}

describe('attachments in a durable run', () => {
  it('file store: killed with SIGKILL at its last model call, resumed: the same answer, the bytes on disk once', async () => {
    const root = mkdtempSync(path.join(tmpdir(), 'statecraft-attachments-'));
    roots.push(root);
    const dir = path.join(root, 'journal');

    const first = runChild(dir, 'invoke', 'waiting');
    await first.done;
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    // Killed after both screenshots were journaled: the input's image and two tool results.
    const before = filesText(dir);
    expect(before).toContain('"type":"result"');
    expect(occurrences(before, IMAGE_BASE64)).toBe(1);

    const lines = await runChild(dir, 'resume').done;
    const output = lines.find((line) => line.startsWith('output '));
    expect(output, lines.join('\n')).toBeDefined();
    const { status, text, replayed } = JSON.parse((output as string).slice('output '.length));
    expect(status).toBe('succeeded');
    expect(text).toBe(EXPECTED_ANSWER);
    expect(replayed).toEqual([true, true, false]);
    const after = filesText(dir);
    expect(occurrences(after, IMAGE_BASE64)).toBe(1);
    expect(after.length).toBeLessThan(before.length + 3 * IMAGE_BASE64.length);
  }, 120_000);

  it('memory store: cut short during its last model call, resumed: the same answer, the bytes journaled once', async () => {
    const store = memoryStore();
    const full = await attachmentChain(attachmentModel()).invoke(ATTACHMENT_INPUT, {
      runId: ATTACHMENT_RUN_ID,
      store,
    });
    expect(full.text).toBe(EXPECTED_ANSWER);
    const entries = (await store.read(ATTACHMENT_RUN_ID)) ?? [];
    expect(occurrences(JSON.stringify(entries), IMAGE_BASE64)).toBe(1);
    // The same payload again is a reference: the start entry holds it, no attachment entry does.
    expect(entries.filter((entry) => entry.type === 'attachment')).toEqual([]);

    // A crash after the last model call's request was journaled, before its answer.
    const lastRequest = entries.findLastIndex(
      (entry) => entry.type === 'request' && entry.effect === 'callModel',
    );
    const cut = await storeWithPrefix(ATTACHMENT_RUN_ID, entries, lastRequest + 1);
    const resumed = await attachmentChain(attachmentModel()).resume(ATTACHMENT_RUN_ID, {
      store: cut,
    });
    expect(resumed.status).toBe('succeeded');
    expect(resumed.text).toBe(EXPECTED_ANSWER);
    expect(resumed.transcript).toEqual(full.transcript);
    const again = await cut.read(ATTACHMENT_RUN_ID);
    expect(occurrences(JSON.stringify(again), IMAGE_BASE64)).toBe(1);
  }, 60_000);

  it('resumes a journal written before attachments were journaled once (bytes inline in every entry)', async () => {
    const store = memoryStore();
    const full = await attachmentChain(attachmentModel()).invoke(ATTACHMENT_INPUT, {
      runId: ATTACHMENT_RUN_ID,
      store,
    });
    const entries = (await store.read(ATTACHMENT_RUN_ID)) ?? [];
    const old = inlined(entries);
    expect(occurrences(JSON.stringify(old), IMAGE_BASE64)).toBe(3);
    expect(JSON.stringify(old)).not.toContain('"$sc":"attachment"');
    const lastRequest = old.findLastIndex(
      (entry) => entry.type === 'request' && entry.effect === 'callModel',
    );
    const cut = await storeWithPrefix(ATTACHMENT_RUN_ID, old, lastRequest + 1);
    const resumed = await attachmentChain(attachmentModel()).resume(ATTACHMENT_RUN_ID, {
      store: cut,
    });
    expect(resumed.text).toBe(EXPECTED_ANSWER);
    expect(resumed.transcript).toEqual(full.transcript);
  });

  it('lists a waiting call whose arguments hold an attachment, its bytes read from the journal', async () => {
    const store = memoryStore();
    let listed: unknown;
    const upload = defineTool({
      name: 'upload',
      description: 'Uploads a file',
      input: z.object({ mediaType: z.string(), data: z.string(), name: z.string() }),
      needsApproval: true,
      execute: async ({ name }) => `uploaded ${name}`,
    });
    const model: LanguageModel = turnModel([
      { calls: [{ id: 'u1', name: 'upload', arguments: { ...IMAGE } }] },
      { text: 'uploaded' },
    ]);
    const result = await createChain({ model, tools: [upload] }).invoke(ATTACHMENT_INPUT, {
      runId: 'approve-attachment',
      store,
      approve: async () => {
        listed = await approvals(store).list('approve-attachment');
        return true;
      },
    });
    expect(result.text).toBe('uploaded');
    expect(listed).toMatchObject([{ callId: 'u1', tool: 'upload', arguments: { ...IMAGE } }]);
    const entries = (await store.read('approve-attachment')) ?? [];
    expect(occurrences(JSON.stringify(entries), IMAGE_BASE64)).toBe(1);
  });
});

/** `entries` as a journal of the first attachments release held them: bytes inline everywhere. */
function inlined(entries: readonly JournalEntry[]): JournalEntry[] {
  const bytes = AttachmentBytes.of(entries);
  const again = (json: unknown) => encode(bytes.decode(json));
  return entries.flatMap((entry): JournalEntry[] => {
    switch (entry.type) {
      case 'attachment':
        return [];
      case 'start': {
        const { attachments: _bytes, ...start } = entry;
        return [{ ...start, input: again(entry.input) }];
      }
      case 'result':
        return [{ ...entry, result: again(entry.result) }];
      case 'answer':
        return [{ ...entry, event: again(entry.event) }];
      case 'approval':
        return [{ ...entry, arguments: again(entry.arguments) }];
      default:
        return [entry];
    }
  });
}
