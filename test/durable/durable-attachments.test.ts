// Attachments in a durable run's journal: the input's image and a tool's two screenshots of the
// same bytes go into the journal once (content-addressed, see RunJournal's AttachmentBytes),
// every other entry refers to them, and a run killed with SIGKILL (file store) or cut short
// (memory store) resumes with the same transcript, so the model is sent all three images.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { memoryStore } from '../../src/durable/stores/memory-store.js';
import {
  ATTACHMENT_INPUT,
  ATTACHMENT_RUN_ID,
  attachmentChain,
  attachmentModel,
  EXPECTED_ANSWER,
  IMAGE_BASE64,
} from './attachments-workload.js';
import { storeWithPrefix } from './helpers.js';

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
});
