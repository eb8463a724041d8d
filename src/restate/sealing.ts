import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Credential } from './credential.js';

// What Restate keeps of a run on a deployment with a secret is sealed with it (AES-256-GCM):
// its journal entries, its input and its outcome. Restate's admin API reads every state value
// and journal payload with SQL, and its ingress hands any caller a workflow's output (attach):
// sealed, they show neither a tool's result nor the model's answer to anyone without the
// secret, and cannot be altered or moved to another run (the run id is authenticated with them).
//
// A journal line keeps beside its sealed text the few fields the journal object acts on (its
// type, a start's kind and time, an end's status, an approval's call id and time): timings and
// names, never content.

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The field of a sealed journal line that holds the sealed entry. */
const SEALED = '$sealed';

/** What a sealed text is: a journal entry, a run's input, a run's outcome. */
export type SealedKind = 'line' | 'input' | 'outcome';

/** Opening failed: no secret to open it with (`missing`), or another secret sealed it (`mismatch`). */
export type Unopened = { readonly ok: false; readonly reason: 'missing' | 'mismatch' };

export function seal(
  credential: Credential,
  kind: SealedKind,
  runId: string,
  text: string,
): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', credential.sealingKey, iv);
  cipher.setAAD(Buffer.from(`statecraft ${kind} ${runId}`));
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return `${VERSION}.${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
}

export function unseal(
  credential: Credential | undefined,
  kind: SealedKind,
  runId: string,
  sealed: string,
): { readonly ok: true; readonly text: string } | Unopened {
  if (credential === undefined) return { ok: false, reason: 'missing' };
  const bytes = sealed.startsWith(`${VERSION}.`)
    ? Buffer.from(sealed.slice(VERSION.length + 1), 'base64url')
    : Buffer.alloc(0);
  if (bytes.length < IV_BYTES + TAG_BYTES) return { ok: false, reason: 'mismatch' };
  // The current secret first: while one replaces another, older texts open with the old one.
  for (const key of credential.openingKeys) {
    const text = opened(key, bytes, `statecraft ${kind} ${runId}`);
    if (text !== undefined) return { ok: true, text };
  }
  return { ok: false, reason: 'mismatch' };
}

function opened(key: Buffer, bytes: Buffer, additional: string): string | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(additional));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)),
      decipher.final(),
    ]).toString('utf8');
  } catch {
    return undefined;
  }
}

/** The fields of an entry the journal object reads, by entry type (see journal-object.ts). */
const OPEN_FIELDS: Readonly<Record<string, readonly string[]>> = {
  start: ['kind', 'startedAt'],
  end: ['status'],
  approval: ['callId', 'at'],
  decision: ['callId', 'requestedAt'],
};

/** The journal line to keep for `entry` (whose JSON is `line`): sealed but for OPEN_FIELDS. */
export function sealLine(
  credential: Credential,
  runId: string,
  entry: { readonly type: string; readonly [field: string]: unknown },
  line: string,
): string {
  const open: Record<string, unknown> = { type: entry.type };
  for (const field of OPEN_FIELDS[entry.type] ?? []) {
    if (entry[field] !== undefined) open[field] = entry[field];
  }
  open[SEALED] = seal(credential, 'line', runId, line);
  return JSON.stringify(open);
}

/** The entry a kept line holds: opened when sealed, as it is otherwise (an open deployment's). */
export function openLine(
  credential: Credential | undefined,
  runId: string,
  line: string,
): { readonly ok: true; readonly entry: unknown } | Unopened {
  const kept = JSON.parse(line) as Record<string, unknown>;
  const sealed = kept[SEALED];
  if (typeof sealed !== 'string') return { ok: true, entry: kept };
  const opened = unseal(credential, 'line', runId, sealed);
  return opened.ok ? { ok: true, entry: JSON.parse(opened.text) } : opened;
}
